import type { Delivery, NotificationStatus } from "../api/v1alpha1/notification.ts";
import { setCondition } from "../runtime/conditions.ts";

// The status of a Notification as a function of its deliveries: phase and Delivered condition.

/** Phase and Delivered condition of a set of deliveries. */
export function summarize(
  deliveries: Delivery[],
  prev: NotificationStatus | undefined,
  failureThreshold: number,
  generation: number | undefined,
  now: Date,
): NotificationStatus {
  const pending = deliveries.filter((d) => d.state === "Pending");
  const failed = deliveries.filter((d) => d.state === "Failed");
  const failing = pending.filter((d) => d.attempts >= failureThreshold);
  let phase: NotificationStatus["phase"];
  let cond: { status: "True" | "False"; reason: string; message: string };
  if (pending.length === 0 && failed.length === 0) {
    phase = "Delivered";
    cond = { status: "True", reason: "Delivered", message: `delivered to ${deliveries.length} target(s)` };
  } else if (pending.length === 0) {
    phase = "Failed";
    cond = {
      status: "False",
      reason: "DeliveryGaveUp",
      message: failed
        .map((d) => `${d.target}: ${d.message ?? ""}`)
        .join("; ")
        .slice(0, 1000),
    };
  } else if (failing.length > 0) {
    phase = "Retrying";
    cond = {
      status: "False",
      reason: "DeliveryFailing",
      message: failing
        .map((d) => `${d.target}: ${d.attempts} attempts, ${d.message ?? ""}`)
        .join("; ")
        .slice(0, 1000),
    };
  } else {
    phase = pending.some((d) => d.attempts > 0) ? "Retrying" : "Pending";
    cond = {
      status: "False",
      reason: "DeliveryPending",
      message: `${pending.length} target(s) not yet delivered`,
    };
  }
  return {
    phase,
    deliveries,
    conditions: setCondition(prev?.conditions, { type: "Delivered", ...cond }, generation, now),
    observedGeneration: generation,
  };
}

/** JSON with sorted keys: the API server need not keep the key order it was sent. */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(
          Object.entries(x as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)),
        )
      : x,
  );
}
