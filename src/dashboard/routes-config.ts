import { ApiError } from "../runtime/errors.ts";
import {
  applyOf,
  configFieldOf,
  configGroup,
  conflictsOf,
  fieldManager,
  formFromBody,
} from "./config-model.ts";
import type { Ctx, FastifyInstance } from "./context.ts";
import { platformPage } from "./platform-page.ts";
import { type Session, viewerApi } from "./sessions.ts";
import { openEventStream } from "./sse.ts";
import { apiErrorsByField } from "./task-model.ts";
import { renderFragment } from "./views/html.ts";
import { PLATFORMS_PATH, platformHref } from "./views/layout.ts";
import { type ConfigState, ConfigStatus } from "./views/platform-config.ts";

// Saving a configuration group: a server-side apply, as the viewer, of that group's fields only,
// under the group's field manager (`cronscale-dashboard-<group>`). First a dry run (dryRun=All,
// fieldValidation=Strict, forced so that only validation can refuse it), so the API server's
// schema and CEL messages go beside their fields and nothing is saved. The apply is not forced: a field another manager (kubectl apply, the creator
// of the platform) set to a different value is refused with a 409 naming that manager, shown
// beside the field with a "Save anyway" button that repeats the apply with force=true, the same
// choice `kubectl apply --server-side --force-conflicts` offers. Values the viewer did not change
// do not conflict (an equal value only adds the dashboard as a co-manager).

type Params = { ns: string; name: string; group: string };

export function registerConfigRoutes(app: FastifyInstance, ctx: Ctx): void {
  app.post(`${PLATFORMS_PATH}/:ns/:name/config/:group`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name, group } = req.params as Params;
    const g = configGroup(group);
    if (!g) return ctx.fail(reply, s, new ApiError(404, "NotFound", `no configuration group ${group}`));
    const body = req.body as Record<string, unknown>;
    const form = formFromBody(g, body);
    const force = body.force === "true";
    const again = (state: Omit<ConfigState, "group" | "form">, status: number) =>
      platformPage(ctx, reply, s, ns, name, { status, config: { group: g.id, form, ...state } });
    try {
      const config = applyOf(g, await viewerApi(s).getPlatform(ns, name), form);
      // The dry run is forced: the API server checks conflicts before validation, and an invalid
      // value must be named as such, not as a conflict that "Save anyway" would then refuse.
      await viewerApi(s).applyPlatform(config, { manager: fieldManager(g), force: true, dryRun: true });
      const saved = await viewerApi(s).applyPlatform(config, {
        manager: fieldManager(g),
        force,
        dryRun: false,
      });
      req.log.info(
        { user: s.user?.username, namespace: ns, platform: name, group: g.id, force },
        "platform configuration applied",
      );
      s.flash = `${g.title} saved (generation ${saved.metadata.generation}). Whether the operator has taken it up shows under Configuration.`;
      return reply.redirect(`${platformHref(ns, name)}#configuration`, 303);
    } catch (err) {
      const conflict = conflictsOf(g, err);
      if (conflict) return again({ errors: conflict.fields, general: conflict.general, conflict: true }, 409);
      if (err instanceof ApiError && [400, 409, 422].includes(err.statusCode)) {
        const { fields, general } = apiErrorsByField(err, (path) => configFieldOf(g, path));
        return again({ errors: fields, general, conflict: false }, err.statusCode);
      }
      return ctx.fail(reply, s, err);
    }
  });

  // Server-Sent Events: whether the operator has taken up the spec, each time the platform changes
  // (a watch as the viewer).
  app.get(`${PLATFORMS_PATH}/:ns/:name/config/events`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as Params;
    const stream = openEventStream(req, reply);
    try {
      await viewerApi(s).watchPlatform(
        ns,
        name,
        (p) => stream.send("configuration", renderFragment(ConfigStatus({ platform: p }))),
        stream.signal,
      );
    } catch (err) {
      stream.send("error", err instanceof ApiError ? `${err.statusCode}` : "error");
    } finally {
      stream.end();
    }
  });
}
