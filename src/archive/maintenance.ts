import type { Logger } from "pino";
import type { PgExecutionArchive } from "./store.ts";

// Background work on the archive: migrate once it is reachable (retrying: the operator runs,
// and records runs in etcd, while the archive is down), then prune runs older than the retention
// every interval. Pruning is one range DELETE; with several replicas only the leader prunes.

/** Options of the maintenance loop. */
export interface MaintenanceOptions {
  retentionDays: number;
  intervalMs: number;
  log: Logger;
  /** Whether this replica may write (leader). */
  isLeader: () => boolean;
  /** Wait between migration attempts while the archive is unreachable. */
  retryMs?: number;
}

const DAY_MS = 86_400_000;

/** Starts the loop; the returned function stops it. */
export function startArchiveMaintenance(archive: PgExecutionArchive, o: MaintenanceOptions): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let migrated = false;
  const schedule = (ms: number) => {
    if (!stopped) timer = setTimeout(() => void tick(), ms);
  };
  const tick = async () => {
    if (!migrated) {
      try {
        const applied = await archive.migrate();
        migrated = true;
        o.log.info({ applied }, "execution archive ready");
      } catch (err) {
        o.log.warn({ err: String(err) }, "execution archive unreachable; retrying");
        return schedule(o.retryMs ?? 10_000);
      }
    }
    if (o.isLeader()) {
      try {
        const deleted = await archive.prune(new Date(Date.now() - o.retentionDays * DAY_MS));
        if (deleted > 0) o.log.info({ deleted }, "pruned archived executions");
      } catch (err) {
        o.log.warn({ err: String(err) }, "cannot prune the execution archive");
      }
    }
    schedule(o.intervalMs);
  };
  schedule(0);
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
