// Condition types and CamelCase reasons, in one place. Each kind has its own section; add to
// yours only.

/** Summary condition every kind carries. */
export const CONDITION_READY = "Ready";

// --- ScheduledTask ---------------------------------------------------------------------------

/** Whether the last finished execution succeeded. */
export const CONDITION_LAST_RUN_SUCCEEDED = "LastRunSucceeded";

/** Reasons of ScheduledTask conditions. */
export const TaskReason = {
  /** The CronJob is in place and follows the spec. */
  Scheduled: "Scheduled",
  /** spec.suspend is true: no new runs start. */
  Suspended: "Suspended",
  /** Children are being created. */
  Creating: "Creating",
  /** The schedule is not valid (terminal until the spec changes). */
  InvalidSchedule: "InvalidSchedule",
  /** The timezone is not valid (terminal until the spec changes). */
  InvalidTimezone: "InvalidTimezone",
  /** The spec does not pass the schema (terminal until the spec changes). */
  InvalidSpec: "InvalidSpec",
  /** A child's name is taken by an object the task does not own. */
  NameConflict: "NameConflict",
  /** No execution has finished yet. */
  NoRunYet: "NoRunYet",
  /** The last execution succeeded. */
  Succeeded: "Succeeded",
  /** The last execution failed. */
  Failed: "Failed",
  /** The last execution timed out. */
  TimedOut: "TimedOut",
} as const;
