import { describe, expect, it } from "vitest";
import type { ScalePlatform } from "../../api/v1alpha1/scaleplatform.ts";
import type { FakeKubeClient } from "../../runtime/fake-client.ts";
import type { KubeObject } from "../../runtime/types.ts";
import {
  clusterObjects,
  makeCtx,
  makePlatform,
  serveCustomMetric,
  settle,
  TEST_CONFIG,
  testReconciler,
} from "./testing.ts";

// Custom-metric HPA triggers only when the custom metrics API has values for the app's pods: the
// HPA controller never scales down while one of its metrics is unavailable.

const key = { namespace: "ns", name: "shop" };
const QUEUE = "http_request_queue_length";
const LATENCY = "http_response_time_ms";
const TTL_MS = TEST_CONFIG.featureRecheckSeconds * 1000;

function setup(customMetrics: boolean) {
  const env = makeCtx([makePlatform("shop"), ...clusterObjects({ customMetrics })]);
  const rec = testReconciler({ recheckMs: TTL_MS });
  const podNames = () => env.client.all("v1", "Pod").map((p) => p.metadata.name ?? "");
  return { ...env, rec, podNames };
}

const getPlatform = async (c: FakeKubeClient) =>
  (await c.get("cronscale.io/v1alpha1", "ScalePlatform", "ns", "shop")) as ScalePlatform;
const hpaMetrics = async (c: FakeKubeClient) => {
  const hpa = (await c.get("autoscaling/v2", "HorizontalPodAutoscaler", "ns", "shop")) as KubeObject;
  return (hpa.spec as { metrics: { type: string; pods?: { metric: { name: string } } }[] }).metrics.map(
    (m) => (m.type === "Pods" ? `Pods:${m.pods?.metric.name}` : m.type),
  );
};
const autoscaling = (p: ScalePlatform) => p.status?.conditions?.find((c) => c.type === "AutoscalingActive");

describe("custom-metric triggers", () => {
  it("without a custom metrics API: CPU and memory only, and the API is not asked", async () => {
    const s = setup(false);
    const queue = serveCustomMetric(s.client, QUEUE, s.podNames);
    await settle(s);
    expect(await hpaMetrics(s.client)).toEqual(["Resource", "Resource"]);
    const p = await getPlatform(s.client);
    expect(p.status?.activeScalingTriggers).toEqual(["CPU", "Memory"]);
    expect(autoscaling(p)?.reason).toBe("ResourceMetricsOnly");
    expect(queue.queries()).toBe(0);
  });

  it("API served but no values for the app's pods (404 and empty list): CPU and memory, reason CustomMetricsMissing", async () => {
    const s = setup(true);
    // QUEUE answers an empty MetricValueList (no pod has a value); LATENCY is not served at all (404).
    const queue = serveCustomMetric(s.client, QUEUE, () => []);
    await settle(s);
    expect(await hpaMetrics(s.client)).toEqual(["Resource", "Resource"]);
    const p = await getPlatform(s.client);
    expect(p.status?.phase).toBe("Running");
    expect(p.status?.activeScalingTriggers).toEqual(["CPU", "Memory"]);
    expect(autoscaling(p)).toMatchObject({
      status: "True",
      reason: "CustomMetricsMissing",
      message: `triggers: CPU, Memory; the custom metrics API serves no ${QUEUE} and no ${LATENCY} for the app's pods, so they are left out (an HPA does not scale down while a metric is unavailable)`,
    });
    expect(queue.selectors[0]).toBe("cronscale.io/platform=shop,app.kubernetes.io/component=app");
  });

  it("values for one metric: only that one joins the HPA; values appearing later are picked up after featureRecheckSeconds", async () => {
    const s = setup(true);
    const queue = serveCustomMetric(s.client, QUEUE, s.podNames);
    let latencyPods: string[] = [];
    serveCustomMetric(s.client, LATENCY, () => latencyPods);
    await settle(s);
    // Before the first pod existed the queue metric had no values either; within the cache TTL
    // the answer stands, so look again after it.
    s.clock.advance(TTL_MS);
    await settle(s, 1);
    expect(await hpaMetrics(s.client)).toEqual(["Resource", "Resource", `Pods:${QUEUE}`]);
    let p = await getPlatform(s.client);
    expect(p.status?.activeScalingTriggers).toEqual(["CPU", "Memory", "RequestQueueLength"]);
    expect(autoscaling(p)).toMatchObject({
      reason: "CustomMetricsMissing",
      message: `triggers: CPU, Memory, RequestQueueLength; the custom metrics API serves no ${LATENCY} for the app's pods, so it is left out (an HPA does not scale down while a metric is unavailable)`,
    });

    // Cached per platform: passes within the TTL do not ask again, and write nothing.
    const asked = queue.queries();
    s.client.clearWrites();
    for (let i = 0; i < 3; i++) {
      s.clock.advance(15_000);
      await s.rec.reconcile(key, s.ctx);
    }
    expect(queue.queries()).toBe(asked);
    expect(s.client.writes).toEqual([]);

    // The adapter starts serving response times: after the TTL both custom metrics are in.
    latencyPods = s.podNames();
    s.clock.advance(TTL_MS);
    await s.rec.reconcile(key, s.ctx);
    expect(queue.queries()).toBe(asked + 1);
    expect(await hpaMetrics(s.client)).toEqual(["Resource", "Resource", `Pods:${QUEUE}`, `Pods:${LATENCY}`]);
    p = await getPlatform(s.client);
    expect(p.status?.activeScalingTriggers).toEqual(["CPU", "Memory", "RequestQueueLength", "ResponseTime"]);
    expect(autoscaling(p)?.reason).toBe("AllMetrics");
  });

  it("a failing custom metrics API counts as no values (and the reconcile goes on)", async () => {
    const s = setup(true);
    s.client.injectError = (verb) => (verb === "getRaw" ? new Error("503 service unavailable") : undefined);
    await settle(s);
    expect(await hpaMetrics(s.client)).toEqual(["Resource", "Resource"]);
    const p = await getPlatform(s.client);
    expect(p.status?.phase).toBe("Running");
    expect(autoscaling(p)?.reason).toBe("CustomMetricsMissing");
  });
});
