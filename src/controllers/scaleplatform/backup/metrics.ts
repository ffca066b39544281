import { Counter, Gauge, type Registry } from "prom-client";
import { CONDITION_BACKUP_HEALTHY } from "../../../api/v1alpha1/conditions.ts";
import type { ScalePlatformStatus } from "../../../api/v1alpha1/scaleplatform.ts";
import type { ObjectKey } from "../../../runtime/types.ts";
import type { BackupObservation } from "./observe.ts";

// Backup metrics per platform, on the operator's /metrics. The gauges are computed at scrape time
// from the newest observation of each platform (the archive lag keeps growing while archiving is
// stuck, between passes too); the failure counters count each failed Job, restore or archiver
// failure once. A platform without spec.backup, or deleted, has no series: at most
// 3 gauges + 5 counters per platform.

/** What the failure counter's `kind` label says failed. */
export type BackupFailureKind = "full" | "incr" | "manual" | "restore" | "archive";
const KINDS: readonly BackupFailureKind[] = ["full", "incr", "manual", "restore", "archive"];
/** Restores counted, remembered by uid so a status write seen late is not counted twice. */
const RESTORES_REMEMBERED = 1000;

/** The newest observation of one platform with spec.backup. */
interface PlatformState {
  namespace: string;
  platform: string;
  /** Epoch ms of the last archived WAL segment; undefined while stopped or never archived. */
  lastArchivedMs?: number;
  /** Epoch ms the newest successful backup ended. */
  lastSuccessMs?: number;
  healthy?: { ok: boolean; reason: string };
  /** Failed backup Jobs already counted (uid or name), those still listed. */
  countedJobs: Set<string>;
  /** pg_stat_archiver.failed_count of the newest summary. */
  archiveFailed?: number;
}

type Labels = "namespace" | "platform";

/** Backup metrics of the ScalePlatform controllers. */
export class BackupMetrics {
  readonly archiveLag: Gauge<Labels>;
  readonly healthy: Gauge<Labels | "reason">;
  readonly lastSuccess: Gauge<Labels>;
  readonly failures: Counter<Labels | "kind">;
  private readonly platforms = new Map<string, PlatformState>();
  private readonly restores = new Set<string>();

  constructor(registry: Registry, now: () => number = Date.now) {
    const registers = [registry];
    const states = () => this.platforms.values();
    this.archiveLag = new Gauge({
      name: "cronscale_backup_wal_archive_lag_seconds",
      help: "Seconds since the last WAL segment was archived into the repository, at scrape time (platforms with spec.backup that run)",
      labelNames: ["namespace", "platform"],
      registers,
      collect() {
        this.reset();
        const t = now();
        for (const s of states())
          if (s.lastArchivedMs !== undefined)
            this.set(
              { namespace: s.namespace, platform: s.platform },
              Math.max(0, (t - s.lastArchivedMs) / 1000),
            );
      },
    });
    this.healthy = new Gauge({
      name: "cronscale_backup_healthy",
      help: "1 when the platform's BackupHealthy condition is True, else 0; reason is the condition's",
      labelNames: ["namespace", "platform", "reason"],
      registers,
      collect() {
        this.reset();
        for (const s of states())
          if (s.healthy)
            this.set(
              { namespace: s.namespace, platform: s.platform, reason: s.healthy.reason },
              s.healthy.ok ? 1 : 0,
            );
      },
    });
    this.lastSuccess = new Gauge({
      name: "cronscale_backup_last_success_timestamp_seconds",
      help: "Unix time the newest successful backup in the repository ended",
      labelNames: ["namespace", "platform"],
      registers,
      collect() {
        this.reset();
        for (const s of states())
          if (s.lastSuccessMs !== undefined)
            this.set({ namespace: s.namespace, platform: s.platform }, s.lastSuccessMs / 1000);
      },
    });
    this.failures = new Counter({
      name: "cronscale_backup_failures_total",
      help: "Failures observed per platform and kind: full, incr (scheduled backups), manual, restore, archive (WAL archive_command failures)",
      labelNames: ["namespace", "platform", "kind"],
      registers,
    });
  }

  /**
   * Records a pass of the platform: its status as written and the backup observation (undefined
   * without spec.backup: the platform's series go). Failures already finished when a platform is
   * first seen (operator start, backups turned on) are not counted: the counter counts what this
   * process saw fail; BackupHealthy shows the rest.
   */
  record(
    key: ObjectKey,
    stopped: boolean,
    status: ScalePlatformStatus,
    o: BackupObservation | undefined,
  ): void {
    if (!o) {
      this.forget(key);
      return;
    }
    const k = `${key.namespace}/${key.name}`;
    const prev = this.platforms.get(k);
    const labels = { namespace: key.namespace, platform: key.name };
    const failed = new Set<string>();
    for (const r of o.runs) {
      if (r.finishedAt === undefined || r.succeeded || r.summary?.cancelled) continue;
      const id = r.uid ?? r.job;
      failed.add(id);
      if (prev && !prev.countedJobs.has(id))
        this.failures.inc({ ...labels, kind: r.manual ? "manual" : r.type });
    }
    const arch = o.runs.find((r) => r.finishedAt !== undefined && r.summary?.archiver)?.summary?.archiver;
    let archiveFailed = prev?.archiveFailed;
    if (arch) {
      // failed_count only grows, until the statistics are reset (a crash, a restored database).
      // The first run's count is the base: before it, archive-push fails until the first backup
      // creates the stanza, which is setup, not a failure to alert on.
      const grown = archiveFailed === undefined ? 0 : arch.failedCount - archiveFailed;
      const added = grown >= 0 ? grown : arch.failedCount;
      if (prev && added > 0) this.failures.inc({ ...labels, kind: "archive" }, added);
      archiveFailed = arch.failedCount;
    }
    const b = status.backup;
    const cond = (status.conditions as { type: string; status: string; reason?: string }[] | undefined)?.find(
      (c) => c.type === CONDITION_BACKUP_HEALTHY,
    );
    const state: PlatformState = { ...labels, countedJobs: failed };
    if (archiveFailed !== undefined) state.archiveFailed = archiveFailed;
    const archived = b?.lastArchivedTime ? Date.parse(b.lastArchivedTime) : Number.NaN;
    if (!stopped && Number.isFinite(archived)) state.lastArchivedMs = archived;
    const success = b?.lastSuccessfulBackup ? Date.parse(b.lastSuccessfulBackup.stopTime) : Number.NaN;
    if (Number.isFinite(success)) state.lastSuccessMs = success;
    if (cond) state.healthy = { ok: cond.status === "True", reason: cond.reason ?? "" };
    if (!prev) for (const kind of KINDS) this.failures.inc({ ...labels, kind }, 0);
    this.platforms.set(k, state);
  }

  /** Counts a restore of `key`'s platform that failed (once per restore uid). */
  restoreFailed(key: ObjectKey, uid: string): void {
    if (this.restores.has(uid)) return;
    this.restores.add(uid);
    if (this.restores.size > RESTORES_REMEMBERED)
      this.restores.delete(this.restores.values().next().value ?? "");
    this.failures.inc({ namespace: key.namespace, platform: key.name, kind: "restore" });
  }

  /** Drops every series of a platform that is gone or has no spec.backup any more. */
  forget(key: ObjectKey): void {
    this.platforms.delete(`${key.namespace}/${key.name}`);
    for (const kind of KINDS) this.failures.remove({ namespace: key.namespace, platform: key.name, kind });
  }
}
