import { checkTarget } from "../api/restore-target.ts";
import { API_VERSION } from "../api/v1alpha1/kind.ts";
import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformRestore, ScalePlatformRestoreSpec } from "../api/v1alpha1/scaleplatformrestore.ts";
import { zoneOffset } from "../cron/zone.ts";
import type { KubeObject } from "../runtime/types.ts";

// The Recovery form of a platform, pure: the viewer's choice (latest, one of the recent backups,
// or a wall-clock time in the platform's timezone) → a ScalePlatformRestore; the target checked
// against the platform's recoverable window with the operator's own rule (checkTarget), so the
// form shows beside the field the message the operator would otherwise fail the restore with.

/** What the form posts: `target` is "latest", "time" or "backup:<label>"; `at` the wall time. */
export interface RestoreForm {
  target: string;
  at: string;
}

export type RestoreErrors = Record<"target" | "at", string[]>;

const WALL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;

/**
 * The instant a wall-clock time (`<input type="datetime-local">`: "2026-11-23T14:05[:30]") of
 * `zone` names; undefined when unreadable. In a DST gap the time is read with the offset before
 * the gap (it names the instant an hour later); in an overlap the earlier instant is taken.
 */
export function wallToInstant(local: string, zone: string): Date | undefined {
  const m = WALL.exec(local.trim());
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map((x) => Number(x ?? 0)) as number[];
  const wallMs = Date.UTC(y ?? 0, (mo ?? 1) - 1, d ?? 1, h ?? 0, mi ?? 0, s ?? 0);
  const back = new Date(wallMs);
  if (back.getUTCMonth() !== (mo ?? 1) - 1 || back.getUTCDate() !== d || (h ?? 0) > 23) return undefined;
  try {
    // Offsets from a day before and after cover both sides of any transition: the earlier
    // instant that reads back as this wall time wins; none (a gap) takes the offset before it.
    const before = wallMs - zoneOffset(zone, wallMs - 86_400_000);
    const after = wallMs - zoneOffset(zone, wallMs + 86_400_000);
    const exact = [before, after].filter((c) => c + zoneOffset(zone, c) === wallMs);
    return new Date(exact.length > 0 ? Math.min(...exact) : before);
  } catch {
    return undefined;
  }
}

/** The platform's timezone (backups and restores are shown in it). */
export const zoneOf = (p: ScalePlatform) =>
  (p.spec as { localization?: { timezone?: string } }).localization?.timezone ?? "UTC";

/** Name prefix of a restore made from the dashboard; the kind allows names of at most 40. */
export const restorePrefix = (platform: string) => `${platform.slice(0, 26)}-restore-`;

/**
 * The ScalePlatformRestore the form asks for, or the errors per field (the same rule and message
 * as the operator's target check).
 */
export function restoreFromForm(
  form: RestoreForm,
  platform: ScalePlatform,
  now: Date,
): { restore: KubeObject; errors?: undefined } | { restore?: undefined; errors: RestoreErrors } {
  const errors: RestoreErrors = { target: [], at: [] };
  const name = platform.metadata.name ?? "";
  const spec: Partial<ScalePlatformRestoreSpec> & { platformName: string } = { platformName: name };
  if (form.target === "time") {
    const at = wallToInstant(form.at, zoneOf(platform));
    if (!at) errors.at.push(`Enter a date and time (in ${zoneOf(platform)}).`);
    else spec.targetTime = at.toISOString().replace(/\.\d{3}Z$/, "Z");
  } else if (form.target.startsWith("backup:")) {
    spec.backupLabel = form.target.slice("backup:".length);
  } else if (form.target !== "latest") {
    errors.target.push("Choose the latest state, a backup or a point in time.");
  }
  if (errors.at.length === 0 && errors.target.length === 0) {
    const checked = checkTarget(spec as ScalePlatformRestoreSpec, platform.status?.backup, now);
    if (!checked.ok) (spec.targetTime ? errors.at : errors.target).push(checked.message);
  }
  if (errors.at.length > 0 || errors.target.length > 0) return { errors };
  return {
    restore: {
      apiVersion: API_VERSION,
      kind: "ScalePlatformRestore",
      metadata: { generateName: restorePrefix(name), namespace: platform.metadata.namespace ?? "" },
      spec,
    },
  };
}

/** Form field an API error's path points at. */
export function restoreFieldOf(path: string): string {
  if (path.startsWith("spec.targetTime")) return "at";
  if (path.startsWith("spec.backupLabel")) return "target";
  return "";
}

/** The restores of one platform, newest first. */
export function restoresOf(all: readonly ScalePlatformRestore[], platform: string): ScalePlatformRestore[] {
  return all
    .filter((r) => r.spec.platformName === platform)
    .sort((a, b) => (b.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? ""));
}

/** Whether a restore has not finished yet. */
export const restoreActive = (r: ScalePlatformRestore) =>
  r.status?.phase !== "Succeeded" && r.status?.phase !== "Failed";
