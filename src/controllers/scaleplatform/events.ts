import { CONDITION_CONFIGURATION_READY } from "../../api/v1alpha1/conditions.ts";
import {
  PLATFORM_STEPS,
  type ScalePlatform,
  type ScalePlatformStatus,
} from "../../api/v1alpha1/scaleplatform.ts";

// Events of a status change: one per step that finished or failed, one per phase change (the
// completion Event is the hook for the completion email/webhook of docs/notifications.md), and one when the
// referenced Secrets stop (Warning) or start (Normal) resolving. Pure.

/** One Event to record. */
export interface PlatformEvent {
  warning: boolean;
  reason: string;
  action: string;
  note: string;
}

/** Events for the change from `prev` to `next`. */
export function stepEvents(
  platform: ScalePlatform,
  prev: ScalePlatformStatus | undefined,
  next: ScalePlatformStatus,
  image: string,
): PlatformEvent[] {
  const out: PlatformEvent[] = [];
  const action = prev?.deployedTime ? "Update" : "Provision";
  for (const step of next.steps ?? []) {
    const before = prev?.steps?.find((s) => s.name === step.name)?.state;
    if (before === step.state) continue;
    const n = PLATFORM_STEPS.indexOf(step.name) + 1;
    if (step.state === "Done" || step.state === "Skipped")
      out.push({
        warning: false,
        reason: step.name,
        action,
        note: `step ${n}/7 ${step.state === "Done" ? "done" : "skipped"}${step.message ? `: ${step.message}` : ""}`,
      });
    else if (step.state === "Failed")
      out.push({
        warning: true,
        reason: `${step.name}Failed`,
        action,
        note: `step ${n}/7 failed: ${step.message ?? ""}`,
      });
  }
  const cond = (st: ScalePlatformStatus | undefined) =>
    st?.conditions?.find((c) => c.type === CONDITION_CONFIGURATION_READY);
  const [was, is] = [cond(prev), cond(next)];
  if (is?.status === "False" && (was?.status !== "False" || was.message !== is.message))
    out.push({ warning: true, reason: is.reason, action: "Configure", note: is.message ?? "" });
  else if (is?.status === "True" && was?.status === "False")
    out.push({ warning: false, reason: is.reason, action: "Configure", note: is.message ?? "" });
  if (prev?.phase !== next.phase) {
    const created = platform.metadata.creationTimestamp as string | undefined;
    if (next.phase === "Running" && !prev?.deployedTime && created && next.deployedTime) {
      const secs = Math.round((Date.parse(next.deployedTime) - Date.parse(created)) / 1000);
      out.push({
        warning: false,
        reason: "Deployed",
        action,
        note: `platform deployed in ${secs}s (plan ${platform.spec.plan}, image ${image})`,
      });
    } else if (next.phase === "Running") {
      out.push({
        warning: false,
        reason: "Running",
        action,
        note: `platform running (plan ${platform.spec.plan})`,
      });
    } else if (next.phase === "Failed") {
      out.push({
        warning: true,
        reason: "Failed",
        action,
        note: "a deployment step failed; see status.steps",
      });
    } else if (next.phase) {
      out.push({ warning: false, reason: next.phase, action, note: `platform ${next.phase.toLowerCase()}` });
    }
  }
  return out;
}
