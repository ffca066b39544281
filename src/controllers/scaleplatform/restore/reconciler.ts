import { toQuantity } from "../../../api/plans.ts";
import { checkTarget, servingTimeline } from "../../../api/restore-target.ts";
import { API_VERSION } from "../../../api/v1alpha1/kind.ts";
import { ANNOTATION_DATA_CLAIM, LABEL_RESTORE } from "../../../api/v1alpha1/labels.ts";
import {
  platformDatabaseName,
  platformDatabasePvcName,
  platformRestoreBackupName,
  platformRestoreClaimName,
  platformRestoreJobName,
} from "../../../api/v1alpha1/names.ts";
import { type ScalePlatform, scalePlatformSpecSchema } from "../../../api/v1alpha1/scaleplatform.ts";
import type {
  ScalePlatformRestore,
  ScalePlatformRestoreStatus,
} from "../../../api/v1alpha1/scaleplatformrestore.ts";
import { applyStatusIfChanged } from "../../../runtime/apply.ts";
import { formatTime } from "../../../runtime/conditions.ts";
import { isConflict } from "../../../runtime/errors.ts";
import { readList, readOne } from "../../../runtime/read.ts";
import type { ObjectKey, ReconcileContext, ReconcileResult, Reconciler } from "../../../runtime/types.ts";
import { readDefaultBackupCredentials } from "../backup/default.ts";
import type { BackupMetrics } from "../backup/metrics.ts";
import type { PlatformControllerConfig } from "../config.ts";
import { type PlatformInputs, platformInputs } from "../desired/common.ts";
import { pvcRetention } from "../desired/database.ts";
import { advanceCutover, advanceRollback, holdApp } from "./cutover.ts";
import { desiredRestoreClaim, desiredRestoreJob, platformOwner, restoreOwner } from "./desired.ts";
import { jobOutcome, restoredTimeline, withPhase } from "./status.ts";

// ScalePlatformRestore, in named steps by phase:
//   start     (Pending)     checks the platform and the target against the recoverable window,
//                           creates the new volume and the restore Job: the old database serves on;
//   restoring (Restoring)   waits for the Job; a failure deletes the new volume, the platform untouched;
//   cutover   (→CuttingOver) holds the app at zero replicas (cutover.ts);
//   verify    (CuttingOver) once no app pod is left, marks the StatefulSet with the new claim
//                           (ANNOTATION_DATA_CLAIM): the platform reconciler rolls the database pod
//                           onto it, the old server stopping cleanly (fast shutdown) first; once it
//                           is ready gives the app its replicas back; once the app is ready reports
//                           the downtime and requests a full backup of the new timeline. Not done
//                           within spec.cutoverTimeoutSeconds: rolled back to the old volume, the
//                           app released, Failed with reason CutoverTimedOut;
//   oldVolume (Succeeded)   deletes the volume used before once released or its TTL passed.
// Only one restore of a platform runs at a time; a finished one (either way) blocks nothing.

const TYPE = { apiVersion: API_VERSION, kind: "ScalePlatformRestore" };
const WAIT_MS = 10_000;
/** While cutting over, look this often (the downtime is measured by observation). */
const CUTOVER_POLL_MS = 1_000;

type Step = {
  status?: ScalePlatformRestoreStatus;
  result: ReconcileResult;
  event?: [string, string, boolean];
};

/** Reconciles one ScalePlatformRestore. */
export class RestoreReconciler implements Reconciler {
  private readonly config: PlatformControllerConfig;
  private readonly cached: ReadonlySet<string>;
  private readonly metrics: BackupMetrics | undefined;

