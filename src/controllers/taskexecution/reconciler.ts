import { TASK_PLANS } from "../../api/task-plans.ts";
import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import {
  ANNOTATION_CONFIG_REVISION,
  ANNOTATION_TASK_LANGUAGE,
  ANNOTATION_TASK_PLAN,
  ANNOTATION_TIMEOUT_SECONDS,
  LABEL_MANAGED_BY,
  LABEL_RESULT,
  LABEL_TASK,
  LABEL_TRIGGER,
  MANAGED_BY,
} from "../../api/v1alpha1/labels.ts";
import { taskExecutionName } from "../../api/v1alpha1/names.ts";
import { type ScheduledTask, TASK_LANGUAGES } from "../../api/v1alpha1/scheduledtask.ts";
import type { TaskExecution, TaskExecutionSpec } from "../../api/v1alpha1/taskexecution.ts";
import type { ExecutionArchive } from "../../archive/store.ts";
import { SecretRegistry } from "../../log.ts";
import { formatTime } from "../../runtime/conditions.ts";
import { isConflict, isNotFound } from "../../runtime/errors.ts";
import { readList, readOne } from "../../runtime/read.ts";
import type {
  KubeObject,
  ObjectKey,
  ReconcileContext,
  ReconcileResult,
  Reconciler,
} from "../../runtime/types.ts";
import { measureRun, parseRunnerReport, runCost } from "../scheduledtask/billing.ts";
import type { TaskControllerConfig } from "../scheduledtask/config.ts";
import { ownerRef, SCRIPT_CONTAINER } from "../scheduledtask/desired.ts";
import { historyWindow } from "../scheduledtask/history.ts";
import { readTask } from "../scheduledtask/read.ts";
import { planRetention } from "../scheduledtask/retention.ts";
import { classify } from "./classify.ts";
import type { PodLogReader } from "./logs.ts";
import { assembleOutput } from "./output.ts";
import { type JobLike, jobFacts, type PodLike, secretRefsOf } from "./pods.ts";

const DAY_MS = 86_400_000;

function oneOf<T extends string>(values: readonly T[], v: string | undefined): T | undefined {
  return values.find((x) => x === v);
}

/**
 * Turns each finished Job of a task into one TaskExecution: reads the pod's status and log
 * (before the Job's TTL removes them), masks secret values, classifies the result, and creates
 * the record owned by the task. Keyed by task (Job and Pod events map to their task), so only
 * the operator's own Jobs are watched. Idempotent: the record's name is derived from the Job.
 */
export class TaskExecutionReconciler implements Reconciler {
  private readonly config: TaskControllerConfig;
  private readonly logs: PodLogReader;
  private readonly cached: ReadonlySet<string>;
  private readonly secrets: SecretRegistry;

  /** `secrets`: the logger's registry; the values a capture reads are masked in log lines meanwhile. */
  private readonly archive?: ExecutionArchive;
  constructor(
    config: TaskControllerConfig,
    logs: PodLogReader,
    cached: ReadonlySet<string> = new Set(),
    deps: { secrets?: SecretRegistry; archive?: ExecutionArchive } = {},
  ) {
    this.config = config;
    this.logs = logs;
    this.cached = cached;
    this.secrets = deps.secrets ?? new SecretRegistry();
    this.archive = deps.archive;
  }

