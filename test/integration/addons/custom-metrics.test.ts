import { beforeAll, describe, expect, it } from "vitest";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import {
  addonEnv,
  apply,
  containerSecurity,
  deploymentReady,
  nodeImages,
  replicas,
  securityContext,
  skipReason,
} from "./support.ts";

// custom-metrics add-on: an HPA on a custom metric (a request queue's length, described by a
// Service) reads the value the test sets through the test metrics server's loopback endpoint:
// first absent (the HPA says it cannot get the metric), then high (scale up), then low (down).

const reason = await skipReason("custom-metrics");

/** Sets (or with `undefined` removes) the metric value of one object. */
async function setMetric(
  ns: string,
  resource: string,
  metric: string,
  name: string,
  value?: string,
): Promise<void> {
  const base = addonEnv("custom-metrics.env")?.CUSTOM_METRICS_URL;
  if (!base) throw new Error("no CUSTOM_METRICS_URL");
  const res = await fetch(`${base}/values/${ns}/${resource}/${metric}/${name}`, {
    method: value === undefined ? "DELETE" : "PUT",
    body: value,
  });
  if (res.status !== 204) throw new Error(`setting ${metric}: HTTP ${res.status} ${await res.text()}`);
}

/** The HPA's condition of `type` as "Status/Reason". */
async function hpaCondition(ns: string, name: string, type: string): Promise<string> {
  const r = await kubectl(["get", "hpa", name, "-o", "json"], { namespace: ns });
  const conds = (
    JSON.parse(r.stdout) as { status?: { conditions?: { type: string; status: string; reason: string }[] } }
  ).status?.conditions;
  const c = conds?.find((x) => x.type === type);
  return c ? `${c.status}/${c.reason}` : "";
}

describe.skipIf(reason)("custom-metrics add-on", () => {
  const ns = useNamespace("cmetrics");

  beforeAll(async () => {
    const shell = nodeImages("shell").shell;
    const labels = { app: "worker" };
    await apply(ns.name, [
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "worker", labels },
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              securityContext,
              terminationGracePeriodSeconds: 1,
              containers: [
                {
                  name: "worker",
                  image: shell,
                  imagePullPolicy: "Never",
                  command: ["sleep", "3600"],
                  securityContext: containerSecurity,
                },
              ],
            },
          },
        },
      },
      // The object the queue-length metric describes.
      { apiVersion: "v1", kind: "Service", metadata: { name: "queue" }, spec: { ports: [{ port: 80 }] } },
    ]);
    await deploymentReady(ns.name, "worker");
  }, 120_000);

  it("serves the value the test sets through the custom metrics API", async () => {
    await setMetric(ns.name, "services", "probe_value", "queue", "1500m");
    const r = await kubectl([
      "get",
      "--raw",
      `/apis/custom.metrics.k8s.io/v1beta2/namespaces/${ns.name}/services/queue/probe_value`,
    ]);
    // The object endpoint answers a MetricValueList holding the one value.
    const list = JSON.parse(r.stdout) as {
      kind: string;
      items: { describedObject: { kind: string; name: string }; value: string }[];
    };
    expect(list.kind).toBe("MetricValueList");
    expect(list.items).toHaveLength(1);
    const item = list.items[0]!;
    expect(item.describedObject).toMatchObject({ kind: "Service", name: "queue" });
    expect(item.value).toBe("1500m");
    await setMetric(ns.name, "services", "probe_value", "queue", undefined);
    const gone = await kubectl(
      [
        "get",
        "--raw",
        `/apis/custom.metrics.k8s.io/v1beta2/namespaces/${ns.name}/services/queue/probe_value`,
      ],
      { allowFailure: true },
    );
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toMatch(/NotFound|not found/);
  }, 60_000);

  it("an HPA on queue length sees the metric missing, then scales up and down with it", async () => {
    await apply(ns.name, [
      {
        apiVersion: "autoscaling/v2",
        kind: "HorizontalPodAutoscaler",
        metadata: { name: "worker" },
        spec: {
          scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "worker" },
          minReplicas: 1,
          maxReplicas: 4,
          metrics: [
            {
              type: "Object",
              object: {
                describedObject: { apiVersion: "v1", kind: "Service", name: "queue" },
                metric: { name: "queue_length" },
                // AverageValue: desired replicas = ceil(queue_length / 10).
                target: { type: "AverageValue", averageValue: "10" },
              },
            },
          ],
          behavior: {
            scaleUp: { stabilizationWindowSeconds: 0 },
            scaleDown: {
              stabilizationWindowSeconds: 5,
              policies: [{ type: "Percent", value: 100, periodSeconds: 5 }],
            },
          },
        },
      },
    ]);
    // No value yet: the HPA reports that it cannot read the metric and keeps the replicas.
    await waitFor(
      async () => (await hpaCondition(ns.name, "worker", "ScalingActive")) === "False/FailedGetObjectMetric",
      {
        timeoutMs: 60_000,
        intervalMs: 1_000,
        what: "ScalingActive=False/FailedGetObjectMetric",
      },
    );
    expect(await replicas(ns.name, "worker")).toBe(1);

    await setMetric(ns.name, "services", "queue_length", "queue", "30");
    await waitFor(async () => (await replicas(ns.name, "worker")) === 3, {
      timeoutMs: 90_000,
      intervalMs: 1_000,
      what: "3 replicas for a queue of 30",
    });
    expect(await hpaCondition(ns.name, "worker", "ScalingActive")).toBe("True/ValidMetricFound");

    await setMetric(ns.name, "services", "queue_length", "queue", "4");
    await waitFor(async () => (await replicas(ns.name, "worker")) === 1, {
      timeoutMs: 90_000,
      intervalMs: 1_000,
      what: "1 replica for a queue of 4",
    });
  }, 240_000);
});
