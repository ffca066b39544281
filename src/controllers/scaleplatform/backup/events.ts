import { BackupReason, CONDITION_BACKUP_HEALTHY } from "../../../api/v1alpha1/conditions.ts";
import type { ScalePlatformStatus } from "../../../api/v1alpha1/scaleplatform.ts";
import type { PlatformEvent } from "../events.ts";

// Events of a backup status change — the seam for notifications: BackupSucceeded (a new backup
// in the repository), BackupFailed (a run failed), BackupRecovered (BackupHealthy back to True
// after a problem) and a Warning named by the reason whenever BackupHealthy turns False or its
// reason changes (RepositoryUnreachable, EncryptionKeyMissing, ...). Pure.

const ACTION = "Backup";

/** Events for the change from `prev` to `next` of status.backup and BackupHealthy. */
export function backupEvents(
  prev: ScalePlatformStatus | undefined,
  next: ScalePlatformStatus,
): PlatformEvent[] {
  const out: PlatformEvent[] = [];
  const [was, is] = [prev?.backup, next.backup];
  const ok = is?.lastSuccessfulBackup;
  if (ok && ok.label !== was?.lastSuccessfulBackup?.label) {
    const window = is?.recoverableFrom
      ? `; recoverable from ${is.recoverableFrom} to ${is.recoverableUntil}`
      : "";
    out.push({
      warning: false,
      reason: "BackupSucceeded",
      action: ACTION,
      note: `${ok.type} backup ${ok.label} finished at ${ok.stopTime}${window}`,
    });
  }
  const failed = is?.lastFailedBackup;
  if (failed && failed.time !== was?.lastFailedBackup?.time) {
    out.push({
      warning: true,
      reason: "BackupFailed",
      action: ACTION,
      note: `Job ${failed.job}: ${failed.message}`,
    });
  }
  const cond = (s: ScalePlatformStatus | undefined) =>
    s?.conditions?.find((c) => c.type === CONDITION_BACKUP_HEALTHY);
  const [c0, c1] = [cond(prev), cond(next)];
  if (
    c1?.status === "False" &&
    c1.reason !== BackupReason.NotConfigured &&
    c1.reason !== BackupReason.Disabled &&
    (c0?.status !== "False" || c0.reason !== c1.reason)
  ) {
    out.push({ warning: true, reason: c1.reason, action: ACTION, note: c1.message ?? "" });
  } else if (
    c1?.status === "True" &&
    c0?.status === "False" &&
    c0.reason !== BackupReason.NotConfigured &&
    c0.reason !== BackupReason.Disabled
  ) {
    out.push({
      warning: false,
      reason: "BackupRecovered",
      action: ACTION,
      note: `backups healthy again (was ${c0.reason}): ${c1.message}`,
    });
  }
  return out;
}
