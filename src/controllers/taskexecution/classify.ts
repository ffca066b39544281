import { planResources, type TaskPlan } from "../../api/task-plans.ts";
import type { ExecutionResult } from "../../api/v1alpha1/scheduledtask.ts";

// How a finished Job's pod is read as a TaskExecution result. Pure.
//
// The script runs under `timeout -s KILL N` (runtimes.ts), which exits 137 when it killed the
// script (124 if the signal were catchable). A script may exit 124/137 by itself too, so a run is
// a timeout only when it also lasted (almost) the whole timeout.

/** The facts about one finished run. */
export interface RunFacts {
  /** Terminated state of the script container, when it ran. */
  terminated?: {
    exitCode: number;
    reason?: string;
    message?: string;
    startedAt?: string;
    finishedAt?: string;
  };
  /** Why the container never ran (e.g. ImagePullBackOff), when it did not. */
  waitingReason?: string;
  waitingMessage?: string;
  /** The Job's Failed condition reason (DeadlineExceeded, BackoffLimitExceeded...), when failed. */
  jobFailedReason?: string;
  jobFailedMessage?: string;
  /** Job start/completion (fallback times). */
  jobStartTime?: string;
  jobCompletionTime?: string;
  timeoutSeconds: number;
  plan: TaskPlan;
}

/** The classification stored in a TaskExecution. */
export interface Classification {
  result: ExecutionResult;
  exitCode?: number;
  reason: string;
  message: string;
  startTime?: string;
  completionTime?: string;
  durationSeconds: number;
}

function seconds(from?: string, to?: string): number | undefined {
  if (!from || !to) return undefined;
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) ? Math.max(0, Math.round(ms / 1000)) : undefined;
}

/** Classifies a finished run. */
export function classify(f: RunFacts): Classification {
  const t = f.terminated;
  const startTime = t?.startedAt ?? f.jobStartTime;
  const completionTime = t?.finishedAt ?? f.jobCompletionTime;
  const durationSeconds = seconds(startTime, completionTime) ?? 0;
  const base = { startTime, completionTime, durationSeconds };
  const timedOut = `timed out after ${f.timeoutSeconds} s`;

  if (t) {
    if (t.reason === "OOMKilled") {
      const mem = planResources(f.plan).memoryDisplay;
      return {
        ...base,
        result: "Failed",
        exitCode: t.exitCode,
        reason: "OOMKilled",
        message: `exceeded the plan's memory (${mem})`,
      };
    }
    if (t.exitCode === 0)
      return { ...base, result: "Succeeded", exitCode: 0, reason: "Completed", message: "exit code 0" };
    const ran = seconds(t.startedAt, t.finishedAt) ?? 0;
    if ((t.exitCode === 124 || t.exitCode === 137) && ran >= f.timeoutSeconds - 1) {
      return { ...base, result: "TimedOut", exitCode: t.exitCode, reason: "TimedOut", message: timedOut };
    }
    return {
      ...base,
      result: "Failed",
      exitCode: t.exitCode,
      reason: "Error",
      message: `exit code ${t.exitCode}`,
    };
  }
  if (f.jobFailedReason === "DeadlineExceeded") {
    // Killed by the Job's backstop deadline: the script ran out of time, or never got to start.
    if (f.waitingReason)
      return {
        ...base,
        result: "Failed",
        reason: "StartFailed",
        message: `did not start: ${f.waitingReason}${f.waitingMessage ? ` (${f.waitingMessage.slice(0, 200)})` : ""}`,
      };
    return { ...base, result: "TimedOut", reason: "TimedOut", message: timedOut };
  }
  const why = f.waitingReason ?? f.jobFailedReason ?? "Unknown";
  const detail = f.waitingMessage ?? f.jobFailedMessage;
  return {
    ...base,
    result: "Failed",
    reason: "StartFailed",
    message: `did not run: ${why}${detail ? ` (${detail.slice(0, 200)})` : ""}`,
  };
}
