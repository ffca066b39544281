import { platformAppName } from "../../../api/v1alpha1/names.ts";
import type { KubeObject } from "../../../runtime/types.ts";
import { childMeta, nameOf, type PlatformInputs, selectorLabels } from "./common.ts";

// The app's PodDisruptionBudget (policy/v1): a drain or another voluntary eviction keeps app pods
// serving. Where the plan runs at least two app pods, at least one stays up (minAvailable: 1).
// With one app pod at minimum (Standard, Professional, a Custom plan at 1), minAvailable: 1 would
// block every drain of its node for good (cluster upgrades hang on it), so the budget allows one
// pod at a time (maxUnavailable: 1): the pod is rescheduled, a short outage that a single-pod
// plan accepts. Unhealthy pods may always be evicted, so a crash-looping pod never pins a node.
// The database runs one instance: a budget for it would only block drains, so it has none.
// None while stopped (no pods). Pure.

/** The app's PodDisruptionBudget, or undefined while the platform is stopped. */
export function desiredAppPdb(inp: PlatformInputs): KubeObject | undefined {
  if (inp.spec.stopped) return undefined;
  const keepOne = inp.budget.app.minReplicas >= 2;
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: childMeta(inp, platformAppName(nameOf(inp)), "app"),
    spec: {
      ...(keepOne ? { minAvailable: 1 } : { maxUnavailable: 1 }),
      selector: { matchLabels: selectorLabels(inp, "app") },
      unhealthyPodEvictionPolicy: "AlwaysAllow",
    },
  };
}
