import { parseResources } from "../api/quantities.ts";
import { API_VERSION } from "../api/v1alpha1/kind.ts";
import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import { ApiError } from "../runtime/errors.ts";
import { allowed, pickNamespace } from "./access.ts";
import type { Ctx, FastifyInstance } from "./context.ts";
import { deployPrices, platformPage } from "./platform-page.ts";
import { type Session, viewerApi } from "./sessions.ts";
import { followShared, sharedList } from "./shared-read.ts";
import { openEventStream } from "./sse.ts";
import { apiErrorsByField } from "./task-model.ts";
import { renderFragment } from "./views/html.ts";
import { PLATFORMS_PATH } from "./views/layout.ts";
import { customUpgradeProblem } from "./views/platform-manage.ts";
import {
  CREDENTIAL_ROWS,
  customFiguresOf,
  type DeployForm,
  DeployPage,
  EMPTY_DEPLOY_FORM,
  PlatformCards,
  PlatformsPage,
  Steps,
} from "./views/platforms.ts";

type Q = Record<string, string | undefined>;

const str = (v: unknown) => (typeof v === "string" ? v.trim() : "");

/** Form field of an API error path on a ScalePlatform. */
function platformField(path: string): string {
  if (path.startsWith("metadata.name")) return "name";
  if (path.startsWith("spec.domains")) return "domain";
  if (path.startsWith("spec.store.name")) return "storeName";
  if (path.startsWith("spec.store")) return "contactEmail";
  if (path.startsWith("spec.resources.cpu")) return "cpu";
  if (path.startsWith("spec.resources.memory")) return "memory";
  if (path.startsWith("spec.resources.storage")) return "storage";
  return "";
}

