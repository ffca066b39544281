import cookie from "@fastify/cookie";
import csrf from "@fastify/csrf-protection";
import formbody from "@fastify/formbody";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { cartCount } from "./cart.ts";
import type { Store, StoreDeps } from "./context.ts";
import { localeOf } from "./locale.ts";
import { accountRoutes } from "./routes-account.ts";
import { cartRoutes } from "./routes-cart.ts";
import { catalogRoutes } from "./routes-catalog.ts";
import { loadSession, type StoreSession } from "./session.ts";
import { renderPage } from "./views/html.ts";
import { ErrorBody, Layout, type PageCtx } from "./views/layout.ts";
import { CSS, CSS_PATH } from "./views/style.ts";

// The store frontend on the platform host: server-rendered pages (no client script at all, so a
// CSP of script-src 'none'), forms with CSRF tokens, sessions and carts in PostgreSQL. Its cookie,
// form and CSRF plugins live in this scope only; the API beside it is untouched.

const CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "script-src 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

/** Matches a Host header of `host`, with any port. */
const hostPattern = (host: string) =>
  new RegExp(`^${host.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(:\\d+)?$`, "i");

export async function storeFrontend(app: FastifyInstance, deps: StoreDeps): Promise<void> {
  await app.register(async (scope) => {
    // On the platform host only, when it is known (without PLATFORM_URL, e.g. a port-forward, on any).
    const platform = deps.config.hosts.platform;
    if (platform) {
      const host = hostPattern(platform);
      scope.addHook("onRoute", (r) => {
        r.constraints = { ...r.constraints, host };
      });
    }
    await scope.register(cookie);
    await scope.register(formbody, { bodyLimit: 64 * 1024 });
    await scope.register(csrf, {
      cookieKey: "store_csrf",
      cookieOpts: { path: "/", httpOnly: true, secure: true, sameSite: "lax", signed: false },
      getToken: (req) => (req.body as { _csrf?: string } | undefined)?._csrf,
    });
    const sessions = new WeakMap<FastifyRequest, StoreSession | undefined>();
    const loc = localeOf(deps.config);
    const store: Store = {
      ...deps,
      loc,
      session: (req) => sessions.get(req),
      setSession: (req, s) => sessions.set(req, s),
      page: async (req, reply, title, body, opts = {}) => {
        const s = sessions.get(req);
        const customer = s?.customerId
          ? await deps.db
              .selectFrom("customers")
              .select("name")
              .where("id", "=", s.customerId)
              .executeTakeFirst()
          : undefined;
        const ctx: PageCtx = {
          loc,
          csrf: reply.generateCsrf(),
          customer: customer?.name,
          cartCount: s ? await cartCount(deps.db, s.id) : 0,
          css: CSS_PATH,
        };
        reply
          .code(opts.status ?? 200)
          .header("content-type", "text/html; charset=utf-8")
          .header("cache-control", "no-store")
          .send(renderPage(Layout({ ctx, title, q: opts.q, children: body(ctx) })));
      },
    };

    scope.addHook("onRequest", async (req) => {
      if (req.url.startsWith("/assets/")) return;
      sessions.set(req, await loadSession(deps.db, req));
    });
    scope.addHook("preHandler", (req, reply, done) => {
      if (req.method === "POST") scope.csrfProtection(req, reply, done);
      else done();
    });
    scope.addHook("onSend", async (_req, reply) => {
      reply.header("content-security-policy", CSP);
      reply.header("x-content-type-options", "nosniff");
      reply.header("referrer-policy", "same-origin");
    });
    scope.setErrorHandler(async (err: { statusCode?: number; code?: string }, req, reply) => {
      const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
      if (status === 500) req.log.error({ err }, "store page failed");
      const message =
        err.code === "FST_CSRF_INVALID_TOKEN" || err.code === "FST_CSRF_MISSING_SECRET"
          ? loc.t.formExpired
          : status === 500
            ? loc.t.pageFailed
            : loc.t.requestFailed;
      return store.page(req, reply, loc.t.error, () => ErrorBody({ loc, status, message }), { status });
    });

    scope.get(CSS_PATH, async (_req, reply) =>
      reply
        .header("content-type", "text/css; charset=utf-8")
        .header("cache-control", "public, max-age=31536000, immutable")
        .send(CSS),
    );
    await catalogRoutes(scope, store);
    await cartRoutes(scope, store);
    await accountRoutes(scope, store);
  });
}
