/** A status condition as in metav1.Condition. */
export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** The caller-supplied part of a condition. */
export interface ConditionInput {
  type: string;
  status: Condition["status"];
  reason: string;
  message?: string;
}

/**
 * Kubernetes stores metav1.Time with second precision; writing milliseconds would make every
 * comparison with the stored value differ and defeat "zero writes at steady state".
 */
export function formatTime(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * Returns a new condition list with `input` set: lastTransitionTime moves only when the status
 * flips (or the condition is new); reason, message and observedGeneration always update.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === input.type);
  const prev = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: input.message ?? "",
    lastTransitionTime:
      prev && prev.status === input.status && prev.lastTransitionTime
        ? prev.lastTransitionTime
        : formatTime(now),
  };
  if (generation !== undefined) next.observedGeneration = generation;
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

/** Finds a condition by type. */
export function getCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True when the condition exists with status "True". */
export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === "True";
}

/** Returns a new list without the condition of that type. */
export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}
