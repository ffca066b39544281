import {
  BackupReason,
  CONDITION_BACKUP_HEALTHY,
  CONDITION_BACKUP_OFFSITE,
} from "../../../api/v1alpha1/conditions.ts";
import type { ScalePlatformStatus } from "../../../api/v1alpha1/scaleplatform.ts";
import {
  type BackupRef,
  type BackupStatus,
  RECENT_BACKUPS_MAX,
} from "../../../api/v1alpha1/scaleplatform-backup.ts";
import { nextRuns } from "../../../cron/index.ts";
import {
  type Condition,
  type ConditionInput,
  formatTime,
  setCondition,
} from "../../../runtime/conditions.ts";
import type { PlatformInputs } from "../desired/common.ts";
import { noBackupReason } from "./default.ts";
import type { BackupObservation, RunnerSummary } from "./observe.ts";
import { repositoryUrl } from "./pgbackrest.ts";

// status.backup and the BackupHealthy and BackupOffsite conditions, derived on
// every pass from the backup Jobs (their outcome and the runner's summary of the repository) and
// the encryption key. Nothing is remembered but the key's Secret name: once a key existed, a
// missing key is an error, never a reason to make a new one. Pure.

/** A scheduled run this long overdue (no successful backup since) turns BackupHealthy False. */
export const OVERDUE_GRACE_MS = 30 * 60_000;

const epoch = (s: number | undefined) => (s ? formatTime(new Date(s * 1000)) : undefined);

function backupRef(row: NonNullable<RunnerSummary["backups"]>[number]): BackupRef | undefined {
  const [label, type, start, stop, size, delta] = row;
  if (!label || (type !== "full" && type !== "diff" && type !== "incr") || !start || !stop) return undefined;
  const ref: BackupRef = { label, type, startTime: epoch(start) ?? "", stopTime: epoch(stop) ?? "" };
  if (typeof size === "number") ref.sizeBytes = size;
  if (typeof delta === "number") ref.repoSizeBytes = delta;
  return ref;
}

/** Errors that mean pgBackRest could not reach or use the repository (endpoint, TLS, credentials). */
const REPOSITORY_ERROR =
  /HostConnectError|unable to (connect|resolve|get address)|HTTP request failed|\b403\b|AccessDenied|InvalidAccessKeyId|SignatureDoesNotMatch|NoSuchBucket|certificate|TLS|timeout|FileOpenError|PathOpenError/i;

/** Reason of a failed run's message. */
export function failureReason(message: string): string {
  return REPOSITORY_ERROR.test(message) ? BackupReason.RepositoryUnreachable : BackupReason.LastBackupFailed;
}

