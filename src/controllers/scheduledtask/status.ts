import { planResources } from "../../api/task-plans.ts";
import {
  CONDITION_ARCHIVED,
  CONDITION_ENV_VALUES_IN_SECRETS,
  CONDITION_LAST_RUN_SUCCEEDED,
  CONDITION_READY,
  TaskReason,
} from "../../api/v1alpha1/conditions.ts";
import type {
  ScheduledTask,
  ScheduledTaskSpec,
  ScheduledTaskStatus,
  TaskPhase,
} from "../../api/v1alpha1/scheduledtask.ts";
import type { TaskExecution } from "../../api/v1alpha1/taskexecution.ts";
import { type Condition, type ConditionInput, formatTime, setCondition } from "../../runtime/conditions.ts";
import type { KubeObject } from "../../runtime/types.ts";
import { sumCosts } from "./billing.ts";

// Status is derived from the world on every reconcile, never accumulated: the same inputs give
// the same status, so an unchanged world gives an unchanged status and no write.

/** Everything the status depends on. */
export interface StatusInputs {
  task: ScheduledTask;
  /** Parsed spec; undefined when the spec is invalid. */
  spec?: ScheduledTaskSpec;
  /** Why the spec is refused (terminal until the spec changes). */
  invalid?: { reason: string; message: string };
  /** The live CronJob, if it exists. */
  cronJob?: KubeObject;
  /** The task's TaskExecutions (any order). */
  executions: readonly TaskExecution[];
  /** Start time of a run still in progress, if any (the newest unfinished Job). */
  activeRunStart?: Date;
  /** Next due time as the CronJob scheduler computes it (undefined when suspended or invalid). */
  nextRun?: Date;
  /** The run-now token acted on. */
  lastManualRunToken?: string;
  /** This month's usage (from the archive, or monthUsage() of the executions). */
  usage?: ScheduledTaskStatus["usage"];
  /** The Archived condition, when the operator has an execution archive. */
  archived?: { status: "True" | "False"; reason: string; message: string };
  now: Date;
}

/** The calendar month (UTC) of a time, "2026-11". */
export function monthOf(t: Date): string {
  return t.toISOString().slice(0, 7);
}

/** Usage of the runs among `executions` that finished in the month of `now` (UTC). */
export function monthUsage(
  executions: readonly TaskExecution[],
  now: Date,
  currency: string,
): NonNullable<ScheduledTaskStatus["usage"]> {
  const month = monthOf(now);
  const runs = executions.filter((e) => e.spec.completionTime.startsWith(month));
  return {
    month,
    runs: runs.length,
    billedSeconds: runs.reduce((n, e) => n + (e.spec.billedSeconds ?? 0), 0),
    cost: sumCosts(runs.map((e) => e.spec.cost ?? "0")),
    currency,
  };
}

/** The newest finished execution (by completion, then name for a stable order). */
export function newestExecution(executions: readonly TaskExecution[]): TaskExecution | undefined {
  let best: TaskExecution | undefined;
  for (const e of executions) {
    if (!best) best = e;
    else {
      const a = e.spec.completionTime;
      const b = best.spec.completionTime;
      if (a > b || (a === b && (e.metadata.name ?? "") < (best.metadata.name ?? ""))) best = e;
    }
  }
  return best;
}

function laterOf(...times: (string | undefined)[]): string | undefined {
  let best: string | undefined;
  for (const t of times) {
    if (t && (!best || Date.parse(t) > Date.parse(best))) best = t;
  }
  return best;
}

/** Phase by the rules in docs/scheduled-tasks.md ("Billing" lists them: Pending, Running, Failed, Stopped). */
export function taskPhase(input: StatusInputs): TaskPhase {
  if (input.invalid) return "Failed";
  if (input.spec?.suspend) return "Stopped";
  if (!input.cronJob) return "Pending";
  const last = newestExecution(input.executions);
  if (last && last.spec.result !== "Succeeded") return "Failed";
  return "Running";
}

