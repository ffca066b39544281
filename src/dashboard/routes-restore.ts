import { ApiError } from "../runtime/errors.ts";
import { allRestores, backupsPage, recoveryData } from "./backups-page.ts";
import type { Ctx, FastifyInstance } from "./context.ts";
import {
  type RestoreErrors,
  type RestoreForm,
  restoreFieldOf,
  restoreFromForm,
  restoresOf,
  wallToInstant,
  zoneOf,
} from "./restore-model.ts";
import { type Session, viewerApi } from "./sessions.ts";
import { followShared, livePlatform } from "./shared-read.ts";
import { openEventStream } from "./sse.ts";
import { apiErrorsByField } from "./task-model.ts";
import { renderFragment } from "./views/html.ts";
import { backupsHref, PLATFORMS_PATH } from "./views/layout.ts";
import { AtPreview, ReleasePage, RestoreList } from "./views/platform-restore.ts";

// Recovery of a platform (the backups page's Recovery section): a ScalePlatformRestore created
// as the viewer after the target is checked against the recoverable window (the operator's rule)
// and a server-side dry run (the API server's schema and CEL rules), each message shown beside
// its field; then the restores' progress over Server-Sent Events (a watch made as the viewer).

type Params = { ns: string; name: string };
const ROUTE = `${PLATFORMS_PATH}/:ns/:name/backups`;

export function registerRestoreRoutes(app: FastifyInstance, ctx: Ctx): void {
  app.post(`${ROUTE}/restore`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as Params;
    const body = req.body as Record<string, unknown>;
    const form: RestoreForm = { target: String(body.target ?? ""), at: String(body.at ?? "") };
    const again = (errors: RestoreErrors, general: string[], status: number) =>
      backupsPage(ctx, reply, s, ns, name, { status, restore: { form, errors, general } });
    try {
      const platform = await viewerApi(s).getPlatform(ns, name);
      const planned = restoreFromForm(form, platform, ctx.now());
      if (planned.errors) return again(planned.errors, [], 422);
      // The dry run first: a refusal changes nothing and its causes go beside their fields.
      await viewerApi(s).createPlatformRestore(planned.restore, true);
      const created = await viewerApi(s).createPlatformRestore(planned.restore, false);
      const { backupLabel, targetTime } = created.spec;
      const target = backupLabel
        ? `backup ${backupLabel}`
        : targetTime
          ? `time ${targetTime}`
          : "the latest state";
      req.log.info(
        { user: s.user?.username, namespace: ns, platform: name, restore: created.metadata.name, target },
        "platform restore requested",
      );
      s.flash = `Restore ${created.metadata.name} requested (to ${target}).`;
      return reply.redirect(`${backupsHref(ns, name)}#restore`, 303);
    } catch (err) {
      if (err instanceof ApiError && [400, 403, 404, 409, 422].includes(err.statusCode)) {
        const { fields, general } = apiErrorsByField(err, restoreFieldOf);
        return again({ target: fields.target ?? [], at: fields.at ?? [] }, general, err.statusCode);
      }
      return ctx.fail(reply, s, err);
    }
  });

  // Releasing a Succeeded restore's old volume: confirmed on its own page, then spec.releaseOldVolume
  // set with a merge patch as the viewer (RBAC patch scaleplatformrestores); the operator deletes
  // the volume and reports oldVolumeReleased, which the restores list shows live.
  const RELEASE = `${ROUTE}/restores/:restore/release`;
  const restoreOf = async (s: Session, ns: string, name: string, restore: string) => {
    const r = restoresOf(await allRestores(s, ctx.opts.platformLists, ns), name).find(
      (x) => x.metadata.name === restore,
    );
    if (!r) throw new ApiError(404, "NotFound", `platform ${name} has no restore ${restore}`);
    return r;
  };
  app.get(RELEASE, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name, restore } = req.params as Params & { restore: string };
    try {
      const [platform, r] = await Promise.all([
        viewerApi(s).getPlatform(ns, name),
        restoreOf(s, ns, name, restore),
      ]);
      const body = ReleasePage({
        restore: r,
        session: s,
        zone: zoneOf(platform),
        backups: backupsHref(ns, name),
      });
      return ctx.page(reply, s, `Release old volume of ${restore}`, body);
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });
  app.post(RELEASE, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name, restore } = req.params as Params & { restore: string };
    try {
      const r = await restoreOf(s, ns, name, restore);
      if (r.status?.phase !== "Succeeded" || !r.status.oldVolumeClaimName || r.status.oldVolumeReleased)
        throw new ApiError(409, "Conflict", `restore ${restore} keeps no old volume to release`);
      await viewerApi(s).patchPlatformRestore(ns, restore, { spec: { releaseOldVolume: true } });
      req.log.info(
        {
          user: s.user?.username,
          namespace: ns,
          platform: name,
          restore,
          volume: r.status.oldVolumeClaimName,
        },
        "restore old volume released",
      );
      s.flash = `Release of ${r.status.oldVolumeClaimName} requested: the operator deletes it.`;
      return reply.redirect(`${backupsHref(ns, name)}#restore`, 303);
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });

  // The point in time typed, read in the platform's zone (a partial; the script adds local time).
  app.get(`${ROUTE}/restore/at`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as Params;
    const at = String((req.query as { at?: string }).at ?? "");
    try {
      const zone = zoneOf(await viewerApi(s).getPlatform(ns, name));
      const instant = at ? wallToInstant(at, zone) : undefined;
      const error = at && !instant ? `Not a date and time in ${zone}.` : undefined;
      return reply
        .type("text/html; charset=utf-8")
        .send(renderFragment(AtPreview({ iso: instant?.toISOString(), zone, error })));
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });

  // Server-Sent Events: the platform's restores, rendered, after each change in the namespace: from
  // the shared lists when the namespace is cached, else after each event of a watch as the viewer.
  app.get(`${ROUTE}/restores/events`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as Params;
    const lists = ctx.opts.platformLists;
    const stream = openEventStream(req, reply);
    let timer: NodeJS.Timeout | undefined;
    const render = async () => {
      timer = undefined;
      try {
        const [platform, { restores, canRelease }] = await Promise.all([
          livePlatform(s, lists, ns, name),
          recoveryData(s, lists, ns, name),
        ]);
        if (!stream.signal.aborted)
          stream.send(
            "restores",
            renderFragment(
              RestoreList({ restores, zone: zoneOf(platform), canRelease, backups: backupsHref(ns, name) }),
            ),
          );
      } catch (err) {
        stream.fail(err);
      }
    };
    try {
      if (!(await followShared(lists?.restores, ns, stream.signal, render)))
        await viewerApi(s).watchPlatformRestores(
          ns,
          () => {
            timer ??= setTimeout(render, 200);
          },
          stream.signal,
        );
    } catch (err) {
      stream.send("error", err instanceof ApiError ? `${err.statusCode}` : "error");
    } finally {
      clearTimeout(timer);
      stream.end();
    }
  });
}
