import type { z } from "zod";
import { CONDITION_READY } from "../../api/v1alpha1/conditions.ts";
import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import type { ScalePlatform, ScalePlatformStatus } from "../../api/v1alpha1/scaleplatform.ts";
import { applyStatusIfChanged } from "../../runtime/apply.ts";
import { type Condition, setCondition } from "../../runtime/conditions.ts";
import type { ObjectKey, ReconcileContext, ReconcileResult } from "../../runtime/types.ts";
import { backupEvents } from "./backup/events.ts";
import { stepEvents } from "./events.ts";

// Status writes and what goes with them: Events and log lines are emitted only when the status
// really changed, so a steady platform makes no writes and records nothing.

const PLATFORM_TYPE = { apiVersion: API_VERSION, kind: "ScalePlatform" };

/**
 * Writes the status when it differs from the live one; then records the Events of the change
 * (`image` names the app image in the completion Event) and logs a phase change.
 */
export async function writeStatus(
  ctx: ReconcileContext,
  key: ObjectKey,
  platform: ScalePlatform,
  status: ScalePlatformStatus,
  image: string,
): Promise<void> {
  const prev = platform.status;
  if (!(await applyStatusIfChanged(ctx.client, PLATFORM_TYPE, platform, status))) return;
  for (const e of [...stepEvents(platform, prev, status, image), ...backupEvents(prev, status)]) {
    await (e.warning
      ? ctx.events.warning(platform, e.reason, e.action, e.note)
      : ctx.events.normal(platform, e.reason, e.action, e.note));
  }
  if (prev?.phase !== status.phase)
    ctx.log.info(
      { platform: key.name, from: prev?.phase, to: status.phase, steps: status.stepSummary },
      "phase changed",
    );
}

/** One line naming every spec field that failed validation. */
export function specIssues(error: z.ZodError): string {
  return error.issues
    .map((i) => `spec.${i.path.join(".")}: ${i.message}`)
    .join("; ")
    .slice(0, 1000);
}

/**
 * Refuses the platform (invalid spec, a child's name held by someone else): phase Failed,
 * `Ready=False` with `reason`, a Warning Event when that is news; requeues slowly.
 */
export async function refuse(
  ctx: ReconcileContext,
  platform: ScalePlatform,
  reason: string,
  message: string,
): Promise<ReconcileResult> {
  const prev = platform.status;
  const conditions = setCondition(
    prev?.conditions as Condition[] | undefined,
    { type: CONDITION_READY, status: "False", reason, message },
    platform.metadata.generation,
    ctx.clock.now(),
  );
  const status: ScalePlatformStatus = {
    ...prev,
    observedGeneration: platform.metadata.generation,
    phase: "Failed",
    conditions,
  };
  if (await applyStatusIfChanged(ctx.client, PLATFORM_TYPE, platform, status)) {
    await ctx.events.warning(platform, reason, "Validate", message);
    ctx.log.warn({ platform: platform.metadata.name, reason }, "platform refused");
  }
  // Terminal: nothing changes until the spec (or the conflicting object) does; look again slowly.
  return { requeueAfter: 60_000 };
}
