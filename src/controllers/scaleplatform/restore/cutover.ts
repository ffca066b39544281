import {
  ANNOTATION_DATA_CLAIM,
  ANNOTATION_RESTORE_HOLD,
  appPodSelector,
} from "../../../api/v1alpha1/labels.ts";
import {
  platformAppName,
  platformDatabaseName,
  platformDatabasePvcName,
} from "../../../api/v1alpha1/names.ts";
import type { ScalePlatformRestore } from "../../../api/v1alpha1/scaleplatformrestore.ts";
import { formatTime } from "../../../runtime/conditions.ts";
import type { KubeObject, ReconcileContext } from "../../../runtime/types.ts";
import { dbServesFrom } from "./status.ts";

// The cutover's moves, in order, each derived from what is observed (a restart of the operator
// resumes where the cluster is):
//   hold      the app Deployment at zero replicas, marked ANNOTATION_RESTORE_HOLD (the HPA never
//             scales a Deployment at zero, the platform reconciler leaves a held one alone);
//   drained   no app pod left: nothing writes to the old database any more;
//   switch    the StatefulSet's ANNOTATION_DATA_CLAIM set: the platform reconciler rolls the
//             database pod, PostgreSQL stops cleanly (fast shutdown) and starts on the new volume,
//             already promoted with the current password (the restore Job did both);
//   release   once that pod is ready, the app gets its replicas back and the hold is removed;
//   ready     an app pod ready again: its readiness probe is the health check that queries the
//             database.
// Rollback (the cutover not ready within spec.cutoverTimeoutSeconds) switches the StatefulSet
// back to the old claim, deletes a database pod still on the new one (a StatefulSet does not
// replace a pod that never got ready by itself) and releases the app.

/** What the cutover waits for next (for the status message). */
export type CutoverState = { done: false; waiting: string } | { done: true };

/** Reads the app Deployment and the database pod; the app pods count too. */
async function observe(ctx: ReconcileContext, ns: string, platform: string) {
  const app = await ctx.client.get("apps/v1", "Deployment", ns, platformAppName(platform));
  const pods = await ctx.client.list("v1", "Pod", ns, appPodSelector(platform));
  const db = await ctx.client.get("v1", "Pod", ns, `${platformDatabaseName(platform)}-0`);
  return { app, pods, db };
}

function mounts(pod: KubeObject | undefined, claim: string): boolean {
  const volumes = (pod?.spec as { volumes?: { persistentVolumeClaim?: { claimName: string } }[] })?.volumes;
  return volumes?.some((v) => v.persistentVolumeClaim?.claimName === claim) ?? false;
}

function replicasOf(d: KubeObject | undefined): number | undefined {
  return (d?.spec as { replicas?: number } | undefined)?.replicas;
}

function readyOf(d: KubeObject | undefined): number {
  return (d?.status as { readyReplicas?: number } | undefined)?.readyReplicas ?? 0;
}

/** Holds the app at zero until `until`; returns its replicas before (at least `min`). */
export async function holdApp(
  ctx: ReconcileContext,
  r: ScalePlatformRestore,
  until: Date,
  min: number,
): Promise<number> {
  const ns = r.metadata.namespace ?? "";
  const app = await ctx.client.get("apps/v1", "Deployment", ns, platformAppName(r.spec.platformName));
  if (!app) return min;
  const before = Math.max(replicasOf(app) ?? min, min);
  const annotations = {
    ...app.metadata.annotations,
    [ANNOTATION_RESTORE_HOLD]: `${r.metadata.name}@${formatTime(until)}`,
  };
  await ctx.client.replace({
    ...app,
    metadata: { ...app.metadata, annotations },
    spec: { ...(app.spec as object), replicas: 0 },
  });
  return before;
}

/** Gives the app its `replicas` back and removes the hold (no write when not held). */
export async function releaseApp(ctx: ReconcileContext, r: ScalePlatformRestore, replicas: number) {
  const ns = r.metadata.namespace ?? "";
  const app = await ctx.client.get("apps/v1", "Deployment", ns, platformAppName(r.spec.platformName));
  if (!app?.metadata.annotations?.[ANNOTATION_RESTORE_HOLD]) return;
  const { [ANNOTATION_RESTORE_HOLD]: _, ...annotations } = app.metadata.annotations;
  await ctx.client.replace({
    ...app,
    metadata: { ...app.metadata, annotations },
    spec: { ...(app.spec as object), replicas: Math.max(replicas, 1) },
  });
}

/** Points the database StatefulSet at `claim` (the StatefulSet's own claim: no annotation). */
async function switchData(ctx: ReconcileContext, ns: string, platform: string, claim: string) {
  const sts = await ctx.client.get("apps/v1", "StatefulSet", ns, platformDatabaseName(platform));
  if (!sts) throw new Error(`StatefulSet ${platformDatabaseName(platform)} is gone`);
  const { [ANNOTATION_DATA_CLAIM]: current, ...rest } = sts.metadata.annotations ?? {};
  const own = claim === platformDatabasePvcName(platform);
  if ((current ?? platformDatabasePvcName(platform)) === claim) return false;
  const annotations = own ? rest : { ...rest, [ANNOTATION_DATA_CLAIM]: claim };
  await ctx.client.replace({ ...sts, metadata: { ...sts.metadata, annotations } });
  return true;
}

/** One look at the cutover onto `claim`, making the next move when its time has come. */
export async function advanceCutover(
  ctx: ReconcileContext,
  r: ScalePlatformRestore,
  claim: string,
  since: number,
): Promise<CutoverState> {
  const ns = r.metadata.namespace ?? "";
  const platform = r.spec.platformName;
  const { app, pods, db } = await observe(ctx, ns, platform);
  const held = Boolean(app?.metadata.annotations?.[ANNOTATION_RESTORE_HOLD]);
  if (!dbServesFrom(db, claim, since)) {
    if (held && pods.length > 0) return { done: false, waiting: `${pods.length} app pod(s) to stop` };
    if (await switchData(ctx, ns, platform, claim))
      return { done: false, waiting: `the database to restart on ${claim}` };
    return { done: false, waiting: `the database ready on ${claim}` };
  }
  if (held) {
    await releaseApp(ctx, r, r.status?.appReplicas ?? 1);
    return { done: false, waiting: "the app ready again" };
  }
  if (readyOf(app) === 0) return { done: false, waiting: "the app ready again" };
  return { done: true };
}

/** One look at the rollback to `oldClaim`: done once the database serves from it and the app is ready. */
export async function advanceRollback(
  ctx: ReconcileContext,
  r: ScalePlatformRestore,
  oldClaim: string,
  newClaim: string,
): Promise<CutoverState> {
  const ns = r.metadata.namespace ?? "";
  const platform = r.spec.platformName;
  await switchData(ctx, ns, platform, oldClaim);
  const { app, db } = await observe(ctx, ns, platform);
  const onNew = mounts(db, newClaim);
  if (db && onNew && !db.metadata.deletionTimestamp) {
    await ctx.client.delete("v1", "Pod", ns, db.metadata.name ?? "", { propagationPolicy: "Background" });
    return { done: false, waiting: `the database pod on ${newClaim} to go` };
  }
  await releaseApp(ctx, r, r.status?.appReplicas ?? 1);
  // The StatefulSet's own claim stays mounted (unused) beside a restored one: "on the old claim"
  // means on it and off the new one.
  if (onNew || !dbServesFrom(db, oldClaim, 0))
    return { done: false, waiting: `the database ready on ${oldClaim}` };
  if (readyOf(app) === 0) return { done: false, waiting: "the app ready again" };
  return { done: true };
}
