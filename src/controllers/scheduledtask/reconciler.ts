import { TaskReason } from "../../api/v1alpha1/conditions.ts";
import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import { ANNOTATION_RUN_NOW, LABEL_TASK } from "../../api/v1alpha1/labels.ts";
import type { ScheduledTask, ScheduledTaskSpec } from "../../api/v1alpha1/scheduledtask.ts";
import type { TaskExecution } from "../../api/v1alpha1/taskexecution.ts";
import { nextRuns } from "../../cron/index.ts";
import { applyStatusIfChanged, needsApplyHashed, withAppliedHash } from "../../runtime/apply.ts";
import { isConflict } from "../../runtime/errors.ts";
import type {
  KubeObject,
  ObjectKey,
  ReconcileContext,
  ReconcileResult,
  Reconciler,
} from "../../runtime/types.ts";
import { planRetention } from "../taskexecution/retention.ts";
import type { TaskControllerConfig } from "./config.ts";
import {
  configRevision,
  desiredCronJob,
  desiredEnvSecret,
  desiredManualJob,
  desiredScriptConfigMap,
} from "./desired.ts";
import { childrenToPrune, controlledBy } from "./prune.ts";
import { readList, readOne, readTask } from "./read.ts";
import { computeStatus } from "./status.ts";
import { validateTask } from "./validate.ts";

const MAX_REQUEUE_MS = 3_600_000;

