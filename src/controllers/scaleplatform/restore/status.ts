import type {
  ScalePlatformRestore,
  ScalePlatformRestoreStatus,
} from "../../../api/v1alpha1/scaleplatformrestore.ts";
import { type Condition, formatTime, setCondition } from "../../../runtime/conditions.ts";
import type { KubeObject } from "../../../runtime/types.ts";

// Status transitions of a ScalePlatformRestore, and what is read from its Job and the database
// pod. Pure.

/** Condition types of a restore. */
export const RESTORE_VALID = "Valid";
export const RESTORE_COMPLETE = "Complete";

/** `status` with `phase`, `message` and the Complete condition (reason: `reason` or the phase; plus `extra`) set. */
export function withPhase(
  r: ScalePlatformRestore,
  phase: NonNullable<ScalePlatformRestoreStatus["phase"]>,
  message: string,
  now: Date,
  extra: Partial<ScalePlatformRestoreStatus> = {},
  valid?: { status: Condition["status"]; reason: string; message: string },
  reason?: string,
): ScalePlatformRestoreStatus {
  let conditions = r.status?.conditions as Condition[] | undefined;
  const gen = r.metadata.generation;
  if (valid) conditions = setCondition(conditions, { type: RESTORE_VALID, ...valid }, gen, now);
  const complete =
    phase === "Succeeded"
      ? { status: "True" as const, reason: "Succeeded" }
      : { status: "False" as const, reason: reason ?? phase };
  conditions = setCondition(conditions, { type: RESTORE_COMPLETE, ...complete, message }, gen, now);
  const s: ScalePlatformRestoreStatus = {
    ...r.status,
    ...extra,
    observedGeneration: gen,
    phase,
    message: message.slice(0, 1024),
    conditions,
  };
  if (phase === "Succeeded" || phase === "Failed") s.completionTime ??= formatTime(now);
  return s;
}

/** A Job's outcome: running, or finished with success and the termination message. */
export function jobOutcome(
  job: KubeObject,
  pods: KubeObject[],
): { done: false } | { done: true; ok: boolean; message: string } {
  const conds = (job.status as { conditions?: { type: string; status: string; message?: string }[] })
    ?.conditions;
  const complete = conds?.some((c) => c.type === "Complete" && c.status === "True");
  const failed = conds?.find((c) => c.type === "Failed" && c.status === "True");
  if (!complete && !failed) return { done: false };
  const term = pods
    .flatMap(
      (p) =>
        (p.status as { containerStatuses?: { state?: { terminated?: { message?: string } } }[] })
          ?.containerStatuses ?? [],
    )
    .map((c) => c.state?.terminated?.message)
    .find((m) => m);
  const text = (term ?? failed?.message ?? "").trim();
  // The log tail (FallbackToLogsOnError): pgBackRest's ERROR and PostgreSQL's FATAL lines say why.
  const errors = text.split("\n").filter((l) => /ERROR|FATAL/.test(l));
  return {
    done: true,
    ok: Boolean(complete),
    message: (errors.length ? errors.join("\n") : text).slice(-800),
  };
}

/** The database pod runs on `claim`, is ready, and was created at or after `since`. */
export function dbServesFrom(pod: KubeObject | undefined, claim: string, since: number): boolean {
  if (!pod || pod.metadata.deletionTimestamp) return false;
  const created = Date.parse(pod.metadata.creationTimestamp ?? "");
  const volumes = (pod.spec as { volumes?: { persistentVolumeClaim?: { claimName: string } }[] })?.volumes;
  const onClaim = volumes?.some((v) => v.persistentVolumeClaim?.claimName === claim) ?? false;
  const ready = (pod.status as { conditions?: { type: string; status: string }[] })?.conditions?.some(
    (c) => c.type === "Ready" && c.status === "True",
  );
  return onClaim && Boolean(ready) && created >= since - 1000;
}

/** The timeline the restore Job promoted on, from its summary (`{"ok":true,…,"timeline":N}`). */
export function restoredTimeline(summary: string): number | undefined {
  try {
    const t = (JSON.parse(summary) as { timeline?: unknown }).timeline;
    return typeof t === "number" && Number.isInteger(t) && t > 0 ? t : undefined;
  } catch {
    return undefined;
  }
}
