import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance } from "fastify";
import {
  createJsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from "fastify-type-provider-zod";
import { sql } from "kysely";
import client from "prom-client";
import { adminRoutes } from "./admin/index.ts";
import { Authenticator, requireScope } from "./auth/authenticate.ts";
import { TokenService } from "./auth/tokens.ts";
import { ProductCache } from "./cache/products.ts";
import type { Config } from "./config.ts";
import type { DB } from "./db/database.ts";
import { installGraphql, newInternalToken } from "./graphql/index.ts";
import { installHealth } from "./http/health.ts";
import { installIdempotency } from "./http/idempotency.ts";
import { installMetrics } from "./http/metrics.ts";
import { installProblemHandlers, Problem, sendProblem } from "./http/problem.ts";
import { RateLimiter, ratePerMinute } from "./http/ratelimit.ts";
import { apiRoutes } from "./routes/index.ts";
import { oauthRoutes } from "./routes/oauth.ts";
import { paymentEventRoutes } from "./routes/payment-events.ts";
import type { ProductOut } from "./routes/product-model.ts";
import { storeFrontend } from "./store/index.ts";
import { Outbox } from "./webhooks/outbox.ts";
import { WebhookWorker } from "./webhooks/worker.ts";

// The HTTP server: operations endpoints on every host, the API (/api/v1, /oauth, JWKS) for the API
// host. Wiring only; each part lives in its own module.

export interface AppDeps {
  config: Config;
  db: DB;
  /** Logger settings (tests pass false). */
  logger?: boolean | object;
  /** How often an idle webhook worker polls (seconds). */
  webhookPollSeconds?: number;
}

export interface App {
  app: FastifyInstance;
  tokens: TokenService;
  limiter: RateLimiter;
  outbox: Outbox;
  /** The webhook delivery worker (started by the caller: `webhooks.start(outbox)`). */
  webhooks: WebhookWorker;
}

export async function buildApp({ config, db, logger, webhookPollSeconds }: AppDeps): Promise<App> {
  const app = Fastify({
    logger: logger ?? { level: config.COMMERCE_LOG_LEVEL, redact: ["req.headers.authorization"] },
    // Behind the Ingress controller: the client address and scheme come from X-Forwarded-*.
    trustProxy: true,
    bodyLimit: 1024 * 1024,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installProblemHandlers(app);
  const metrics = installMetrics(app);

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: { title: "Commerce platform API", version: "1.0.0" },
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
      security: [{ bearer: [] }],
    },
    // The GraphQL endpoint is described by its own schema, not OpenAPI.
    transform: createJsonSchemaTransform({ skipList: ["/graphql"] }),
    hideUntagged: true,
  });

  new client.Gauge({
    name: "commerce_database_size_bytes",
    help: "Size of the platform's database.",
    registers: [metrics.registry],
    collect: async function (this: client.Gauge) {
      const r = await sql<{ n: number }>`select pg_database_size(current_database())::bigint as n`.execute(
        db,
      );
      this.set(r.rows[0]?.n ?? 0);
    },
  });
  const outbox = new Outbox(config.CONFIG_WEBHOOKS ?? []);
  const cache = new ProductCache<ProductOut>(config.databaseUrl, metrics.registry);
  await cache.start();
  app.addHook("onClose", () => cache.stop());
  const webhooks = new WebhookWorker(db, config, {
    registry: metrics.registry,
    pollingIntervalSeconds: webhookPollSeconds,
  });
  const tokens = new TokenService(db, config.issuer);
  await tokens.init();
  const auth = new Authenticator(db, tokens, config.API_KEY, {
    databaseUrl: config.databaseUrl,
    registry: metrics.registry,
  });
  await auth.start();
  app.addHook("onClose", () => auth.stop());
  const internalToken = newInternalToken();
  const limiter = new RateLimiter(
    db,
    ratePerMinute(config.PLATFORM_PLAN, config.COMMERCE_RATE_LIMIT_PER_MINUTE),
    internalToken,
  );
  app.addHook("onClose", () => limiter.stop());

  // The API belongs to the API host: on the store and admin hosts it does not exist. Requests to
  // other names (the pod address, a port-forward) are served, so probes and scrapes work.
  const publicHosts = new Set([config.hosts.platform, config.hosts.admin].filter(Boolean));
  const onApiHost = async (req: { hostname: string }) => {
    const host = req.hostname.replace(/:\d+$/, "").toLowerCase();
    if (publicHosts.has(host) && host !== config.hosts.api) {
      throw new Problem(
        404,
        "not-found",
        "Not found",
        `the API is served on ${config.hosts.api ?? "the API host"}`,
      );
    }
  };

  installHealth(app, {
    db,
    metrics,
    internalOnly: [config.hosts.platform, config.hosts.admin, config.hosts.api],
  });
  await app.register(async (scope) => {
    scope.addHook("onRequest", onApiHost);
    await oauthRoutes(scope.withTypeProvider<ZodTypeProvider>(), { db, tokens });
  });
  await app.register(async (scope) => {
    scope.addHook("onRequest", onApiHost);
    await paymentEventRoutes(scope, { db, config, outbox });
  });
  await app.register(
    async (api) => {
      api.addHook("onRequest", onApiHost);
      api.addHook("onRequest", auth.hook);
      api.addHook("onRequest", limiter.hook);
      api.addHook("onRequest", requireScope);
      installIdempotency(api, db, config.COMMERCE_REQUEST_TIME_LIMIT_SECONDS);
      await apiRoutes(api.withTypeProvider<ZodTypeProvider>(), { db, config, outbox, cache, keys: auth });
    },
    { prefix: "/api/v1" },
  );
  await app.register(async (gql) => {
    // mercurius answers errors of its routes itself (as GraphQL errors): a refused credential is
    // answered here, as the same 401 problem as REST.
    gql.addHook("onRequest", async (req, reply) => {
      try {
        await onApiHost(req);
        await auth.hook(req, reply);
      } catch (err) {
        if (err instanceof Problem) return sendProblem(reply, err);
        throw err;
      }
    });
    // mercurius declares its routes in JSON Schema, not zod; GraphQL validates its own input.
    gql.setValidatorCompiler(() => () => true);
    gql.setSerializerCompiler(() => (data) => JSON.stringify(data));
    await installGraphql(gql, { db, limiter, internalToken });
  });
  await storeFrontend(app, { db, config, outbox });
  app.get("/api/v1/openapi.json", { onRequest: onApiHost }, async () => app.swagger());
  await app.register(adminRoutes, { db, config, auth, internalToken });
  return { app, tokens, limiter, outbox, webhooks };
}