  /** One pass for the task named by `key`: records every finished Job not yet recorded. */
  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const task = await readTask(ctx, this.cached, key);
    if (!task) return {};
    const jobs = await readList<JobLike>(
      ctx,
      this.cached,
      "batch/v1",
      "Job",
      key.namespace,
      `${LABEL_TASK}=${key.name}`,
    );
    // A run older than the oldest record retention keeps would be recorded only to be deleted
    // again (and re-recorded, for as long as the Job lingers): skip it.
    const records = await readList<TaskExecution>(
      ctx,
      this.cached,
      API_VERSION,
      "TaskExecution",
      key.namespace,
      `${LABEL_TASK}=${key.name}`,
    );
    const window = historyWindow(this.config, this.archive);
    const kept = planRetention(records, ctx.clock.now(), window).keep;
    const edge = kept.length >= window ? kept.at(-1) : undefined;
    const recorded = new Set(records.map((r) => r.metadata.name ?? ""));
    const todo: JobLike[] = [];
    for (const job of jobs) {
      if (job.metadata.labels?.[LABEL_MANAGED_BY] !== MANAGED_BY || !jobFacts(job).finished) continue;
      if (recorded.has(this.recordName(task, job))) continue;
      if (edge && (await this.beyondWindow(task, job, edge, ctx))) continue;
      todo.push(job);
    }
    // A Job outlives its record beyond the window (until its TTL or the CronJob's history limit
    // removes it): a run the archive has is recorded, not captured again. Without an answer from
    // the archive the capture goes on; the archive's insert is idempotent.
    const archived =
      this.archive && todo.length > 0
        ? await this.archive
            .archived(
              key.namespace,
              task.metadata.uid ?? "",
              todo.map((j) => this.recordName(task, j)),
            )
            .catch(() => new Set<string>())
        : new Set<string>();
    try {
      for (const job of todo) {
        if (archived.has(this.recordName(task, job))) continue;
        await this.capture(task, job, ctx);
      }
    } finally {
      // The values were needed for this pass only: the registry does not keep them.
      this.secrets.forget(`${key.namespace}/${key.name}`);
    }
    return {};
  }

  /**
   * Whether `job`'s record would sort after `edge`, the oldest record the window keeps, in
   * planRetention's order (completion time, then name): such a run left the window (or would be
   * deleted at once). Compared on the record's own time, the script container's end: the Job
   * completes a moment later, often in the second the next run ends, and compared by that it
   * looked newer than the window, so while the archive could not confirm having it, a run that
   * had left the window was recorded in etcd again.
   */
  private async beyondWindow(task: ScheduledTask, job: JobLike, edge: TaskExecution, ctx: ReconcileContext) {
    const jobEnd = jobFacts(job).jobCompletionTime ?? "";
    // The container ends before its Job completes: a Job completed before the edge is beyond it.
    if (jobEnd < edge.spec.completionTime) return true;
    const pod = lastPod(await this.podsOf(job, ctx));
    const end = jobFacts(job, pod, SCRIPT_CONTAINER).terminated?.finishedAt ?? jobEnd;
    if (end !== edge.spec.completionTime) return end < edge.spec.completionTime;
    return this.recordName(task, job).localeCompare(edge.metadata.name ?? "") > 0;
  }

  private podsOf(job: JobLike, ctx: ReconcileContext): Promise<PodLike[]> {
    return readList<PodLike>(
      ctx,
      this.cached,
      "v1",
      "Pod",
      job.metadata.namespace ?? "",
      `batch.kubernetes.io/job-name=${job.metadata.name ?? ""}`,
    );
  }

  private recordName(task: ScheduledTask, job: JobLike): string {
    return taskExecutionName(
      task.metadata.name ?? "",
      job.metadata.name ?? "",
      new Date(job.metadata.creationTimestamp ?? 0),
    );
  }

  /** Records one finished Job (no-op when its record exists). */
  async capture(task: ScheduledTask, job: JobLike, ctx: ReconcileContext): Promise<void> {
    const taskName = task.metadata.name ?? "";
    const key = { namespace: job.metadata.namespace ?? "", name: job.metadata.name ?? "" };
    const created = new Date(job.metadata.creationTimestamp ?? 0);
    const name = taskExecutionName(taskName, key.name, created);
    if (await readOne(ctx, this.cached, API_VERSION, "TaskExecution", key.namespace, name)) return;

    const pod = lastPod(await this.podsOf(job, ctx));
    const ann = job.spec?.template?.metadata?.annotations ?? {};
    const timeoutSeconds = Number(ann[ANNOTATION_TIMEOUT_SECONDS] ?? task.spec.timeoutSeconds ?? 300);
    // The revision that ran, not the task as it is now (it may have changed during the run);
    // the task's own values only for Jobs made before these annotations existed.
    const language = oneOf(TASK_LANGUAGES, ann[ANNOTATION_TASK_LANGUAGE]) ?? task.spec.language;
    const plan = oneOf(TASK_PLANS, ann[ANNOTATION_TASK_PLAN]) ?? task.spec.plan;
    const facts = jobFacts(job, pod, SCRIPT_CONTAINER);
    const c = classify({ ...facts, timeoutSeconds, plan });
    const t = facts.terminated;
    const bill = measureRun(parseRunnerReport(t?.message), t?.startedAt, t?.finishedAt);

    const secrets = await this.secretValues(ctx, key.namespace, pod, task);
    // The archive keeps more output than etcd: read up to its cap, store etcd's cut of it.
    const cap = this.archive ? this.config.archiveOutputMaxChars : this.config.outputMaxChars;
    let output = { text: "", truncated: false };
    if (pod && facts.terminated) {
      output = await this.readOutput(key.namespace, pod.metadata.name ?? "", secrets, cap).catch(
        (err: unknown) => {
          ctx.log.warn({ job: key.name, err: String(err) }, "cannot read pod log");
          return { text: "[cronscale: the pod's log could not be read]", truncated: false };
        },
      );
    }
    const completion = c.completionTime ?? facts.jobCompletionTime ?? formatTime(ctx.clock.now());
    const trigger = job.metadata.labels?.[LABEL_TRIGGER] === "Manual" ? "Manual" : "Schedule";
    const spec: TaskExecutionSpec = {
      taskName,
      trigger,
      jobName: key.name,
      language,
      plan,
      configRevision: ann[ANNOTATION_CONFIG_REVISION],
      scheduledTime:
        job.metadata.annotations?.["batch.kubernetes.io/cronjob-scheduled-timestamp"] ??
        job.metadata.creationTimestamp,
      startTime: c.startTime,
      completionTime: completion,
      durationSeconds: bill.measuredBy === "None" ? c.durationSeconds : bill.billedSeconds,
      runMilliseconds: bill.runMilliseconds,
      compileMilliseconds: bill.compileMilliseconds,
      measuredBy: bill.measuredBy,
      billedSeconds: bill.billedSeconds,
      cost: runCost(this.config.billing, plan, bill.billedSeconds),
      currency: this.config.billing.currency,
      result: c.result,
      exitCode: c.exitCode,
      reason: c.reason,
      message: c.message,
      output: output.text,
      outputTruncated: output.truncated,
      expiresAt: formatTime(new Date(Date.parse(completion) + this.config.executionRetentionDays * DAY_MS)),
    };
    // Archive first (idempotent): a record that fails to reach the archive here is copied from
    // etcd later by the task's reconcile, with etcd's shorter output.
    if (this.archive) {
      await this.archive
        .insert([{ namespace: key.namespace, name, taskUid: task.metadata.uid ?? "", spec }])
        .catch((err: unknown) =>
          ctx.log.warn({ execution: name, err: String(err) }, "cannot archive execution yet"),
        );
    }
    const etcdOutput = assembleOutput(output.text, undefined, this.config.outputMaxChars, []);
    spec.output = etcdOutput.text;
    spec.outputTruncated = output.truncated || etcdOutput.truncated;
    const record: KubeObject = {
      apiVersion: API_VERSION,
      kind: "TaskExecution",
      metadata: {
        name,
        namespace: key.namespace,
        labels: {
          [LABEL_MANAGED_BY]: MANAGED_BY,
          [LABEL_TASK]: taskName,
          [LABEL_TRIGGER]: trigger,
          [LABEL_RESULT]: c.result,
        },
        ownerReferences: [ownerRef(task)],
      },
      spec: JSON.parse(JSON.stringify(spec)) as unknown,
    };
    try {
      await ctx.client.create(record);
    } catch (err) {
      if (isConflict(err)) return;
      throw err;
    }
    ctx.log.info(
      { task: taskName, execution: name, result: c.result, exitCode: c.exitCode },
      "recorded execution",
    );
    const note = `${name}: ${c.result}, ${c.message}, ${spec.durationSeconds} s`;
    if (c.result === "Succeeded") await ctx.events.normal(task, "ExecutionSucceeded", "Run", note);
    else
      await ctx.events.warning(
        task,
        c.result === "TimedOut" ? "ExecutionTimedOut" : "ExecutionFailed",
        "Run",
        note,
      );
  }

  private async readOutput(namespace: string, pod: string, secrets: string[], cap: number) {
    const head = await this.logs.head(namespace, pod, SCRIPT_CONTAINER, cap + 1);
    if (Buffer.byteLength(head, "utf8") <= cap) return assembleOutput(head, undefined, cap, secrets);
    // Enough lines for the tail half of the cap at ~16 characters a line.
    const tail = await this.logs.tail(namespace, pod, SCRIPT_CONTAINER, Math.max(2000, Math.ceil(cap / 32)));
    return assembleOutput(head, tail, cap, secrets);
  }

  /**
   * Values of the user's Secret keys the pod's env refers to (`valueFrom.secretKeyRef`), to mask.
   * Inline values are not secret — they are written in the task itself, readable by whoever reads
   * the task — so the operator's own Secret carrying them is skipped and they show as written
   * (docs/scheduled-tasks.md states the rule).
   */
  private async secretValues(
    ctx: ReconcileContext,
    namespace: string,
    pod: PodLike | undefined,
    task: ScheduledTask,
  ) {
    const values: string[] = [];
    const refs = pod ? secretRefsOf(pod) : [];
    const byName = new Map<string, Record<string, string> | undefined>();
    for (const ref of refs) {
      if (!byName.has(ref.name)) {
        const s = await ctx.client
          .get<KubeObject>("v1", "Secret", namespace, ref.name)
          .catch((err: unknown) => {
            if (isNotFound(err)) return undefined;
            throw err;
          });
        byName.set(ref.name, isInlineEnvSecret(s, task) ? undefined : (s?.data as Record<string, string>));
      }
      const b64 = byName.get(ref.name)?.[ref.key];
      if (b64) values.push(Buffer.from(b64, "base64").toString("utf8"));
    }
    // Defence in depth: should any value reach a log line during this pass, the logger masks it.
    this.secrets.set(`${namespace}/${task.metadata.name ?? ""}`, values);
    return values;
  }
}

/** The last attempt's pod (retries make several): it decides the run's result. */
function lastPod(pods: readonly PodLike[]): PodLike | undefined {
  return [...pods]
    .sort((a, b) => (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? ""))
    .at(-1);
}

/** Whether `secret` is the operator's copy of the task's inline env values (not the user's). */
function isInlineEnvSecret(secret: KubeObject | undefined, task: ScheduledTask): boolean {
  return (secret?.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid === task.metadata.uid);
}
