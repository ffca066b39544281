import { API_VERSION } from "../../../api/v1alpha1/kind.ts";
import { LABEL_BACKUP_REQUEST } from "../../../api/v1alpha1/labels.ts";
import { platformBackupRequestJobName, platformDatabaseName } from "../../../api/v1alpha1/names.ts";
import {
  type ScalePlatform,
  type ScalePlatformSpec,
  scalePlatformSpecSchema,
} from "../../../api/v1alpha1/scaleplatform.ts";
import type {
  ScalePlatformBackup,
  ScalePlatformBackupStatus,
} from "../../../api/v1alpha1/scaleplatformbackup.ts";
import { applyStatusIfChanged } from "../../../runtime/apply.ts";
import { type Condition, formatTime, setCondition } from "../../../runtime/conditions.ts";
import { isConflict } from "../../../runtime/errors.ts";
import { readList, readOne } from "../../../runtime/read.ts";
import type {
  KubeObject,
  ObjectKey,
  ReconcileContext,
  ReconcileResult,
  Reconciler,
} from "../../../runtime/types.ts";
import type { PlatformControllerConfig } from "../config.ts";
import { platformInputs } from "../desired/common.ts";
import { readDefaultBackupCredentials, withEffectiveBackup } from "./default.ts";
import { backupJobSpec, backupLabels } from "./desired.ts";
import { type BackupJobRun, jobRuns } from "./observe.ts";
import { repositoryPath } from "./pgbackrest.ts";
import { dbPodReadyFor } from "./plan.ts";

// ScalePlatformBackup: one on-demand backup. The reconciler starts its Job (owned by the request,
// labelled as the platform's backup Jobs so the platform's status counts it too) once the
// platform can be backed up, and derives the request's status from that Job and the runner's
// summary on every pass — nothing is stored but what the Job shows. Deleting the request deletes
// the Job (by the garbage collector), whose runner then stops pgBackRest in the database pod
// (runner.ts; docs/backups.md states the bound).

const TYPE = { apiVersion: API_VERSION, kind: "ScalePlatformBackup" };
/** While waiting for the platform, look again this often. */
const PENDING_REQUEUE_MS = 10_000;

/** The request's status for a run (or for `waiting`, a reason it cannot start yet). Pure. */
export function requestStatus(
  req: ScalePlatformBackup,
  run: BackupJobRun | undefined,
  job: KubeObject | undefined,
  waiting: string | undefined,
  now: Date,
): ScalePlatformBackupStatus {
  const prev = req.status;
  const s: ScalePlatformBackupStatus = { observedGeneration: req.metadata.generation };
  let cond: { status: Condition["status"]; reason: string; message: string };
  if (!run || !job) {
    if (prev?.phase === "Succeeded" || prev?.phase === "Failed") return prev; // Job removed later: keep the result
    s.phase = "Pending";
    s.message = waiting ?? "starting";
    cond = { status: "False", reason: "Pending", message: s.message };
  } else {
    s.jobName = job.metadata.name;
    const started = (job.status as { startTime?: string } | undefined)?.startTime;
    if (started) s.startTime = started;
    if (run.finishedAt === undefined) {
      s.phase = "Running";
      s.message = `${req.spec.type} backup running in Job ${job.metadata.name}`;
      cond = { status: "False", reason: "Running", message: s.message };
    } else {
      s.completionTime = formatTime(new Date(run.finishedAt));
      const label = run.summary?.backups?.[0]?.[0];
      if (run.succeeded && !run.summary?.skipped && label) {
        s.phase = "Succeeded";
        s.backupLabel = label;
        s.message = `backup ${label} taken`;
        cond = { status: "True", reason: "Succeeded", message: s.message };
      } else {
        s.phase = "Failed";
        s.message = (
          run.summary?.skipped
            ? `not taken: ${run.summary.skipped}; create another ScalePlatformBackup to try again`
            : (run.summary?.error ?? run.message ?? "backup Job failed")
        ).slice(0, 1000);
        cond = { status: "False", reason: "Failed", message: s.message };
      }
    }
  }
  s.conditions = setCondition(
    prev?.conditions as Condition[] | undefined,
    { type: "Complete", ...cond },
    req.metadata.generation,
    now,
  );
  return s;
}

