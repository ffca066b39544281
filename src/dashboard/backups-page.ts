import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformBackup } from "../api/v1alpha1/scaleplatformbackup.ts";
import type { ScalePlatformRestore } from "../api/v1alpha1/scaleplatformrestore.ts";
import { ApiError } from "../runtime/errors.ts";
import { allowed } from "./access.ts";
import type { Ctx, FastifyReply } from "./context.ts";
import { type RestoreErrors, type RestoreForm, restoresOf } from "./restore-model.ts";
import { type Session, viewerApi } from "./sessions.ts";
import { type PlatformLists, sharedList } from "./shared-read.ts";
import type { VNode } from "./views/html.ts";
import { backupsHref } from "./views/layout.ts";
import { BackupsPage, backupsOf } from "./views/platform-backups.ts";
import { EMPTY_RESTORE_FORM, Recovery } from "./views/platform-restore.ts";

// A platform's backups page (its on-demand backups and the Recovery section), rendered by the
// backup routes (routes-backups.ts) and the restore routes (routes-restore.ts).

/** What the viewer typed and what was wrong with it. */
export interface RestoreState {
  form: RestoreForm;
  errors: RestoreErrors;
  general: string[];
}
export const NO_RESTORE_INPUT: RestoreState = {
  form: EMPTY_RESTORE_FORM,
  errors: { target: [], at: [] },
  general: [],
};

/** The namespace's restores: the shared list when cached (and the viewer may list them), else the viewer's LIST. */
export async function allRestores(s: Session, lists: PlatformLists | undefined, ns: string) {
  return (
    (await sharedList(s, lists?.restores, "scaleplatformrestores", ns)) ??
    (await viewerApi(s).listPlatformRestores(ns))
  );
}

/** The platform's restores (undefined when the viewer may not list them) and whether the viewer may create one. */
export async function recoveryData(s: Session, lists: PlatformLists | undefined, ns: string, name: string) {
  const [restores, canRestore, canRelease] = await Promise.all([
    allRestores(s, lists, ns).then(
      (all): ScalePlatformRestore[] | undefined => restoresOf(all, name),
      (err) => {
        if (err instanceof ApiError && err.statusCode === 403) return undefined;
        throw err;
      },
    ),
    allowed(s, "create", "scaleplatformrestores", ns),
    allowed(s, "patch", "scaleplatformrestores", ns),
  ]);
  return { restores, canRestore, canRelease };
}

/** The Recovery section of the backups page. */
export function recoverySection(
  platform: ScalePlatform,
  s: Session,
  data: Awaited<ReturnType<typeof recoveryData>>,
  state: RestoreState,
): VNode {
  const base = backupsHref(platform.metadata.namespace ?? "", platform.metadata.name ?? "");
  return Recovery({
    platform,
    session: s,
    ...data,
    ...state,
    backups: base,
    action: `${base}/restore`,
    atHref: `${base}/restore/at`,
    eventsHref: `${base}/restores/events`,
  });
}

/** The viewer's on-demand backups of the platform; undefined when the viewer may not list them. */
export async function manualBackups(
  ctx: Ctx,
  s: Session,
  ns: string,
  name: string,
): Promise<ScalePlatformBackup[] | undefined> {
  try {
    const shared = await sharedList(s, ctx.opts.platformLists?.backups, "scaleplatformbackups", ns);
    return backupsOf(shared ?? (await viewerApi(s).listPlatformBackups(ns)), name);
  } catch (err) {
    if (err instanceof ApiError && err.statusCode === 403) return undefined;
    throw err;
  }
}

/** Renders a platform's backups page for the viewer, with a refused action's problem or the restore form's state. */
export async function backupsPage(
  ctx: Ctx,
  reply: FastifyReply,
  s: Session,
  ns: string,
  name: string,
  state: { problem?: string; status?: number; restore?: RestoreState } = {},
): Promise<FastifyReply> {
  const { problem, status = 200, restore = NO_RESTORE_INPUT } = state;
  const [platform, backups, create, cancel, recovery] = await Promise.all([
    viewerApi(s).getPlatform(ns, name),
    manualBackups(ctx, s, ns, name),
    allowed(s, "create", "scaleplatformbackups", ns),
    allowed(s, "delete", "scaleplatformbackups", ns),
    recoveryData(s, ctx.opts.platformLists, ns, name),
  ]);
  const flash = s.flash;
  s.flash = undefined;
  const body = BackupsPage({
    platform,
    backups,
    session: s,
    can: { create, cancel },
    flash,
    problem,
    eventsHref: `${backupsHref(ns, name)}/events`,
    recovery: recoverySection(platform, s, recovery, restore),
  });
  return ctx.page(reply, s, `Backups of ${name}`, body, status);
}