/** The status.backup and conditions for a platform with spec.backup. */
export function backupStatus(
  inp: PlatformInputs,
  o: BackupObservation,
  now: Date,
): { backup: BackupStatus; healthy: ConditionInput; offsite: ConditionInput } {
  const spec = inp.spec.backup;
  if (!spec) throw new Error("backupStatus needs spec.backup");
  const ns = inp.platform.metadata.namespace ?? "";
  const name = inp.platform.metadata.name ?? "";
  const zone = inp.spec.localization?.timezone ?? "UTC";
  const finished = o.runs.filter((r) => r.finishedAt !== undefined);
  const latestSummary = finished.find((r) => r.summary?.backups !== undefined)?.summary;
  const recent = (latestSummary?.backups ?? []).map(backupRef).filter((b): b is BackupRef => !!b);
  const last = recent[0];
  const prevKey = inp.platform.status?.backup?.encryptionKeySecretName;

  const backup: BackupStatus = { repository: repositoryUrl(spec, ns, name) };
  if (o.keyPresent) backup.encryptionKeySecretName = o.keySecretName;
  else if (prevKey) backup.encryptionKeySecretName = prevKey;
  if (last) backup.lastSuccessfulBackup = last;
  const failed = finished.find((r) => !r.succeeded && !r.summary?.cancelled);
  if (failed?.finishedAt && (!last || failed.finishedAt > Date.parse(last.stopTime))) {
    backup.lastFailedBackup = {
      time: formatTime(new Date(failed.finishedAt)),
      job: failed.job,
      message: (failed.summary?.error ?? failed.message ?? "backup Job failed").slice(0, 1000),
    };
  }
  const from = epoch(latestSummary?.oldestStart);
  if (from) backup.recoverableFrom = from;
  const archived = latestSummary?.archiver?.lastArchived;
  const until = Math.max(archived ?? 0, last ? Date.parse(last.stopTime) / 1000 : 0);
  if (until > 0) backup.recoverableUntil = epoch(until);
  if (archived) backup.lastArchivedTime = epoch(archived);
  // Kept from the last pass when the newest summaries lack it (a database that is not the
  // repository's, e.g. initialised anew after its volume was lost): restores follow it.
  const timeline =
    finished.find((r) => r.summary?.timeline !== undefined)?.summary?.timeline ??
    inp.platform.status?.backup?.timeline;
  if (timeline) backup.timeline = timeline;
  if (!inp.spec.stopped) {
    const [full] = nextRuns(spec.schedules.full, zone, now, 1);
    const [incr] = nextRuns(spec.schedules.incremental, zone, now, 1);
    if (full) backup.nextFullBackup = formatTime(full);
    if (incr) backup.nextIncrementalBackup = formatTime(incr);
  }
  if (recent.length > 0) backup.recentBackups = recent.slice(0, RECENT_BACKUPS_MAX);

  const healthy = (status: Condition["status"], reason: string, message: string): ConditionInput => ({
    type: CONDITION_BACKUP_HEALTHY,
    status,
    reason,
    message: message.slice(0, 1000),
  });
  const lastText = last ? `last backup ${last.label} (${last.type}) at ${last.stopTime}` : "no backup yet";
  const running = o.runs.find((r) => r.finishedAt === undefined);
  const newest = finished[0];
  const arch = latestSummary?.archiver;
  let cond: ConditionInput;
  if (inp.spec.stopped) {
    cond = healthy(
      "True",
      BackupReason.PlatformStopped,
      `platform stopped: no backups run while the database is stopped (its data does not change); ${lastText}`,
    );
  } else if (!o.keyPresent) {
    cond = healthy(
      "False",
      BackupReason.EncryptionKeyMissing,
      `Secret ${o.keySecretName} with the encryption passphrase is missing: no backup can run${prevKey ? " and existing backups cannot be read without it; restore it from your copy" : ""}`,
    );
  } else if (newest && !newest.succeeded && !newest.summary?.cancelled && backup.lastFailedBackup) {
    const msg = backup.lastFailedBackup.message;
    cond = healthy("False", failureReason(msg), `backup Job ${newest.job} failed: ${msg}; ${lastText}`);
  } else if (arch && arch.failedCount > 0 && (arch.lastFailed ?? 0) > (arch.lastArchived ?? 0)) {
    cond = healthy(
      "False",
      BackupReason.ArchivingFailing,
      `WAL archiving fails since ${epoch(arch.lastFailed)} (${arch.failedCount} failures); ${lastText}`,
    );
  } else if (!last) {
    cond = healthy(
      "False",
      BackupReason.NoBackupYet,
      running ? `first backup running (Job ${running.job})` : "no backup has completed yet",
    );
  } else {
    const due = overdueSince(spec.schedules, zone, Date.parse(last.startTime), now);
    cond =
      due && !running
        ? healthy(
            "False",
            BackupReason.BackupOverdue,
            `a backup was due at ${formatTime(due)} and none succeeded since; ${lastText}`,
          )
        : healthy("True", BackupReason.BackupsCurrent, lastText);
  }
  const offsite: ConditionInput = spec.repository.s3
    ? {
        type: CONDITION_BACKUP_OFFSITE,
        status: "True",
        reason: BackupReason.ObjectStorage,
        message: `backups in ${backup.repository}`,
      }
    : {
        type: CONDITION_BACKUP_OFFSITE,
        status: "False",
        reason: BackupReason.VolumeRepository,
        message: `backups are on volume ${spec.repository.volume?.claimName} of this cluster: no disaster recovery if the cluster or its storage is lost; use an S3 repository`,
      };
  return { backup, healthy: cond, offsite };
}

/** The first scheduled time after `lastStart` if it passed more than the grace ago, else undefined. */
export function overdueSince(
  schedules: { full: string; incremental: string },
  zone: string,
  lastStartMs: number,
  now: Date,
): Date | undefined {
  const after = new Date(lastStartMs);
  const due = [schedules.full, schedules.incremental]
    .map((s) => nextRuns(s, zone, after, 1)[0])
    .filter((d): d is Date => d !== undefined)
    .sort((a, b) => a.getTime() - b.getTime())[0];
  return due && now.getTime() - due.getTime() > OVERDUE_GRACE_MS ? due : undefined;
}

/**
 * The status with the backup parts set: status.backup and the two conditions with a backup in
 * force; without, BackupHealthy False (Disabled: opted out; NotConfigured: no repository, with how
 * to configure one), and no status.backup.
 */
export function withBackupStatus(
  inp: PlatformInputs,
  status: ScalePlatformStatus,
  o: BackupObservation | undefined,
  now: Date,
): ScalePlatformStatus {
  const gen = inp.platform.metadata.generation;
  let conditions = (status.conditions as Condition[] | undefined) ?? [];
  if (!inp.spec.backup || !o) {
    conditions = setCondition(
      conditions.filter((c) => c.type !== CONDITION_BACKUP_OFFSITE),
      { type: CONDITION_BACKUP_HEALTHY, status: "False", ...noBackupReason(inp.backupSource, inp.config) },
      gen,
      now,
    );
    const { backup: _gone, ...rest } = status;
    return { ...rest, conditions };
  }
  const b = backupStatus(inp, o, now);
  conditions = setCondition(conditions, b.healthy, gen, now);
  conditions = setCondition(conditions, b.offsite, gen, now);
  return { ...status, backup: b.backup, conditions };
}
