import { CONDITION_ENV_VALUES_IN_SECRETS, TaskReason } from "../../api/v1alpha1/conditions.ts";
import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import { ANNOTATION_RUN_NOW, LABEL_TASK } from "../../api/v1alpha1/labels.ts";
import type {
  ScheduledTask,
  ScheduledTaskSpec,
  ScheduledTaskStatus,
} from "../../api/v1alpha1/scheduledtask.ts";
import type { TaskExecution } from "../../api/v1alpha1/taskexecution.ts";
import type { ExecutionArchive } from "../../archive/store.ts";
import { nextRuns } from "../../cron/index.ts";
import { applyStatusIfChanged, needsApplyHashed, withAppliedHash } from "../../runtime/apply.ts";
import { KeyBackoff } from "../../runtime/backoff.ts";
import { type Condition, getCondition } from "../../runtime/conditions.ts";
import { isConflict } from "../../runtime/errors.ts";
import { controlledBy } from "../../runtime/owners.ts";
import { readList, readOne } from "../../runtime/read.ts";
import type {
  KubeObject,
  ObjectKey,
  ReconcileContext,
  ReconcileResult,
  Reconciler,
} from "../../runtime/types.ts";
import type { TaskControllerConfig } from "./config.ts";
import {
  configRevision,
  desiredCronJob,
  desiredEnvSecret,
  desiredManualJob,
  desiredScriptConfigMap,
} from "./desired.ts";
import { planHistory } from "./history.ts";
import { childrenToPrune } from "./prune.ts";
import { readTask } from "./read.ts";
import { computeStatus, monthUsage } from "./status.ts";
import { validateTask } from "./validate.ts";

const MAX_REQUEUE_MS = 3_600_000;
/**
 * Re-reads of a child name held by someone else: 5 s doubling up to 5 min. The child informers
 * see only the operator's objects, so the foreign object going away fires nothing; only a
 * requeue notices it.
 */
const CONFLICT_BACKOFF = { baseMs: 5_000, maxMs: 300_000 };

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
  private readonly conflictBackoff: KeyBackoff;

  private readonly archive?: ExecutionArchive;
  /**
   * `cached`: "apiVersion|kind" of the kinds the manager's informers watch; `archive`: the execution
   * archive, when the operator has one (TaskExecutions are then the recent window); `jitter`:
   * randomness of the name-conflict backoff (Math.random by default).
   */
  constructor(
    config: TaskControllerConfig,
    cached: ReadonlySet<string> = new Set(),
    archive?: ExecutionArchive,
    jitter?: () => number,
  ) {
    this.config = config;
    this.cached = cached;
    this.archive = archive;
    this.conflictBackoff = new KeyBackoff({ ...CONFLICT_BACKOFF, random: jitter });
  }

  /** One pass for the task named by `key`. */
  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const task = await readTask(ctx, this.cached, key);
    const backoffKey = `${key.namespace}/${key.name}`;
    if (!task) {
      this.conflictBackoff.forget(backoffKey);
      return {};
    }
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
        await this.refuse(task, { reason: TaskReason.NameConflict, message }, ctx);
        return { requeueAfter: this.conflictBackoff.when(backoffKey) };
      }
      lives.push(live);
    }
    this.conflictBackoff.forget(backoffKey);
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
    // The cache keeps records without their output: a record the archive lacks is read whole.
    const retention = await planHistory(task, executions, now, this.config, this.archive, (e) =>
      ctx.client.get<TaskExecution>(API_VERSION, "TaskExecution", key.namespace, e.metadata.name ?? ""),
    );
    if (retention.error)
      ctx.log.warn({ task: key.name, err: String(retention.error) }, "execution archive unreachable");
    for (const e of retention.remove) {
      await ctx.client.delete(API_VERSION, "TaskExecution", key.namespace, e.metadata.name ?? "");
    }
    if (retention.remove.length > 0)
      ctx.log.info(
        { task: key.name, deleted: retention.remove.length },
        "deleted executions beyond retention",
      );

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
      usage: retention.usage,
      archived: retention.archived,
      now,
    });
    await applyStatusIfChanged(ctx.client, { apiVersion: API_VERSION, kind: "ScheduledTask" }, task, status);
    await this.warnInlineEnv(task, status, ctx);

    let requeue = MAX_REQUEUE_MS;
    if (nextRun) requeue = Math.min(requeue, nextRun.getTime() - now.getTime() + 1000);
    if (retention.retryAfterMs) requeue = Math.min(requeue, retention.retryAfterMs);
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

  /** A Warning Event when inline env values appear or change (the condition already says so). */
  private async warnInlineEnv(task: ScheduledTask, status: ScheduledTaskStatus, ctx: ReconcileContext) {
    const now = getCondition(status.conditions as Condition[], CONDITION_ENV_VALUES_IN_SECRETS);
    if (now?.reason !== TaskReason.InlineEnvValues) return;
    const before = getCondition(task.status?.conditions as Condition[], CONDITION_ENV_VALUES_IN_SECRETS);
    if (before?.reason === now.reason && before.message === now.message) return;
    await ctx.events.warning(task, TaskReason.InlineEnvValues, "Validate", now.message);
  }

  private async refuse(
    task: ScheduledTask,
    invalid: { reason: string; message: string },
    ctx: ReconcileContext,
  ) {
    // The runs that happened stay in status (last result, this month's usage) while refused.
    const now = ctx.clock.now();
    const executions = await readList<TaskExecution>(
      ctx,
      this.cached,
      API_VERSION,
      "TaskExecution",
      task.metadata.namespace ?? "",
      `${LABEL_TASK}=${task.metadata.name}`,
    );
    const status = computeStatus({
      task,
      invalid,
      executions,
      // With an archive the usage is the archive's: keep the last figure while refused.
      usage: this.archive ? task.status?.usage : monthUsage(executions, now, this.config.billing.currency),
      now,
    });
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
