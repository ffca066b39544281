import type { TaskExecution } from "../../api/v1alpha1/taskexecution.ts";

// Retention of execution records (logs kept 7 days: docs/scheduled-tasks.md, "What is kept where"), plus a count bound per task so a
// task running every minute (~10,000 runs a week) cannot fill etcd. Pure.

/** What to delete now, and when the next record expires (to requeue then). */
export interface RetentionPlan {
  remove: TaskExecution[];
  keep: TaskExecution[];
  nextExpiry?: Date;
}

/** Splits one task's records into kept and removed: expired ones, then the oldest beyond `maxCount`. */
export function planRetention(
  executions: readonly TaskExecution[],
  now: Date,
  maxCount: number,
): RetentionPlan {
  const sorted = [...executions].sort((a, b) =>
    a.spec.completionTime === b.spec.completionTime
      ? (a.metadata.name ?? "").localeCompare(b.metadata.name ?? "")
      : a.spec.completionTime < b.spec.completionTime
        ? 1
        : -1,
  );
  const keep: TaskExecution[] = [];
  const remove: TaskExecution[] = [];
  let nextExpiry: Date | undefined;
  for (const e of sorted) {
    const expires = new Date(e.spec.expiresAt);
    if (e.metadata.deletionTimestamp) continue;
    if (expires.getTime() <= now.getTime() || keep.length >= maxCount) remove.push(e);
    else {
      keep.push(e);
      if (!nextExpiry || expires < nextExpiry) nextExpiry = expires;
    }
  }
  return { remove, keep, nextExpiry };
}
