import { BackupReason, CONDITION_BACKUP_HEALTHY } from "../api/v1alpha1/conditions.ts";
import type { Notification } from "../api/v1alpha1/notification.ts";
import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformRestore } from "../api/v1alpha1/scaleplatformrestore.ts";
import type { Decided } from "./build.ts";
import type { MakeMessage } from "./health.ts";

// A platform's backup alerts and completed restores. The platform controller records the backups'
// health in condition BackupHealthy, whose lastTransitionTime moves only when it flips: a failure
// is announced once per flip to False (whatever the failure's reasons after it), its recovery
// once when it is True again; a restore is announced once when it Succeeded. Each Notification
// is named after its transition, so a restart or a second replica never sends it twice.

/** Reasons of BackupHealthy=False that are failures (not "no backup yet", "none configured", "turned off"). */
const FAILURES = new Set<string>([
  BackupReason.LastBackupFailed,
  BackupReason.BackupOverdue,
  BackupReason.ArchivingFailing,
  BackupReason.RepositoryUnreachable,
  BackupReason.EncryptionKeyMissing,
]);

const sinceOf = (n: Notification) => n.spec.details?.since ?? "";

/** Decides the BackupFailed and BackupRecovered messages due for `p`. */
export function decideBackups(
  p: ScalePlatform,
  notes: readonly Notification[],
  fresh: (time: string | undefined) => time is string,
  make: MakeMessage,
): Decided[] {
  const c = p.status?.conditions?.find((x) => x.type === CONDITION_BACKUP_HEALTHY);
  if (!c) return [];
  const ref = `${p.metadata.namespace}/${p.metadata.name}`;
  const failed = notes
    .filter((n) => n.spec.event === "BackupFailed")
    .sort((a, b) => sinceOf(a).localeCompare(sinceOf(b)));
  const recovered = notes.filter((n) => n.spec.event === "BackupRecovered");
  const out: (Decided | undefined)[] = [];
  const since = c.lastTransitionTime;
  if (
    c.status === "False" &&
    FAILURES.has(c.reason) &&
    fresh(since) &&
    !failed.some((n) => sinceOf(n) === since)
  ) {
    out.push(
      make(
        "BackupFailed",
        `backup-failed|${since}`,
        `Backups of platform ${ref} are failing`,
        [`The backups of ${p.metadata.name} fail since ${since} (${c.reason}): ${c.message}`],
        { since, reason: c.reason, error: c.message.slice(0, 500) },
      ),
    );
  }
  const last = failed.at(-1);
  if (
    c.status === "True" &&
    last &&
    since >= sinceOf(last) &&
    !recovered.some((n) => sinceOf(n) === sinceOf(last))
  ) {
    const lastBackup = p.status?.backup?.lastSuccessfulBackup;
    out.push(
      make(
        "BackupRecovered",
        `backup-recovered|${sinceOf(last)}`,
        `Backups of platform ${ref} are healthy again`,
        [
          `The backups of ${p.metadata.name} are healthy again since ${since} (failing since ${sinceOf(last)}).`,
          ...(lastBackup
            ? [`Last backup: ${lastBackup.label} (${lastBackup.type}), finished ${lastBackup.stopTime}.`]
            : []),
        ],
        { since: sinceOf(last), recoveredAt: since },
      ),
    );
  }
  return out.filter((d): d is Decided => d !== undefined);
}

/** Decides a RestoreCompleted message for each of `restores` of `p` that succeeded and was not announced. */
export function decideRestores(
  p: ScalePlatform,
  restores: readonly ScalePlatformRestore[],
  notes: readonly Notification[],
  fresh: (time: string | undefined) => time is string,
  make: MakeMessage,
): Decided[] {
  const ref = `${p.metadata.namespace}/${p.metadata.name}`;
  const out: (Decided | undefined)[] = [];
  for (const r of restores) {
    const st = r.status;
    const done = st?.completionTime;
    if (st?.phase !== "Succeeded" || r.spec.platformName !== p.metadata.name || !fresh(done)) continue;
    const uid = r.metadata.uid ?? r.metadata.name ?? "";
    if (notes.some((n) => n.spec.event === "RestoreCompleted" && n.spec.details?.restoreUid === uid))
      continue;
    const downtime = st.downtimeSeconds !== undefined ? `, ${st.downtimeSeconds} s of downtime` : "";
    out.push(
      make(
        "RestoreCompleted",
        `restore|${uid}`,
        `Platform ${ref} was restored (${st.target ?? "latest"})`,
        [
          `The restore ${r.metadata.name} of ${p.metadata.name} to ${st.target ?? "the latest state"} completed at ${done}${downtime}.`,
        ],
        {
          restore: r.metadata.name ?? "",
          restoreUid: uid,
          target: st.target ?? "",
          completionTime: done,
          ...(st.downtimeSeconds !== undefined ? { downtimeSeconds: String(st.downtimeSeconds) } : {}),
        },
      ),
    );
  }
  return out.filter((d): d is Decided => d !== undefined);
}
