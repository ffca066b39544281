import { platformAppName } from "../../../api/v1alpha1/names.ts";
import type { SCALING_TRIGGERS } from "../../../api/v1alpha1/scaleplatform.ts";
import type { KubeObject } from "../../../runtime/types.ts";
import { childMeta, nameOf, type PlatformInputs } from "./common.ts";

// The app's HorizontalPodAutoscaler (autoscaling/v2) within the plan's replica bounds. Pure.
//
// Targets are absolute averages per pod computed from the plan's limits (80 % of the CPU limit,
// 85 % of the memory limit) rather than "Utilization", because Utilization is relative to the
// requests, and requests are only a configurable fraction of the plan (see config.requestFraction):
// "CPU above 80 %" of spec §8.2 means 80 % of what the plan gives a pod.
//
// The request-queue-length and response-time metrics are added only when the cluster serves
// custom.metrics.k8s.io: an HPA with an unavailable metric refuses to scale down.

/** CPU and memory thresholds of spec §8.2, as fractions of a pod's limit. */
export const CPU_THRESHOLD = 0.8;
export const MEMORY_THRESHOLD = 0.85;

type Trigger = (typeof SCALING_TRIGGERS)[number];

/** The triggers the HPA of these inputs has. */
export function activeTriggers(inp: PlatformInputs): Trigger[] {
  const base: Trigger[] = ["CPU", "Memory"];
  return inp.features.customMetrics ? [...base, "RequestQueueLength", "ResponseTime"] : base;
}

/** The HPA, or undefined while the platform is stopped (replicas are then 0 and ours). */
export function desiredHpa(inp: PlatformInputs): KubeObject | undefined {
  if (inp.spec.stopped) return undefined;
  const app = inp.budget.app;
  const cpuTarget = `${Math.floor(app.cpuMillis * CPU_THRESHOLD)}m`;
  const memTarget = `${Math.floor(app.memoryMiB * MEMORY_THRESHOLD)}Mi`;
  const cm = inp.config.customMetrics;
  const pods = (name: string, value: string) => ({
    type: "Pods",
    pods: { metric: { name }, target: { type: "AverageValue", averageValue: value } },
  });
  const metrics: unknown[] = [
    {
      type: "Resource",
      resource: { name: "cpu", target: { type: "AverageValue", averageValue: cpuTarget } },
    },
    {
      type: "Resource",
      resource: { name: "memory", target: { type: "AverageValue", averageValue: memTarget } },
    },
  ];
  if (inp.features.customMetrics) {
    metrics.push(pods(cm.queueLength, cm.queueLengthTarget), pods(cm.responseTime, cm.responseTimeTarget));
  }
  return {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: childMeta(inp, platformAppName(nameOf(inp)), "app"),
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: platformAppName(nameOf(inp)) },
      minReplicas: app.minReplicas,
      maxReplicas: app.maxReplicas,
      metrics,
    },
  };
}