/** Computes the whole status. */
export function computeStatus(input: StatusInputs): ScheduledTaskStatus {
  const { task, spec, now } = input;
  const gen = task.metadata.generation;
  const prev = task.status?.conditions as Condition[] | undefined;
  const last = newestExecution(input.executions);
  let conditions: Condition[] = [...(prev ?? [])];

  if (input.invalid) {
    conditions = setCondition(
      conditions,
      { type: CONDITION_READY, status: "False", ...input.invalid },
      gen,
      now,
    );
  } else if (!input.cronJob) {
    conditions = setCondition(
      conditions,
      {
        type: CONDITION_READY,
        status: "False",
        reason: TaskReason.Creating,
        message: "creating the CronJob",
      },
      gen,
      now,
    );
  } else if (spec?.suspend) {
    conditions = setCondition(
      conditions,
      {
        type: CONDITION_READY,
        status: "True",
        reason: TaskReason.Suspended,
        message: "suspended: no new runs start",
      },
      gen,
      now,
    );
  } else {
    conditions = setCondition(
      conditions,
      {
        type: CONDITION_READY,
        status: "True",
        reason: TaskReason.Scheduled,
        message: "the CronJob follows the schedule",
      },
      gen,
      now,
    );
  }

  if (last) {
    const ok = last.spec.result === "Succeeded";
    conditions = setCondition(
      conditions,
      {
        type: CONDITION_LAST_RUN_SUCCEEDED,
        status: ok ? "True" : "False",
        reason: ok
          ? TaskReason.Succeeded
          : last.spec.result === "TimedOut"
            ? TaskReason.TimedOut
            : TaskReason.Failed,
        message: `${last.metadata.name}: ${last.spec.message}`,
      },
      gen,
      now,
    );
  } else {
    conditions = setCondition(
      conditions,
      {
        type: CONDITION_LAST_RUN_SUCCEEDED,
        status: "Unknown",
        reason: TaskReason.NoRunYet,
        message: "no run has finished yet",
      },
      gen,
      now,
    );
  }

  if (spec) conditions = setCondition(conditions, envCondition(spec), gen, now);

  if (input.archived)
    conditions = setCondition(conditions, { type: CONDITION_ARCHIVED, ...input.archived }, gen, now);
  const cronStatus = (input.cronJob?.status ?? {}) as { lastScheduleTime?: string };
  const status: ScheduledTaskStatus = {
    phase: taskPhase(input),
    conditions,
    observedGeneration: gen,
  };
  const lastRun = laterOf(
    cronStatus.lastScheduleTime,
    last?.spec.startTime,
    input.activeRunStart ? formatTime(input.activeRunStart) : undefined,
  );
  if (lastRun) status.lastRunTime = lastRun;
  if (input.nextRun && !input.invalid) status.nextRunTime = formatTime(input.nextRun);
  if (last) {
    status.lastResult = last.spec.result;
    status.lastExecution = last.metadata.name;
  }
  if (spec) {
    const plan = planResources(spec.plan);
    status.resources = { vcpu: plan.vcpu, memory: plan.memoryDisplay };
    const cronSpec = (input.cronJob?.spec ?? {}) as { schedule?: string };
    if (cronSpec.schedule) status.schedule = cronSpec.schedule;
  }
  if (input.usage) status.usage = input.usage;
  const token = input.lastManualRunToken ?? task.status?.lastManualRunToken;
  if (token) status.lastManualRunToken = token;
  return status;
}

/**
 * Where the env values live: an inline `value` is stored in the task itself, in plain text in
 * etcd (custom resources are not covered by Secret encryption at rest) and readable by anyone who
 * can read the task. Not an error — inline values suit plain configuration — but said plainly.
 */
export function envCondition(spec: ScheduledTaskSpec): ConditionInput {
  const inline = (spec.env ?? []).filter((e) => e.value !== undefined).map((e) => e.name);
  if (inline.length === 0)
    return {
      type: CONDITION_ENV_VALUES_IN_SECRETS,
      status: "True",
      reason: TaskReason.AllInSecrets,
      message: "no env value is written inline in the task",
    };
  return {
    type: CONDITION_ENV_VALUES_IN_SECRETS,
    status: "False",
    reason: TaskReason.InlineEnvValues,
    message:
      `env ${inline.join(", ")}: inline values are stored in plain text in this ScheduledTask (etcd does not encrypt it) and shown in captured output; for a secret, put it in a Secret and use valueFrom.secretKeyRef`.slice(
        0,
        1000,
      ),
  };
}
