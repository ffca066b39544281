import type { Notification, TaskNotifications } from "../api/v1alpha1/notification.ts";
import type { ScheduledTask } from "../api/v1alpha1/scheduledtask.ts";
import type { TaskExecution } from "../api/v1alpha1/taskexecution.ts";
import { formatTime } from "../runtime/conditions.ts";
import type { Decided } from "./build.ts";

// What a task's runs announce, derived from the durable records alone: the TaskExecutions (one
// per finished run) and the task's Notifications (each names the last run it covers in
// `through`). The newest Notification is the cursor, so a restart, a resync or a second replica
// decides exactly what was not decided yet, and the same way (same transition, same name).
//
// Storms fold: the first failure of an incident is sent at once; failures after it are held and
// sent as one message with their count when `foldMinutes` have passed since the last message
// (or carried by the recovery message, whichever comes first).

/** Lines of output a message carries (its end: where the error usually is). */
export const OUTPUT_TAIL_LINES = 20;
/** Characters of output a message carries at most. */
export const OUTPUT_TAIL_CHARS = 1500;

const FAILED = new Set(["Failed", "TimedOut"]);

/** The result of a task's decision pass. */
export interface TaskDecision {
  decided: Decided[];
  /** When held failures are due to be sent (ms from now). */
  requeueAfterMs?: number;
}

/** Sort key of a run: completion time, then name. */
export function runKey(e: TaskExecution): string {
  return `${e.spec.completionTime}|${e.metadata.name ?? ""}`;
}

/** The last lines of a run's (already masked) output, bounded. */
export function outputTail(output: string | undefined): string {
  const lines = (output ?? "").replace(/\s+$/, "").split("\n");
  const tail = lines.slice(-OUTPUT_TAIL_LINES).join("\n");
  return tail.length > OUTPUT_TAIL_CHARS ? `…${tail.slice(-(OUTPUT_TAIL_CHARS - 1))}` : tail;
}

interface Incident {
  /** When the last message of the ongoing failure incident was decided (ms). */
  sentAtMs?: number;
  /** Completion time of the incident's first failure. */
  since?: string;
  /** Failures of the incident so far (reported or held). */
  failures: number;
}

/** Decides the messages due for `task` now. */
export function decideTask(
  task: ScheduledTask,
  runs: readonly TaskExecution[],
  notes: readonly Notification[],
  now: Date,
  maxAgeMinutes: number,
): TaskDecision {
  const cfg = task.spec.notifications;
  if (!cfg) return { decided: [] };
  const sorted = [...runs].sort((a, b) => runKey(a).localeCompare(runKey(b)));
  const cursor = [...notes]
    .filter((n) => n.spec.through)
    .sort((a, b) => (a.spec.through ?? "").localeCompare(b.spec.through ?? ""))
    .at(-1);
  let last: string | undefined;
  let fresh: TaskExecution[];
  const incident: Incident = { failures: 0 };
  if (cursor) {
    const through = cursor.spec.through ?? "";
    fresh = sorted.filter((e) => runKey(e) > through);
    last = cursor.spec.lastResult;
    if (last && FAILED.has(last)) {
      incident.sentAtMs = Date.parse(cursor.spec.occurredAt);
      incident.since = cursor.spec.details?.failingSince;
      incident.failures = Number(cursor.spec.details?.failures ?? cursor.spec.count);
    }
  } else {
    // Nothing announced yet: runs from before the task existed with notifications (or older than
    // maxAge) are history, not news; the last of them tells whether a success is a recovery.
    const floor = Math.max(
      Date.parse(task.metadata.creationTimestamp ?? "") || 0,
      now.getTime() - maxAgeMinutes * 60_000,
    );
    const floorKey = formatTime(new Date(floor));
    fresh = sorted.filter((e) => e.spec.completionTime >= floorKey);
    last = sorted.filter((e) => e.spec.completionTime < floorKey).at(-1)?.spec.result;
    if (last && FAILED.has(last)) incident.failures = 1;
  }
  // Defaults again here: an object stored before these fields existed has none.
  const on = new Set(cfg.on ?? ["Failure", "Timeout", "Recovery"]);
  const foldMs = (cfg.foldMinutes ?? 60) * 60_000;
  const decided: Decided[] = [];
  let held: TaskExecution[] = [];
  const nowMs = now.getTime();
  const flushHeld = () => {
    if (held.length === 0) return;
    decided.push(failureMessage(task, cfg, held, incident));
    incident.sentAtMs = nowMs;
    held = [];
  };
  for (const run of fresh) {
    const failed = FAILED.has(run.spec.result);
    if (failed) {
      const wanted = on.has(run.spec.result === "TimedOut" ? "Timeout" : "Failure") || on.has("EveryRun");
      if (incident.failures === 0) incident.since = run.spec.completionTime;
      incident.failures++;
      if (!wanted) {
        last = run.spec.result;
        continue;
      }
      held.push(run);
      // The incident's first failure goes at once; later ones wait for the interval (below).
      if (incident.sentAtMs === undefined) flushHeld();
    } else {
      const recovered = last !== undefined && FAILED.has(last);
      if (recovered && (on.has("Recovery") || on.has("EveryRun"))) {
        decided.push(recoveryMessage(task, cfg, run, held.length, incident));
        held = [];
      } else {
        flushHeld();
        if (on.has("EveryRun")) decided.push(runMessage(task, cfg, run, "TaskSucceeded"));
      }
      incident.sentAtMs = undefined;
      incident.since = undefined;
      incident.failures = 0;
    }
    last = run.spec.result;
  }
  if (held.length > 0 && incident.sentAtMs !== undefined && nowMs - incident.sentAtMs >= foldMs) flushHeld();
  if (held.length > 0 && incident.sentAtMs !== undefined) {
    return { decided, requeueAfterMs: Math.max(1000, incident.sentAtMs + foldMs - nowMs) };
  }
  return { decided };
}