/** Routes of /dashboard/compute/platforms/scale. Every Kubernetes call uses the viewer's token. */
export function registerPlatformRoutes(app: FastifyInstance, ctx: Ctx): void {
  // Admin credentials on request: a POST (CSRF), read from the generated Secret as the viewer,
  // logged without the values; the page is never cached (Cache-Control: no-store on every page).
  app.post(`${PLATFORMS_PATH}/:ns/:name/credentials`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as { ns: string; name: string };
    try {
      const platform = await viewerApi(s).getPlatform(ns, name);
      const secretName = platform.status?.credentialsSecretName;
      if (!secretName) throw new ApiError(404, "NotFound", `platform ${name} has no credentials yet`);
      const secret = await viewerApi(s).getSecret(ns, secretName);
      const revealed = Object.fromEntries(
        CREDENTIAL_ROWS.map(([key]) => [
          key,
          Buffer.from(secret.data?.[key] ?? "", "base64").toString("utf8"),
        ]),
      );
      req.log.info(
        { user: s.user?.username, namespace: ns, platform: name },
        "platform credentials revealed",
      );
      return await platformPage(ctx, reply, s, ns, name, { revealed });
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });

  for (const [action, stopped] of [
    ["stop", true],
    ["start", false],
  ] as const) {
    app.post(`${PLATFORMS_PATH}/:ns/:name/${action}`, async (req, reply) => {
      const s = req.session as Session;
      const { ns, name } = req.params as { ns: string; name: string };
      try {
        await viewerApi(s).patchPlatform(ns, name, { spec: { stopped } });
        req.log.info(
          { user: s.user?.username, namespace: ns, platform: name, stopped },
          "platform stop/start",
        );
        s.flash = stopped ? "Stopping: the app scales to zero, data is kept." : "Starting.";
        return reply.redirect(
          `${PLATFORMS_PATH}/deploy?namespace=${encodeURIComponent(ns)}&name=${encodeURIComponent(name)}`,
          303,
        );
      } catch (err) {
        return ctx.fail(reply, s, err);
      }
    });
  }

  // A change to the platform as the viewer; the API server's refusal (CEL: no downgrade, bad
  // webhook URL, ...) is shown on the platform page.
  const change = (
    path: string,
    patchOf: (p: ScalePlatform, body: Record<string, unknown>) => unknown,
    done: string,
  ) =>
    app.post(`${PLATFORMS_PATH}/:ns/:name/${path}`, async (req, reply) => {
      const s = req.session as Session;
      const { ns, name } = req.params as { ns: string; name: string };
      try {
        const current = await viewerApi(s).getPlatform(ns, name);
        await viewerApi(s).patchPlatform(ns, name, patchOf(current, req.body as Record<string, unknown>));
        req.log.info(
          { user: s.user?.username, namespace: ns, platform: name, change: path },
          "platform changed",
        );
        s.flash = done;
        return reply.redirect(
          `${PLATFORMS_PATH}/deploy?namespace=${encodeURIComponent(ns)}&name=${encodeURIComponent(name)}`,
          303,
        );
      } catch (err) {
        if (err instanceof ApiError && [400, 409, 422].includes(err.statusCode)) {
          const message = (err.body as { message?: string } | undefined)?.message ?? err.message;
          return platformPage(ctx, reply, s, ns, name, { problem: message, status: err.statusCode });
        }
        return ctx.fail(reply, s, err);
      }
    });
  change(
    "upgrade",
    (p, body) => {
      const plan = str(body.plan);
      if (plan !== "Custom") return { spec: { plan } };
      // Custom: the resources typed in, each above the current plan's (the API server refuses
      // only a lower one; an upgrade that raises nothing is refused here, naming the resource).
      const r = { cpu: str(body.cpu), memory: str(body.memory), storage: str(body.storage) };
      const figures = customFiguresOf({ ...EMPTY_DEPLOY_FORM, ...r }, parseResources);
      if (!figures)
        throw new ApiError(
          422,
          "Invalid",
          "A Custom upgrade needs vCPU, memory and storage as quantities (e.g. 24, 48Gi, 1Ti).",
        );
      const problem = customUpgradeProblem(p, figures);
      if (problem) throw new ApiError(422, "Invalid", problem);
      return { spec: { plan, resources: r } };
    },
    "Upgrade requested.",
  );

  app.get(PLATFORMS_PATH, async (req, reply) => {
    const s = req.session as Session;
    try {
      const { ns, all } = await pickNamespace(
        s,
        ctx.opts.namespaces ?? [],
        (req.query as Q).namespace,
        "scaleplatforms",
      );
      const lists = ctx.opts.platformLists;
      const [shared, canCreate] = await Promise.all([
        sharedList(s, lists?.platforms, "scaleplatforms", ns),
        allowed(s, "create", "scaleplatforms", ns),
      ]);
      const platforms = shared ?? sortByName(await viewerApi(s).listPlatforms(ns));
      // Cached: the cards follow the shared list live (events below); else a reload shows changes.
      const liveHref = shared && `${PLATFORMS_PATH}/events?namespace=${encodeURIComponent(ns)}`;
      return ctx.page(
        reply,
        s,
        "Platforms",
        PlatformsPage({ namespace: ns, namespaces: all, platforms, canCreate, liveHref }),
      );
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });

  // Server-Sent Events of the platforms page: the cards, rendered from the shared list after each
  // burst of changes in the namespace, while the viewer may still list platforms there.
  app.get(`${PLATFORMS_PATH}/events`, async (req, reply) => {
    const s = req.session as Session;
    const ns = (req.query as Q).namespace ?? "";
    const cache = ctx.opts.platformLists?.platforms;
    try {
      if (!(await sharedList(s, cache, "scaleplatforms", ns)))
        return reply.code(404).type("text/plain").send("this namespace's platforms are not followed live");
    } catch (err) {
      return reply.code(err instanceof ApiError ? err.statusCode : 500).send();
    }
    const stream = openEventStream(req, reply);
    await followShared(cache, ns, stream.signal, async () => {
      try {
        const platforms = (await sharedList(s, cache, "scaleplatforms", ns)) ?? [];
        if (!stream.signal.aborted) stream.send("platforms", renderFragment(PlatformCards({ platforms })));
      } catch (err) {
        stream.fail(err);
      }
    });
    stream.end();
  });

  // The deploy page; with ?name= of a launched platform, its live progress (same URL on reload).
  app.get(`${PLATFORMS_PATH}/deploy`, async (req, reply) => {
    const s = req.session as Session;
    const { namespace, name } = req.query as Q;
    try {
      const { ns } = await pickNamespace(s, ctx.opts.namespaces ?? [], namespace, "scaleplatforms");
      if (name) return await platformPage(ctx, reply, s, ns, name);
      return ctx.page(
        reply,
        s,
        "Deploy",
        DeployPage({
          session: s,
          namespace: ns,
          form: EMPTY_DEPLOY_FORM,
          errors: {},
          general: [],
          prices: deployPrices(ctx),
        }),
      );
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });

  app.post(`${PLATFORMS_PATH}/deploy`, async (req, reply) => {
    const s = req.session as Session;
    const ns = (req.query as Q).namespace ?? "default";
    const body = req.body as Record<string, unknown>;
    const form: DeployForm = {
      name: str(body.name),
      plan: str(body.plan) || "Standard",
      domain: str(body.domain),
      storeName: str(body.storeName),
      contactEmail: str(body.contactEmail),
      cpu: str(body.cpu),
      memory: str(body.memory),
      storage: str(body.storage),
    };
    const custom = form.plan === "Custom" ? customFiguresOf(form, parseResources) : undefined;
    const page = (errors: Record<string, string[]>, general: string[], status: number) =>
      ctx.page(
        reply,
        s,
        "Deploy",
        DeployPage({ session: s, namespace: ns, form, errors, general, prices: deployPrices(ctx), custom }),
        status,
      );
    if (body.intent !== "launch") return page({}, [], 200);
    const spec: Record<string, unknown> = { plan: form.plan, domains: { platform: form.domain } };
    if (form.storeName || form.contactEmail)
      spec.store = { name: form.storeName, contactEmail: form.contactEmail };
    // The Custom plan's resources as typed: the API server checks them (quantities, required).
    if (form.plan === "Custom")
      spec.resources = { cpu: form.cpu, memory: form.memory, storage: form.storage };
    const platform = {
      apiVersion: API_VERSION,
      kind: "ScalePlatform",
      metadata: { name: form.name, namespace: ns },
      spec,
    };
    try {
      await viewerApi(s).createPlatform(platform, true);
      await viewerApi(s).createPlatform(platform, false);
      req.log.info({ user: s.user?.username, namespace: ns, platform: form.name }, "platform launched");
      return reply.redirect(
        `${PLATFORMS_PATH}/deploy?namespace=${encodeURIComponent(ns)}&name=${encodeURIComponent(form.name)}`,
        303,
      );
    } catch (err) {
      if (err instanceof ApiError && [400, 403, 409, 422].includes(err.statusCode)) {
        const { fields, general } = apiErrorsByField(err, platformField);
        return page(fields, general, err.statusCode);
      }
      return ctx.fail(reply, s, err);
    }
  });

  // Server-Sent Events: the steps, rendered, each time the platform changes: from the shared list
  // when the namespace is cached (while the viewer may watch platforms there), else from a watch
  // made as the viewer.
  app.get(`${PLATFORMS_PATH}/:ns/:name/events`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as { ns: string; name: string };
    const cache = ctx.opts.platformLists?.platforms;
    const stream = openEventStream(req, reply);
    const { send } = stream;
    let sent: string | undefined;
    const fromCache = async () => {
      try {
        const p = (await sharedList(s, cache, "scaleplatforms", ns, "watch"))?.find(
          (x) => x.metadata.name === name,
        );
        if (!p || p.metadata.resourceVersion === sent || stream.signal.aborted) return;
        sent = p.metadata.resourceVersion;
        send("steps", renderFragment(Steps({ platform: p })));
      } catch (err) {
        stream.fail(err);
      }
    };
    try {
      if (!(await followShared(cache, ns, stream.signal, fromCache, 0)))
        await viewerApi(s).watchPlatform(
          ns,
          name,
          (p) => send("steps", renderFragment(Steps({ platform: p }))),
          stream.signal,
        );
    } catch (err) {
      send("error", err instanceof ApiError ? `${err.statusCode}` : "error");
    } finally {
      stream.end();
    }
  });
}

const sortByName = (xs: ScalePlatform[]) =>
  xs.sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
