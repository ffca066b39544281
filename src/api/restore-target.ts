import { formatTime } from "../runtime/conditions.ts";
import type { BackupStatus } from "./v1alpha1/scaleplatform-backup.ts";
import type { ScalePlatformRestoreSpec } from "./v1alpha1/scaleplatformrestore.ts";

// The restore target against the platform's recoverable window. The window starts at the oldest
// backup's start (status.backup.recoverableFrom) and ends now: WAL is archived continuously, at
// most archiveTimeoutSeconds behind (status.backup.recoverableUntil is only as of the last backup
// run, so it would refuse every point since). A time target must also lie before the last
// transaction archived: PostgreSQL ends a recovery that does not reach its target with an error,
// which fails the Job and leaves the platform untouched.
//
// Every restore names the timeline it follows. PostgreSQL's default is the newest timeline in the
// repository, and a restore that promoted and was then abandoned (its Job failed after the
// promotion, or its cutover rolled back) left a newer one there, off the serving database's
// history: "latest" and a time follow the serving database's timeline instead; a backup label
// follows the timeline the backup was taken on (recovery stops where the backup ends). Pure.
// pgBackRest alone would start "latest" and a time from its newest backup whatever its timeline:
// the restore Job picks the newest that is an ancestor of the followed timeline (pick.ts).

/** A checked target: pgBackRest's restore options, or why it is refused. */
export type CheckedTarget =
  | { ok: true; args: string[]; target: string; window: string; pick?: BackupPick }
  | { ok: false; message: string; window: string };

/**
 * How the restore Job chooses the backup for latest and a time (pick.ts): the newest ancestor of
 * `timeline` that, when `before` (epoch seconds) is set, ended before it.
 */
export type BackupPick = { timeline: number; before?: number };

/** Human-readable window, as the refusal and the status print it. */
export function windowText(backup: BackupStatus | undefined, now: Date): string {
  if (!backup?.recoverableFrom) return "none (no backup yet)";
  return `${backup.recoverableFrom} to ${formatTime(now)}`;
}

/**
 * The timeline the platform's database serves on: the newest of what the backup runner saw
 * (status.backup.timeline) and the timelines of restores that cut over (`restored`). Timeline ids
 * only grow (a promotion takes the highest in the repository plus one) and only a cutover changes
 * the serving one, so the highest of these is the current one, even before a backup has seen it.
 */
export function servingTimeline(backup: BackupStatus | undefined, restored: number[]): number | undefined {
  const all = [backup?.timeline, ...restored].filter((t): t is number => typeof t === "number" && t > 0);
  return all.length ? Math.max(...all) : undefined;
}

/**
 * Checks `spec`'s target against `backup` (the platform's status.backup) at `now`; `timeline` is
 * the serving database's (servingTimeline), undefined when not known yet (PostgreSQL's default).
 */
export function checkTarget(
  spec: ScalePlatformRestoreSpec,
  backup: BackupStatus | undefined,
  now: Date,
  timeline?: number,
): CheckedTarget {
  const follow = timeline ? [`--target-timeline=${timeline}`] : [];
  const window = windowText(backup, now);
  if (!backup?.recoverableFrom || !backup.lastSuccessfulBackup)
    return { ok: false, window, message: "the platform has no backup yet: nothing to restore" };
  if (spec.backupLabel) {
    const known = backup.recentBackups?.map((b) => b.label) ?? [];
    if (!known.includes(spec.backupLabel))
      return {
        ok: false,
        window,
        message: `spec.backupLabel ${spec.backupLabel} is not one of the platform's backups (status.backup.recentBackups: ${known.join(", ") || "none"})`,
      };
    return {
      ok: true,
      window,
      target: `backup ${spec.backupLabel}`,
      // pgBackRest (PostgreSQL ≥ 12) writes recovery_target_timeline=current itself for
      // --type=immediate, and refuses --target-timeline with it.
      args: [`--set=${spec.backupLabel}`, "--type=immediate", "--target-action=promote"],
    };
  }
  if (spec.targetTime) {
    const t = Date.parse(spec.targetTime);
    const from = Date.parse(backup.recoverableFrom);
    if (Number.isNaN(t))
      return { ok: false, window, message: `spec.targetTime ${spec.targetTime} is not a time` };
    if (t < from || t > now.getTime())
      return {
        ok: false,
        window,
        message: `spec.targetTime ${spec.targetTime} is outside the recoverable window ${window}`,
      };
    const iso = new Date(t).toISOString().replace("T", " ").replace("Z", "+00");
    return {
      ok: true,
      window,
      target: `time ${spec.targetTime}`,
      args: ["--type=time", `--target=${iso}`, "--target-action=promote", ...follow],
      ...(timeline ? { pick: { timeline, before: Math.floor(t / 1000) } } : {}),
    };
  }
  // Latest: replay every archived WAL segment, then promote (PostgreSQL's end-of-recovery default).
  return { ok: true, window, target: "latest", args: follow, ...(timeline ? { pick: { timeline } } : {}) };
}