function taskRef(task: ScheduledTask): string {
  return `${task.metadata.namespace}/${task.metadata.name}`;
}

function recipients(cfg: TaskNotifications) {
  return { email: cfg.email, webhooks: cfg.webhooks, chat: cfg.chat };
}

/** Facts of one run, as message lines and payload fields. */
function runFacts(
  task: ScheduledTask,
  run: TaskExecution,
): { lines: string[]; details: Record<string, string> } {
  const s = run.spec;
  const exit = s.exitCode === undefined ? "none" : String(s.exitCode);
  const tail = outputTail(s.output);
  return {
    lines: [
      `Task: ${task.metadata.name} (namespace ${task.metadata.namespace})`,
      `Run: ${run.metadata.name} (${s.trigger}), finished ${s.completionTime}`,
      `Result: ${s.result} — ${s.message}`,
      `Exit code: ${exit}`,
      `Duration: ${s.durationSeconds} s`,
      "",
      tail ? `End of output:\n${tail}` : "No output.",
    ],
    details: {
      task: task.metadata.name ?? "",
      namespace: task.metadata.namespace ?? "",
      execution: run.metadata.name ?? "",
      result: s.result,
      exitCode: exit,
      durationSeconds: String(s.durationSeconds),
      reason: s.reason,
      completionTime: s.completionTime,
      outputTail: tail,
    },
  };
}

function runMessage(
  task: ScheduledTask,
  cfg: TaskNotifications,
  run: TaskExecution,
  event: "TaskSucceeded" | "TaskFailed" | "TaskTimedOut",
): Decided {
  const f = runFacts(task, run);
  const verb = { TaskSucceeded: "succeeded", TaskFailed: "failed", TaskTimedOut: "timed out" }[event];
  return {
    event,
    key: run.metadata.name ?? "",
    through: runKey(run),
    lastResult: run.spec.result,
    subject: `Task ${taskRef(task)} ${verb}`,
    text: f.lines.join("\n"),
    details: f.details,
    recipients: recipients(cfg),
  };
}

function failureMessage(
  task: ScheduledTask,
  cfg: TaskNotifications,
  held: TaskExecution[],
  incident: Incident,
): Decided {
  const run = held.at(-1) as TaskExecution;
  const event = run.spec.result === "TimedOut" ? "TaskTimedOut" : "TaskFailed";
  const msg = runMessage(task, cfg, run, event);
  const details = { ...msg.details, failures: String(incident.failures), failingSince: incident.since ?? "" };
  if (held.length === 1) return { ...msg, details };
  return {
    ...msg,
    count: held.length,
    subject: `Task ${taskRef(task)} failed ${held.length} more times`,
    text: [
      `${held.length} runs failed since the last message (${incident.failures} in a row since ${incident.since}); the last one:`,
      "",
      msg.text,
    ].join("\n"),
    details,
  };
}

function recoveryMessage(
  task: ScheduledTask,
  cfg: TaskNotifications,
  run: TaskExecution,
  unreported: number,
  incident: Incident,
): Decided {
  const msg = runMessage(task, cfg, run, "TaskSucceeded");
  const n = incident.failures;
  const since = incident.since ? ` since ${incident.since}` : "";
  return {
    ...msg,
    event: "TaskRecovered",
    count: 1 + unreported,
    subject: `Task ${taskRef(task)} recovered`,
    text: [
      `The task succeeded again after ${n} failed run${n === 1 ? "" : "s"}${since}${unreported ? ` (${unreported} of them not reported before)` : ""}.`,
      "",
      msg.text,
    ].join("\n"),
    details: { ...msg.details, failures: String(n), failingSince: incident.since ?? "" },
  };
}
