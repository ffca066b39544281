import { platformAppName } from "../../../api/v1alpha1/names.ts";
import type { SCALING_TRIGGERS } from "../../../api/v1alpha1/scaleplatform.ts";
import type { KubeObject } from "../../../runtime/types.ts";
import { childMeta, nameOf, type PlatformInputs } from "./common.ts";

// The app's HorizontalPodAutoscaler (autoscaling/v2) within the plan's replica bounds. Pure.
//
// Targets are absolute averages per pod computed from the plan's limits (80 % of the CPU limit,
// 85 % of the memory limit) rather than "Utilization", because Utilization is relative to the
// requests, and requests are only a configurable fraction of the plan (see config.requestFraction):
// "CPU above 80 %" of the plans (README.md here, "Autoscaling") means 80 % of what the plan gives a pod.
//
// The request-queue-length and response-time metrics are added only when the cluster serves
// custom.metrics.k8s.io **and** that API has values of the metric for the app's pods: the HPA
// controller never scales down while one of its metrics is unavailable, so a metric without
// values would pin the app at its peak size.

/** CPU and memory thresholds of the plans (README.md here, "Autoscaling"), as fractions of a pod's limit. */
export const CPU_THRESHOLD = 0.8;
export const MEMORY_THRESHOLD = 0.85;

type Trigger = (typeof SCALING_TRIGGERS)[number];

/** The custom-metric triggers with the metric name each reads. */
export function customTriggers(inp: PlatformInputs): { trigger: Trigger; metric: string; target: string }[] {
  const cm = inp.config.customMetrics;
  return [
    { trigger: "RequestQueueLength", metric: cm.queueLength, target: cm.queueLengthTarget },
    { trigger: "ResponseTime", metric: cm.responseTime, target: cm.responseTimeTarget },
  ];
}

/** Whether the HPA reads this custom metric: the API is served and has values of it for the app's pods. */
export function customMetricUsable(inp: PlatformInputs, metric: string): boolean {
  return inp.features.customMetrics && inp.features.customMetricValues?.[metric] === true;
}

/** The triggers the HPA of these inputs has. */
export function activeTriggers(inp: PlatformInputs): Trigger[] {
  const custom = customTriggers(inp)
    .filter((c) => customMetricUsable(inp, c.metric))
    .map((c) => c.trigger);
  return ["CPU", "Memory", ...custom];
}

/** The HPA, or undefined while the platform is stopped (replicas are then 0 and ours). */
export function desiredHpa(inp: PlatformInputs): KubeObject | undefined {
  if (inp.spec.stopped) return undefined;
  const app = inp.budget.app;
  const cpuTarget = `${Math.floor(app.cpuMillis * CPU_THRESHOLD)}m`;
  const memTarget = `${Math.floor(app.memoryMiB * MEMORY_THRESHOLD)}Mi`;
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
  for (const c of customTriggers(inp)) {
    if (customMetricUsable(inp, c.metric)) metrics.push(pods(c.metric, c.target));
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