  constructor(config: PlatformControllerConfig, cached: ReadonlySet<string>, metrics?: BackupMetrics) {
    this.config = config;
    this.cached = cached;
    this.metrics = metrics;
  }

  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const r = await readOne<ScalePlatformRestore>(
      ctx,
      this.cached,
      TYPE.apiVersion,
      TYPE.kind,
      key.namespace,
      key.name,
    );
    if (!r || r.metadata.deletionTimestamp) return {};
    const phase = r.status?.phase ?? "Pending";
    if (phase === "Failed") return {};
    let step: Step;
    if (phase === "Succeeded") step = await this.oldVolume(ctx, r);
    else {
      const platform = await readOne<ScalePlatform>(
        ctx,
        this.cached,
        API_VERSION,
        "ScalePlatform",
        key.namespace,
        r.spec.platformName,
      );
      const parsed = platform ? scalePlatformSpecSchema.safeParse(platform.spec) : undefined;
      if (!platform || !parsed?.success) {
        step = this.pending(
          ctx,
          r,
          `ScalePlatform ${r.spec.platformName} not found (or its spec is invalid)`,
        );
      } else {
        const creds = await readDefaultBackupCredentials(ctx, this.config, parsed.data);
        const inp = platformInputs(
          platform,
          parsed.data,
          this.config,
          { certManager: false, customMetrics: false },
          creds,
        );
        if (phase === "Pending") step = await this.start(ctx, r, inp);
        else if (phase === "Restoring") step = await this.restoring(ctx, r, inp);
        else step = await this.verify(ctx, r);
      }
    }
    if (step.status && (await applyStatusIfChanged(ctx.client, TYPE, r, step.status))) {
      if (step.status.phase === "Failed" && r.status?.phase !== "Failed")
        this.metrics?.restoreFailed(
          { namespace: key.namespace, name: r.spec.platformName },
          r.metadata.uid ?? key.name,
        );
      if (step.status.phase !== r.status?.phase)
        ctx.log.info(
          { restore: key.name, platform: r.spec.platformName, phase: step.status.phase },
          "restore phase changed",
        );
      if (step.event) {
        const [reason, note, warn] = step.event;
        if (warn) await ctx.events.warning(r, reason, "Restore", note);
        else await ctx.events.normal(r, reason, "Restore", note);
      }
    }
    return step.result;
  }

  private pending(ctx: ReconcileContext, r: ScalePlatformRestore, why: string): Step {
    return { status: withPhase(r, "Pending", why, ctx.clock.now()), result: { requeueAfter: WAIT_MS } };
  }

  private fail(
    ctx: ReconcileContext,
    r: ScalePlatformRestore,
    message: string,
    extra = {},
    valid?: object,
    reason?: string,
  ): Step {
    const v = valid as Parameters<typeof withPhase>[5];
    return {
      status: withPhase(r, "Failed", message, ctx.clock.now(), extra, v, reason),
      result: {},
      event: [reason ?? (v?.status === "False" ? "RestoreRefused" : "RestoreFailed"), message, true],
    };
  }

  /** Step start: check, then create the new volume and the Job. */
  private async start(ctx: ReconcileContext, r: ScalePlatformRestore, inp: PlatformInputs): Promise<Step> {
    const ns = r.metadata.namespace ?? "";
    const name = r.spec.platformName;
    if (!inp.spec.backup)
      return this.pending(
        ctx,
        r,
        `ScalePlatform ${name} has no backups (${inp.backupSource === "disabled" ? "spec.disableBackups" : "no repository"})`,
      );
    if (inp.spec.stopped) return this.pending(ctx, r, `ScalePlatform ${name} is stopped`);
    const others = await readList<ScalePlatformRestore>(ctx, this.cached, TYPE.apiVersion, TYPE.kind, ns, "");
    const busy = others.find(
      (o) =>
        o.spec.platformName === name &&
        o.metadata.name !== r.metadata.name &&
        (o.status?.phase === "Restoring" || o.status?.phase === "CuttingOver"),
    );
    if (busy) return this.pending(ctx, r, `ScalePlatformRestore ${busy.metadata.name} of ${name} is running`);
    const now = ctx.clock.now();
    const restored = others
      .filter((o) => o.spec.platformName === name && o.status?.phase === "Succeeded")
      .map((o) => o.status?.timeline ?? 0);
    const timeline = servingTimeline(inp.platform.status?.backup, restored);
    const checked = checkTarget(r.spec, inp.platform.status?.backup, now, timeline);
    if (!checked.ok)
      return this.fail(
        ctx,
        r,
        `refused: ${checked.message}`,
        { recoverableWindow: checked.window, target: targetOf(r) },
        {
          status: "False",
          reason: "TargetOutsideWindow",
          message: checked.message,
        },
      );
    const sts = await readOne(ctx, this.cached, "apps/v1", "StatefulSet", ns, platformDatabaseName(name));
    const current = sts?.metadata.annotations?.[ANNOTATION_DATA_CLAIM] ?? platformDatabasePvcName(name);
    const live = await readOne(ctx, this.cached, "v1", "PersistentVolumeClaim", ns, current);
    const size =
      (live?.spec as { resources?: { requests?: { storage?: string } } } | undefined)?.resources?.requests
        ?.storage ?? toQuantity.storage(inp.budget.database.storageGiB);
    const claim = platformRestoreClaimName(name, r.metadata.name ?? "");
    const jobName = platformRestoreJobName(r.metadata.name ?? "");
    for (const obj of [
      desiredRestoreClaim(inp, r, claim, size),
      desiredRestoreJob(
        inp,
        r,
        jobName,
        claim,
        checked.args,
        checked.pick && { ...checked.pick, target: checked.target, window: checked.window },
      ),
    ]) {
      try {
        await ctx.client.create(obj);
      } catch (err) {
        if (!isConflict(err)) throw err;
      }
    }
    const along = timeline ? ` along timeline ${timeline}` : "";
    const msg = `restoring ${checked.target}${along} into ${claim}; ${name} keeps serving from ${current}`;
    return {
      status: withPhase(
        r,
        "Restoring",
        msg,
        now,
        {
          target: checked.target,
          recoverableWindow: checked.window,
          jobName,
          volumeClaimName: claim,
          oldVolumeClaimName: current,
          startTime: formatTime(now),
        },
        { status: "True", reason: "InWindow", message: `${checked.target} lies in ${checked.window}` },
      ),
      result: {},
      event: ["RestoreStarted", msg, false],
    };
  }

  /** Step restoring: the Job's outcome; on success, step cutover. */
  private async restoring(
    ctx: ReconcileContext,
    r: ScalePlatformRestore,
    inp: PlatformInputs,
  ): Promise<Step> {
    const ns = r.metadata.namespace ?? "";
    const jobName = r.status?.jobName ?? "";
    const claim = r.status?.volumeClaimName ?? "";
    const job = await readOne(ctx, this.cached, "batch/v1", "Job", ns, jobName);
    if (!job) return this.fail(ctx, r, `restore Job ${jobName} is gone`);
    const pods = await readList(ctx, this.cached, "v1", "Pod", ns, `${LABEL_RESTORE}=${r.metadata.name}`);
    const out = jobOutcome(job, pods);
    if (!out.done) return { result: {} };
    if (!out.ok) {
      // The Job goes first (its message is in the status and the Event): a failed pod still
      // names the volume, and the volume's protection keeps it until no pod does.
      await ctx.client.delete("batch/v1", "Job", ns, jobName, { propagationPolicy: "Background" });
      await ctx.client.delete("v1", "PersistentVolumeClaim", ns, claim, { propagationPolicy: "Background" });
      return this.fail(ctx, r, `restore failed, platform untouched: ${out.message || "Job failed"}`);
    }
    // Cutover: the new volume now belongs to the platform (or to no one under pvcRetention Retain,
    // as the StatefulSet's claims); the app is held at zero first (step verify does the rest).
    const pvc = await readOne(ctx, this.cached, "v1", "PersistentVolumeClaim", ns, claim);
    if (!pvc) return this.fail(ctx, r, `restored volume ${claim} is gone`);
    const owners = pvcRetention(inp) === "Delete" ? [platformOwner(inp.platform)] : [];
    await ctx.client.replace({ ...pvc, metadata: { ...pvc.metadata, ownerReferences: owners } });
    const now = ctx.clock.now();
    // The hold outlives the cutover's bound and a rollback's: a hold left behind (the restore
    // deleted meanwhile) expires by itself.
    const until = new Date(now.getTime() + 3 * r.spec.cutoverTimeoutSeconds * 1000);
    const appReplicas = await holdApp(ctx, r, until, inp.budget.app.minReplicas);
    const msg = `restored (${out.message}); app scaled to zero, then the database switches to ${claim}`;
    const timeline = restoredTimeline(out.message);
    return {
      status: withPhase(r, "CuttingOver", msg, now, {
        cutoverStartTime: now.toISOString(),
        appReplicas,
        ...(timeline ? { timeline } : {}),
      }),
      result: { requeueAfter: CUTOVER_POLL_MS },
      event: ["CutoverStarted", msg, false],
    };
  }

  /** Step verify: the cutover moves on (cutover.ts); past its bound it is rolled back. */
  private async verify(ctx: ReconcileContext, r: ScalePlatformRestore): Promise<Step> {
    const ns = r.metadata.namespace ?? "";
    const name = r.spec.platformName;
    const since = Date.parse(r.status?.cutoverStartTime ?? "");
    const claim = r.status?.volumeClaimName ?? "";
    const oldClaim = r.status?.oldVolumeClaimName ?? "";
    const boundMs = r.spec.cutoverTimeoutSeconds * 1000;
    const now = ctx.clock.now();
    const poll = { result: { requeueAfter: CUTOVER_POLL_MS } };
    if (r.status?.rollbackStartTime) return this.rollback(ctx, r, oldClaim, claim, boundMs);
    const state = await advanceCutover(ctx, r, claim, since);
    if (!state.done) {
      if (now.getTime() - since <= boundMs)
        return { status: { ...r.status, message: `cutting over: waiting for ${state.waiting}` }, ...poll };
      const msg = `cutover not ready within ${r.spec.cutoverTimeoutSeconds}s (waiting for ${state.waiting}): rolling back to ${oldClaim}`;
      return {
        status: withPhase(r, "CuttingOver", msg, now, { rollbackStartTime: formatTime(now) }),
        ...poll,
        event: ["CutoverRollingBack", msg, true],
      };
    }
    const downtime = Math.round((now.getTime() - since) / 100) / 10;
    const backupName = platformRestoreBackupName(r.metadata.name ?? "");
    try {
      await ctx.client.create({
        apiVersion: API_VERSION,
        kind: "ScalePlatformBackup",
        metadata: { name: backupName, namespace: ns, ownerReferences: [restoreOwner(r)] },
        spec: { platformName: name, type: "full" },
      });
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
    const ttlMs = r.spec.oldVolumeTTLHours * 3600_000;
    const msg = `${name} serves the restored data (${r.status?.target}); downtime ${downtime}s; full backup ${backupName} requested`;
    return {
      status: withPhase(r, "Succeeded", msg, now, {
        downtimeSeconds: downtime,
        backupRequestName: backupName,
        oldVolumeReleaseTime: formatTime(new Date(now.getTime() + ttlMs)),
      }),
      result: { requeueAfter: Math.min(ttlMs, 3600_000) },
      event: ["RestoreSucceeded", msg, false],
    };
  }

  /** Rollback of a cutover past its bound: back on the old volume, the new one deleted, Failed. */
  private async rollback(
    ctx: ReconcileContext,
    r: ScalePlatformRestore,
    oldClaim: string,
    claim: string,
    boundMs: number,
  ): Promise<Step> {
    const ns = r.metadata.namespace ?? "";
    const now = ctx.clock.now();
    const state = await advanceRollback(ctx, r, oldClaim, claim);
    const timedOut = `cutover not ready within ${r.spec.cutoverTimeoutSeconds}s`;
    if (state.done) {
      await ctx.client.delete("v1", "PersistentVolumeClaim", ns, claim, { propagationPolicy: "Background" });
      const msg = `${timedOut}; rolled back: ${r.spec.platformName} serves from ${oldClaim} again, ${claim} deleted`;
      return this.fail(ctx, r, msg, {}, undefined, "CutoverTimedOut");
    }
    if (now.getTime() - Date.parse(r.status?.rollbackStartTime ?? "") <= boundMs)
      return {
        status: { ...r.status, message: `${timedOut}; rolling back: waiting for ${state.waiting}` },
        result: { requeueAfter: CUTOVER_POLL_MS },
      };
    const msg = `${timedOut}; the rollback to ${oldClaim} is not ready either (waiting for ${state.waiting}): the database StatefulSet runs on it, the app is released; see the database pod`;
    return this.fail(ctx, r, msg, {}, undefined, "RollbackNotReady");
  }

  /** Step oldVolume: deletes the volume used before the cutover once released or expired. */
  private async oldVolume(ctx: ReconcileContext, r: ScalePlatformRestore): Promise<Step> {
    const s = r.status;
    if (!s?.oldVolumeClaimName || s.oldVolumeReleased) return { result: {} };
    const due = Date.parse(s.oldVolumeReleaseTime ?? "");
    const now = ctx.clock.now();
    if (!r.spec.releaseOldVolume && now.getTime() < due)
      return { result: { requeueAfter: Math.min(due - now.getTime() + 1000, 3600_000) } };
    // The StatefulSet's own claim stays attached (unused) to the database pod: it is freed when
    // the pod next restarts, after which the StatefulSet creates an empty claim in its place.
    await ctx.client.delete("v1", "PersistentVolumeClaim", r.metadata.namespace ?? "", s.oldVolumeClaimName, {
      propagationPolicy: "Background",
    });
    const msg = `old volume ${s.oldVolumeClaimName} deleted (${r.spec.releaseOldVolume ? "released" : "TTL passed"})`;
    return {
      status: { ...s, oldVolumeReleased: true, oldVolumeReleaseTime: formatTime(now), message: msg },
      result: {},
      event: ["OldVolumeReleased", msg, false],
    };
  }
}

/** The target as written (for the status of a refused restore). */
function targetOf(r: ScalePlatformRestore): string {
  if (r.spec.backupLabel) return `backup ${r.spec.backupLabel}`;
  return r.spec.targetTime ? `time ${r.spec.targetTime}` : "latest";
}