/** Why `platform` cannot be backed up now, or undefined. */
function notReady(
  platform: ScalePlatform | undefined,
  spec: ScalePlatformSpec | undefined,
  db: KubeObject | undefined,
  req: ScalePlatformBackup,
): string | undefined {
  const name = req.spec.platformName;
  if (!platform || !spec) return `ScalePlatform ${name} not found (or its spec is invalid)`;
  if (!spec.backup)
    return spec.disableBackups
      ? `ScalePlatform ${name} has backups turned off (spec.disableBackups)`
      : `ScalePlatform ${name} has no backup repository (spec.backup or the operator's default)`;
  if (spec.stopped) return `ScalePlatform ${name} is stopped`;
  const ns = req.metadata.namespace ?? "";
  if (!dbPodReadyFor(db, repositoryPath(spec.backup, ns, name))) return `database of ${name} is not ready`;
  return undefined;
}

/** Reconciles one ScalePlatformBackup. */
export class BackupRequestReconciler implements Reconciler {
  private readonly config: PlatformControllerConfig;
  private readonly cached: ReadonlySet<string>;

  constructor(config: PlatformControllerConfig, cached: ReadonlySet<string>) {
    this.config = config;
    this.cached = cached;
  }

  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const req = await readOne<ScalePlatformBackup>(
      ctx,
      this.cached,
      TYPE.apiVersion,
      TYPE.kind,
      key.namespace,
      key.name,
    );
    if (!req || req.metadata.deletionTimestamp) return {};
    const jobName = platformBackupRequestJobName(key.name);
    let job = await readOne(ctx, this.cached, "batch/v1", "Job", key.namespace, jobName);
    let waiting: string | undefined;
    const done = req.status?.phase === "Succeeded" || req.status?.phase === "Failed";
    if (!job && !done) {
      const platform = await readOne<ScalePlatform>(
        ctx,
        this.cached,
        API_VERSION,
        "ScalePlatform",
        key.namespace,
        req.spec.platformName,
      );
      const parsed = platform ? scalePlatformSpecSchema.safeParse(platform.spec) : undefined;
      // The backup in force: the user's, or the operator's default repository.
      const spec =
        platform && parsed?.success
          ? withEffectiveBackup(
              parsed.data,
              this.config,
              req.spec.platformName,
              await readDefaultBackupCredentials(ctx, this.config, parsed.data),
            )
          : undefined;
      const db = await readOne(
        ctx,
        this.cached,
        "v1",
        "Pod",
        key.namespace,
        `${platformDatabaseName(req.spec.platformName)}-0`,
      );
      waiting = notReady(platform, spec, db, req);
      if (!waiting && platform && spec) job = await this.startJob(ctx, req, platform, spec, jobName);
    }
    const pods = job
      ? await readList(ctx, this.cached, "v1", "Pod", key.namespace, `${LABEL_BACKUP_REQUEST}=${key.name}`)
      : [];
    const run = job ? jobRuns([job], pods)[0] : undefined;
    const status = requestStatus(req, run, job, waiting, ctx.clock.now());
    const prev = req.status;
    if (await applyStatusIfChanged(ctx.client, TYPE, req, status)) {
      if (prev?.phase !== status.phase) {
        const note = status.message ?? "";
        if (status.phase === "Failed") await ctx.events.warning(req, "BackupFailed", "Backup", note);
        else if (status.phase === "Succeeded")
          await ctx.events.normal(req, "BackupSucceeded", "Backup", note);
        else if (status.phase === "Running") await ctx.events.normal(req, "BackupStarted", "Backup", note);
        ctx.log.info(
          { request: key.name, platform: req.spec.platformName, phase: status.phase },
          "backup request phase changed",
        );
      }
    }
    return status.phase === "Pending" ? { requeueAfter: PENDING_REQUEUE_MS } : {};
  }

  private async startJob(
    ctx: ReconcileContext,
    req: ScalePlatformBackup,
    platform: ScalePlatform,
    spec: ScalePlatformSpec,
    name: string,
  ): Promise<KubeObject> {
    const inp = platformInputs(platform, spec, this.config, { certManager: false, customMetrics: false });
    const labels = { ...backupLabels(inp, req.spec.type), [LABEL_BACKUP_REQUEST]: req.metadata.name ?? "" };
    const jobSpec = backupJobSpec(inp, req.spec.type);
    const job: KubeObject = {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: {
        name,
        namespace: req.metadata.namespace,
        labels,
        ownerReferences: [
          {
            apiVersion: API_VERSION,
            kind: "ScalePlatformBackup",
            name: req.metadata.name ?? "",
            uid: req.metadata.uid ?? "",
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: { ...jobSpec, template: { ...jobSpec.template, metadata: { labels } } },
    };
    try {
      const created = await ctx.client.create(job);
      ctx.log.info({ request: req.metadata.name, job: name }, "started manual backup");
      return created;
    } catch (err) {
      if (!isConflict(err)) throw err;
      return (await ctx.client.get("batch/v1", "Job", req.metadata.namespace ?? "", name)) ?? job;
    }
  }
}
