import { TaskReason } from "../../api/v1alpha1/conditions.ts";
import type { ScheduledTask, ScheduledTaskStatus } from "../../api/v1alpha1/scheduledtask.ts";
import type { TaskExecution } from "../../api/v1alpha1/taskexecution.ts";
import type { ExecutionArchive } from "../../archive/store.ts";
import type { TaskControllerConfig } from "./config.ts";
import { planRetention } from "./retention.ts";
import { monthOf, monthUsage } from "./status.ts";

// Where a task's finished runs live. Without an archive, TaskExecutions are the whole history
// (retentionDays, at most maxExecutionsPerTask). With one, they are the recent window
// (archiveWindow per task): every record is copied to the archive (idempotent), and one beyond
// the window is deleted from etcd only once the archive has it. While the archive is unreachable
// nothing beyond the window is deleted, up to maxExecutionsPerTask records; past that bound the
// oldest go (an outage that long is reported by the Archived condition all along).

/** Usage in status. */
export type TaskUsage = NonNullable<ScheduledTaskStatus["usage"]>;

/** What to do with a task's records, and what the status says about them. */
export interface HistoryPlan {
  /** Records the status is derived from. */
  keep: TaskExecution[];
  /** Records to delete now. */
  remove: TaskExecution[];
  /** This month's usage. */
  usage?: TaskUsage;
  /** The Archived condition (only with an archive). */
  archived?: { status: "True" | "False"; reason: string; message: string };
  /** When the next kept record expires. */
  nextExpiry?: Date;
  /** Look again this soon (archive unreachable). */
  retryAfterMs?: number;
}

/** How many records a task keeps in etcd in normal operation. */
export function historyWindow(config: TaskControllerConfig, archive?: ExecutionArchive): number {
  return archive ? config.archiveWindow : config.maxExecutionsPerTask;
}

/** Retry interval while the archive is unreachable. */
export const ARCHIVE_RETRY_MS = 30_000;

/** Decides which records stay, copies records to the archive, reads this month's usage. */
export async function planHistory(
  task: ScheduledTask,
  executions: readonly TaskExecution[],
  now: Date,
  config: TaskControllerConfig,
  archive: ExecutionArchive | undefined,
  load: (e: TaskExecution) => Promise<TaskExecution | undefined> = async (e) => e,
): Promise<HistoryPlan & { error?: unknown }> {
  const currency = config.billing.currency;
  if (!archive) {
    const r = planRetention(executions, now, config.maxExecutionsPerTask);
    return {
      keep: r.keep,
      remove: r.remove,
      usage: monthUsage(r.keep, now, currency),
      nextExpiry: r.nextExpiry,
    };
  }
  const namespace = task.metadata.namespace ?? "";
  const taskUid = task.metadata.uid ?? "";
  const live = executions.filter((e) => !e.metadata.deletionTimestamp);
  try {
    const names = live.map((e) => e.metadata.name ?? "");
    const have = await archive.archived(namespace, taskUid, names);
    // Expired records are past the archive's retention too: not sent (they are deleted below).
    const missing = live.filter(
      (e) => !have.has(e.metadata.name ?? "") && Date.parse(e.spec.expiresAt) > now.getTime(),
    );
    // Records whose capture could not reach the archive: their etcd copy (output capped lower),
    // read whole through `load` — the operator's cache keeps records without their output.
    const whole: TaskExecution[] = [];
    for (const e of missing) {
      const full = await load(e);
      if (full) whole.push(full);
    }
    await archive.insert(
      whole.map((e) => ({ namespace, name: e.metadata.name ?? "", taskUid, spec: e.spec })),
    );
    const r = planRetention(live, now, config.archiveWindow);
    const row = (await archive.usage(namespace, monthOf(now), task.metadata.name))[0];
    const usage: TaskUsage = row
      ? {
          month: row.month,
          runs: row.runs,
          billedSeconds: row.billedSeconds,
          cost: row.cost,
          currency: row.currency,
        }
      : { month: monthOf(now), runs: 0, billedSeconds: 0, cost: "0.00", currency };
    return {
      keep: r.keep,
      remove: r.remove,
      usage,
      nextExpiry: r.nextExpiry,
      archived: {
        status: "True",
        reason: TaskReason.Archived,
        message: `every run is in the execution archive; the newest ${config.archiveWindow} stay as TaskExecutions`,
      },
    };
  } catch (error) {
    const r = planRetention(live, now, config.maxExecutionsPerTask);
    const waiting = Math.max(0, r.keep.length - config.archiveWindow);
    return {
      keep: r.keep,
      remove: r.remove,
      // Unknown without the archive: keep what status said, rather than a partial figure.
      usage: task.status?.usage,
      nextExpiry: r.nextExpiry,
      retryAfterMs: ARCHIVE_RETRY_MS,
      error,
      archived: {
        status: "False",
        reason: TaskReason.ArchiveUnreachable,
        message: `the execution archive is unreachable: ${waiting} run(s) beyond the window of ${config.archiveWindow} wait as TaskExecutions (at most ${config.maxExecutionsPerTask} are kept)`,
      },
    };
  }
}
