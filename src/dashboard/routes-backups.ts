import { API_VERSION } from "../api/v1alpha1/kind.ts";
import { ApiError } from "../runtime/errors.ts";
import { allowed } from "./access.ts";
import { backupsPage, manualBackups } from "./backups-page.ts";
import type { Ctx, FastifyInstance } from "./context.ts";
import { type Session, viewerApi } from "./sessions.ts";
import { followShared, livePlatform } from "./shared-read.ts";
import { openEventStream } from "./sse.ts";
import { renderFragment } from "./views/html.ts";
import { backupsHref, PLATFORMS_PATH } from "./views/layout.ts";
import { ManualBackups } from "./views/platform-backups.ts";

// A platform's backups: the page, Back up now (creates a ScalePlatformBackup as the viewer),
// Cancel (deletes a running one: the operator deletes its Job, whose runner stops pgBackRest),
// and the on-demand backups' progress over Server-Sent Events (a watch made as the viewer). The
// Recovery section's routes are in routes-restore.ts.

type Params = { ns: string; name: string };
const ROUTE = `${PLATFORMS_PATH}/:ns/:name/backups`;

export function registerBackupRoutes(app: FastifyInstance, ctx: Ctx): void {
  const refused = (err: unknown) =>
    err instanceof ApiError && [400, 403, 404, 409, 422].includes(err.statusCode)
      ? ((err.body as { message?: string } | undefined)?.message ?? err.message)
      : undefined;

  app.get(ROUTE, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as Params;
    try {
      return await backupsPage(ctx, reply, s, ns, name);
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });

  // Back up now: a ScalePlatformBackup named by the API server (generateName), so two clicks are
  // two backups rather than a conflict; the operator runs at most one at a time per platform.
  app.post(ROUTE, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as Params;
    const type = (req.body as Record<string, unknown>).type === "incr" ? "incr" : "full";
    try {
      const created = await viewerApi(s).createPlatformBackup({
        apiVersion: API_VERSION,
        kind: "ScalePlatformBackup",
        metadata: { generateName: `${name}-manual-`, namespace: ns },
        spec: { platformName: name, type },
      });
      req.log.info(
        { user: s.user?.username, namespace: ns, platform: name, backup: created.metadata.name, type },
        "platform backup requested",
      );
      s.flash = `Backup ${created.metadata.name} requested (${type === "full" ? "full" : "incremental"}).`;
      return reply.redirect(backupsHref(ns, name), 303);
    } catch (err) {
      const message = refused(err);
      if (message && err instanceof ApiError)
        return backupsPage(ctx, reply, s, ns, name, { problem: message, status: err.statusCode });
      return ctx.fail(reply, s, err);
    }
  });

  app.post(`${ROUTE}/:backup/cancel`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name, backup } = req.params as Params & { backup: string };
    try {
      await viewerApi(s).deletePlatformBackup(ns, backup);
      req.log.info(
        { user: s.user?.username, namespace: ns, platform: name, backup },
        "platform backup cancelled",
      );
      s.flash = `Backup ${backup} cancelled.`;
      return reply.redirect(backupsHref(ns, name), 303);
    } catch (err) {
      const message = refused(err);
      if (message && err instanceof ApiError)
        return backupsPage(ctx, reply, s, ns, name, { problem: message, status: err.statusCode });
      return ctx.fail(reply, s, err);
    }
  });

  // Server-Sent Events: the on-demand backups, rendered, after each change in the namespace: from
  // the shared lists when the namespace is cached, else after each event of a watch as the viewer.
  app.get(`${ROUTE}/events`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as Params;
    const stream = openEventStream(req, reply);
    const { send } = stream;
    const lists = ctx.opts.platformLists;
    // Changes come in bursts (status writes of a running backup): one render per 200 ms at most.
    let timer: NodeJS.Timeout | undefined;
    const render = async () => {
      timer = undefined;
      try {
        const [platform, backups, cancel] = await Promise.all([
          livePlatform(s, lists, ns, name),
          manualBackups(ctx, s, ns, name),
          allowed(s, "delete", "scaleplatformbackups", ns),
        ]);
        if (!stream.signal.aborted)
          send(
            "backups",
            renderFragment(ManualBackups({ platform, backups, session: s, canCancel: cancel })),
          );
      } catch (err) {
        stream.fail(err);
      }
    };
    try {
      if (!(await followShared(lists?.backups, ns, stream.signal, render)))
        await viewerApi(s).watchPlatformBackups(
          ns,
          () => {
            timer ??= setTimeout(render, 200);
          },
          stream.signal,
        );
    } catch (err) {
      send("error", err instanceof ApiError ? `${err.statusCode}` : "error");
    } finally {
      clearTimeout(timer);
      stream.end();
    }
  });
}