function jobFinished(job: KubeObject): boolean {
  const conds =
    (job.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
  return conds.some((c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True");
}

/**
 * Reconciles one ScheduledTask: validate → apply ConfigMap, Secret, CronJob (only when they
 * differ) → run-now → prune old revisions → retention of executions → status (only when it
 * differs) → requeue at the next due time or record expiry.
 */
export class ScheduledTaskReconciler implements Reconciler {
  private readonly config: TaskControllerConfig;
  private readonly cached: ReadonlySet<string>;

  /** `cached`: "apiVersion|kind" of the kinds the manager's informers watch. */
  constructor(config: TaskControllerConfig, cached: ReadonlySet<string> = new Set()) {
    this.config = config;
    this.cached = cached;
  }

  /** One pass for the task named by `key`. */
  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const task = await readTask(ctx, this.cached, key);
    if (!task) return {};
    const now = ctx.clock.now();
    const v = validateTask(task);
    if ("invalid" in v) return this.refuse(task, v.invalid, ctx);
    const { spec } = v;

    // Read every child first: a name taken by someone else refuses the task before anything is written.
    const desiredChildren = [
      desiredScriptConfigMap(task, spec),
      desiredEnvSecret(task, spec),
      desiredCronJob(task, spec, this.config),
    ]
      .filter((d): d is KubeObject => d !== undefined)
      .map(withAppliedHash);
    const lives: (KubeObject | undefined)[] = [];
    for (const desired of desiredChildren) {
      const name = desired.metadata.name ?? "";
      // The caches of these kinds are not label-selected (see cache.ts) and have synced before any
      // reconcile: a miss means no object of that name, ours or anyone's — no confirming GET.
      const live = await readOne(ctx, this.cached, desired.apiVersion, desired.kind, key.namespace, name);
      if (live && !controlledBy(live, task.metadata.uid)) {
        const message = `${desired.kind} ${name} already exists and does not belong to this task`;
        return this.refuse(task, { reason: TaskReason.NameConflict, message }, ctx);
      }
      lives.push(live);
    }
    let appliedCronJob: KubeObject | undefined;
    for (const [i, desired] of desiredChildren.entries()) {
      if (!needsApplyHashed(desired, lives[i])) continue;
      const applied = await ctx.client.apply(desired);
      if (desired.kind === "CronJob") appliedCronJob = applied;
      ctx.log.info({ task: key.name, kind: desired.kind, name: desired.metadata.name }, "applied child");
    }
    // The API server's answer to the apply is the CronJob as it now is; the cache sees it only a
    // moment later. Using it lets the first pass report Running (one status write, not two).
    const cronJob =
      appliedCronJob ?? (await readOne(ctx, this.cached, "batch/v1", "CronJob", key.namespace, key.name));
    const selector = `${LABEL_TASK}=${key.name}`;
    const token = await this.runNow(task, spec, ctx);

    // Prune revisions no Job needs.
    const jobs = await readList(ctx, this.cached, "batch/v1", "Job", key.namespace, selector);
    const owned = [
      ...(await readList(ctx, this.cached, "v1", "ConfigMap", key.namespace, selector)),
      ...(await readList(ctx, this.cached, "v1", "Secret", key.namespace, selector)),
    ];
    for (const old of childrenToPrune(owned, jobs, configRevision(task), task.metadata.uid)) {
      await ctx.client.delete(old.apiVersion, old.kind, key.namespace, old.metadata.name ?? "");
      ctx.log.info({ task: key.name, kind: old.kind, name: old.metadata.name }, "pruned old revision");
    }

    // Retention of execution records.
    const executions = await readList<TaskExecution>(
      ctx,
      this.cached,
      API_VERSION,
      "TaskExecution",
      key.namespace,
      selector,
    );
    const retention = planRetention(executions, now, this.config.maxExecutionsPerTask);
    for (const e of retention.remove) {
      await ctx.client.delete(API_VERSION, "TaskExecution", key.namespace, e.metadata.name ?? "");
    }
    if (retention.remove.length > 0)
      ctx.log.info({ task: key.name, deleted: retention.remove.length }, "deleted expired executions");

    const active = jobs
      .filter((j) => !jobFinished(j))
      .map((j) => (j.status as { startTime?: string } | undefined)?.startTime)
      .filter((t): t is string => t !== undefined)
      .sort();
    const activeStart = active.at(-1);
    const nextRun = spec.suspend ? undefined : nextRuns(spec.schedule, spec.timezone, now, 1)[0];
    const status = computeStatus({
      task,
      spec,
      cronJob,
      executions: retention.keep,
      activeRunStart: activeStart ? new Date(activeStart) : undefined,
      nextRun,
      lastManualRunToken: token,
      now,
    });
    await applyStatusIfChanged(ctx.client, { apiVersion: API_VERSION, kind: "ScheduledTask" }, task, status);

    let requeue = MAX_REQUEUE_MS;
    if (nextRun) requeue = Math.min(requeue, nextRun.getTime() - now.getTime() + 1000);
    if (retention.nextExpiry)
      requeue = Math.min(requeue, retention.nextExpiry.getTime() - now.getTime() + 1000);
    // The CronJob appears in the cache shortly after the first apply: look again soon.
    if (!cronJob) requeue = Math.min(requeue, 2000);
    return { requeueAfter: Math.max(1000, requeue) };
  }

  /** Starts a run-now Job for a new annotation token (idempotent: the Job is named after the token). */
  private async runNow(
    task: ScheduledTask,
    spec: ScheduledTaskSpec,
    ctx: ReconcileContext,
  ): Promise<string | undefined> {
    const token = task.metadata.annotations?.[ANNOTATION_RUN_NOW];
    const done = task.status?.lastManualRunToken;
    if (!token || token === done) return done;
    const job = desiredManualJob(task, spec, this.config, token);
    try {
      await ctx.client.create(job);
      await ctx.events.normal(
        task,
        "ManualRun",
        "RunNow",
        `started Job ${job.metadata.name} (run-now token ${token.slice(0, 64)})`,
      );
      ctx.log.info({ task: task.metadata.name, job: job.metadata.name }, "started manual run");
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
    return token;
  }

  private async refuse(
    task: ScheduledTask,
    invalid: { reason: string; message: string },
    ctx: ReconcileContext,
  ) {
    const status = computeStatus({ task, invalid, executions: [], now: ctx.clock.now() });
    if (
      await applyStatusIfChanged(ctx.client, { apiVersion: API_VERSION, kind: "ScheduledTask" }, task, status)
    ) {
      await ctx.events.warning(task, invalid.reason, "Validate", invalid.message);
      ctx.log.warn({ task: task.metadata.name, reason: invalid.reason }, "task refused");
    }
    // Terminal: nothing to retry until the spec (generation) changes, which triggers a reconcile.
    return {};
  }
}
