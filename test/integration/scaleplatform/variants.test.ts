import { beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../../src/runtime/types.ts";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { addonEnv, addonScript, missingAddon, skipReason } from "../addons/support.ts";
import {
  apiKey,
  applyPlatform,
  appPodsField,
  getObj,
  getPlatform,
  replicasOwners,
  waitPhase,
} from "./helpers.ts";
import { servedViaIngress, usePlatformOperator } from "./operator.ts";

// What the platform becomes depending on the cluster: cert-manager or not (TLS waits, nothing
// else blocked), a custom-metrics API or not (which HPA triggers are active), and the database
// volume's fate under pvcRetention Delete. Each branch asserts what this cluster really offers.

const reason = await skipReason("dns", "storage", "ingress");
const noMetrics = reason ? "no cluster" : await missingAddon("metrics");
if (!reason && noMetrics) process.stderr.write(`skipping the HPA load test: ${noMetrics}\n`);
const NAME = "tiny";
const HOST = "tiny.platform.test";

type PodMetrics = { metadata: { name: string }; containers: { name: string; usage: { cpu: string } }[] };

/**
 * What the resource metrics API (metrics-server, fed by the kubelet) reports for the pods of
 * `ns`: "pod/container=cpu" each, or why there is nothing. The HPA's CPU trigger reads it.
 */
async function podCpu(ns: string): Promise<{ busy: boolean; text: string }> {
  const r = await kubectl(["get", "--raw", `/apis/metrics.k8s.io/v1beta1/namespaces/${ns}/pods`], {
    allowFailure: true,
  });
  if (r.code !== 0) return { busy: false, text: r.stderr.trim() };
  const items = (JSON.parse(r.stdout) as { items?: PodMetrics[] }).items ?? [];
  const usage = items.flatMap((p) => p.containers.map((c) => `${p.metadata.name}/${c.name}=${c.usage.cpu}`));
  return {
    busy: items.some((p) => p.containers.some((c) => c.usage.cpu !== "0")),
    text: usage.length ? usage.join(", ") : "no pods",
  };
}

/** Sets (or, with undefined, removes) a Pods metric for every pod of the namespace. */
async function setPodsMetric(ns: string, metric: string, value: string | undefined): Promise<void> {
  const base = addonEnv("custom-metrics.env")?.CUSTOM_METRICS_URL;
  if (!base) throw new Error("no CUSTOM_METRICS_URL");
  const res = await fetch(`${base}/values/${ns}/pods/${metric}/*`, {
    method: value === undefined ? "DELETE" : "PUT",
    body: value,
  });
  if (res.status !== 204) throw new Error(`setting ${metric}: HTTP ${res.status} ${await res.text()}`);
}

type Platform = Awaited<ReturnType<typeof getPlatform>>;
const cond = (p: Platform, type: string) => p.status?.conditions?.find((c) => c.type === type);
const hpaMetricTypes = async (ns: string) =>
  (
    ((await getObj<KubeObject>(ns, "hpa", NAME))?.spec as { metrics: { type: string }[] } | undefined)
      ?.metrics ?? []
  ).map((m) => m.type);

describe.skipIf(reason)("ScalePlatform on what the cluster offers", () => {
  const ns = useNamespace("splatv", { "pod-security.kubernetes.io/enforce": "restricted" });
  // The operator's lowest re-check of cert-manager and the metrics APIs: the tests below wait for
  // it to notice each change.
  usePlatformOperator(ns, { featureRecheckSeconds: 5 });
  let certManager = false;
  let customMetrics = false;

  beforeAll(async () => {
    certManager = (await missingAddon("cert-manager")) === undefined;
    customMetrics = (await missingAddon("custom-metrics")) === undefined;
    process.stderr.write(
      `scaleplatform variants: cert-manager=${certManager} custom-metrics=${customMetrics}\n`,
    );
    // A Custom plan small enough that two cores can push an app pod past 80 % of its CPU limit:
    // 3/4 of 1 vCPU over 3 replicas = 250m per pod, HPA target 200m.
    const r = await applyPlatform(ns.name, NAME, {
      plan: "Custom",
      resources: { cpu: "1", memory: "2Gi", storage: "1Gi", maxReplicas: 3 },
      domains: { platform: HOST },
      database: { pvcRetention: "Delete" },
    });
    if (r.code !== 0) throw new Error(r.stderr);
    // Values for the app pods' request metrics, as an adapter over the app's own metrics would
    // serve them: with them the custom triggers are usable.
    if (customMetrics) {
      await setPodsMetric(ns.name, "http_request_queue_length", "2");
      await setPodsMetric(ns.name, "http_response_time_ms", "40");
    }
    await waitPhase(ns.name, NAME, "Running", 420_000);
  }, 600_000);

  it("TLS: a Certificate with cert-manager; without it a condition says TLS waits and nothing else is blocked", async () => {
    const p = await getPlatform(ns.name, NAME);
    const tls = p.status?.conditions?.find((c) => c.type === "TLSReady");
    const step = p.status?.steps?.find((s) => s.name === "CertificatesGenerated");
    if (certManager) {
      expect(tls).toMatchObject({ status: "True", reason: "CertificateReady" });
      expect(step?.state).toBe("Done");
    } else {
      expect(tls).toMatchObject({ status: "False", reason: "WaitingForCertManager" });
      expect(step?.state).toBe("Skipped");
      expect(p.status?.urls?.platform).toBe(`http://${HOST}/`);
    }
    expect(p.status?.phase).toBe("Running");
    expect((await servedViaIngress(HOST, "/readyz")).status).toBe(200);
  });

  it("HPA triggers: CPU and memory, plus queue length and response time only where the custom-metrics API has values", async () => {
    // The operator re-checks the metrics API every featureRecheckSeconds (5 s here).
    const want = customMetrics ? "CPU,Memory,RequestQueueLength,ResponseTime" : "CPU,Memory";
    const p = await waitFor(
      async () => {
        const cur = await getPlatform(ns.name, NAME);
        return (cur.status?.activeScalingTriggers ?? []).join() === want ? cur : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000, what: `triggers ${want}` },
    );
    const metrics = await hpaMetricTypes(ns.name);
    if (customMetrics) {
      expect(metrics).toEqual(["Resource", "Resource", "Pods", "Pods"]);
      expect(cond(p, "AutoscalingActive")?.reason).toBe("AllMetrics");
      // The HPA controller itself reads the custom metrics the operator put in.
      await waitFor(
        async () => {
          const hpa = await getObj<KubeObject>(ns.name, "hpa", NAME);
          const cur =
            (hpa?.status as { currentMetrics?: { type: string }[] } | undefined)?.currentMetrics ?? [];
          return cur.filter((m) => m.type === "Pods").length === 2 ? true : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 1000, what: "the HPA to read both Pods metrics" },
      );
      // Values gone: the operator leaves the metrics out again rather than blocking scale-down.
      await setPodsMetric(ns.name, "http_request_queue_length", undefined);
      const less = await waitFor(
        async () => {
          const cur = await getPlatform(ns.name, NAME);
          return (cur.status?.activeScalingTriggers ?? []).join() === "CPU,Memory,ResponseTime"
            ? cur
            : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 1000, what: "queue length left out" },
      );
      expect(cond(less, "AutoscalingActive")?.reason).toBe("CustomMetricsMissing");
      expect(cond(less, "AutoscalingActive")?.message).toContain("http_request_queue_length");
      expect(await hpaMetricTypes(ns.name)).toEqual(["Resource", "Resource", "Pods"]);
      await setPodsMetric(ns.name, "http_request_queue_length", "2");
    } else {
      expect(metrics).toEqual(["Resource", "Resource"]);
      expect(cond(p, "AutoscalingActive")?.reason).toBe("ResourceMetricsOnly");
    }
  }, 200_000);

  it.skipIf(noMetrics)(
    "the HPA scales the app up under CPU load within the plan's bounds and back down after it; the operator never writes replicas",
    async (ctx) => {
      const replicasOf = async () =>
        ((await getObj<KubeObject>(ns.name, "deployment", NAME))?.spec as { replicas?: number } | undefined)
          ?.replicas ?? 0;
      let stop = false;
      // Real API load: product pages read with the platform's key (past its plan's rate the
      // service answers 429, which costs it CPU too), sent to the app pod itself. Through the
      // Ingress, the edge's per-client rate limit (by plan) answers most of one client's
      // requests before they reach the app: on a fast machine the app then stays near 100m,
      // under the HPA's 200m target.
      const headers = { Authorization: `Bearer ${await apiKey(ns.name, NAME)}` };
      const ips = await appPodsField(ns.name, NAME, "{.status.podIP}");
      if (!ips.length) throw new Error("the app pod has no IP");
      const load = async () => {
        while (!stop)
          await fetch(`http://${ips[0]}:8080/api/v1/products?limit=50`, {
            headers,
            signal: AbortSignal.timeout(10_000),
          })
            .then((r) => r.arrayBuffer())
            .catch(() => undefined);
      };
      const workers = Array.from({ length: 4 }, load);
      let peak = 0;
      try {
        // Under load, the metrics API must report CPU for the platform's pods, or the HPA has
        // nothing to act on. A node whose kubelet gives no pod usage reports none or 0: say so
        // and skip, rather than wait four minutes for a scale-up that cannot come.
        let last = "";
        const busy = await waitFor(
          async () => {
            const m = await podCpu(ns.name);
            last = m.text;
            return m.busy ? true : undefined;
          },
          { timeoutMs: 90_000, intervalMs: 3000, what: "CPU usage of the platform's pods" },
        ).catch(() => false);
        if (!busy) {
          const why = `under load the resource metrics API reports no CPU for the pods of ${ns.name} after 90 s (${last}): the node's kubelet gives no pod usage`;
          process.stderr.write(`skipping the HPA load test: ${why}\n`);
          ctx.skip(why);
          return;
        }
        peak = await waitFor(async () => ((await replicasOf()) > 1 ? replicasOf() : undefined), {
          timeoutMs: 240_000,
          intervalMs: 2000,
          what: "the HPA to scale the app up",
        }).catch(async (err: unknown) => {
          // Say what the HPA and the metrics API saw.
          const hpa = await getObj<KubeObject>(ns.name, "hpa", NAME);
          const seen = JSON.stringify(
            (hpa?.status as { currentMetrics?: unknown } | undefined)?.currentMetrics,
          );
          const why = err instanceof Error ? err.message : String(err);
          throw new Error(`${why}; HPA metrics ${seen}; pods ${(await podCpu(ns.name)).text}`);
        });
      } finally {
        stop = true;
        await Promise.all(workers);
      }
      expect(peak).toBeLessThanOrEqual(3); // the plan's maxReplicas
      const hpa = await getObj<KubeObject>(ns.name, "hpa", NAME);
      expect(hpa?.spec).toMatchObject({ minReplicas: 1, maxReplicas: 3 });
      // Load gone: back to minReplicas (the cluster's HPA downscale stabilization is 30 s).
      await waitFor(async () => ((await replicasOf()) === 1 ? true : undefined), {
        timeoutMs: 240_000,
        intervalMs: 2000,
        what: "the HPA to scale the app back to 1",
      });
      const dep = await getObj<KubeObject>(ns.name, "deployment", NAME);
      expect(replicasOwners(dep!)).not.toContain("cronscale");
      expect((await getPlatform(ns.name, NAME)).status?.phase).toBe("Running");
    },
    640_000,
  );

  // The other side of both branches on the same cluster: cert-manager uninstalled (CRDs and all)
  // and the custom-metrics APIService removed while the platform runs, then both installed again.
  it("a cluster that loses cert-manager and its custom-metrics API: TLS waits, the HPA keeps CPU and memory, nothing else is blocked; both come back", async (t) => {
    if (!certManager || !customMetrics) {
      process.stderr.write(
        "skipping the add-on removal test: it needs both cert-manager and custom-metrics\n",
      );
      t.skip();
    }
    await addonScript("custom-metrics", "down");
    await addonScript("cert-manager", "uninstall");
    try {
      const p = await waitFor(
        async () => {
          const cur = await getPlatform(ns.name, NAME);
          return cond(cur, "TLSReady")?.reason === "WaitingForCertManager" &&
            (cur.status?.activeScalingTriggers ?? []).join() === "CPU,Memory"
            ? cur
            : undefined;
        },
        {
          timeoutMs: 120_000,
          intervalMs: 1000,
          what: "TLS waiting on cert-manager and CPU/Memory triggers",
        },
      );
      expect(cond(p, "TLSReady")?.status).toBe("False");
      expect(cond(p, "AutoscalingActive")?.reason).toBe("ResourceMetricsOnly");
      expect(p.status?.urls?.platform).toBe(`http://${HOST}/`);
      expect(await hpaMetricTypes(ns.name)).toEqual(["Resource", "Resource"]);
      // Nothing else is blocked: the URLs in the app's configuration turn http, so the app rolls
      // (Updating) and is Running again, served through the Ingress.
      await waitPhase(ns.name, NAME, "Running", 120_000);
      expect((await servedViaIngress(HOST, "/readyz")).status).toBe(200);
    } finally {
      await addonScript("cert-manager", "up");
      await addonScript("custom-metrics", "up");
    }
    // The custom-metrics server starts empty: serve the app pods' values again.
    await setPodsMetric(ns.name, "http_request_queue_length", "2");
    await setPodsMetric(ns.name, "http_response_time_ms", "40");
    const back = await waitFor(
      async () => {
        const cur = await getPlatform(ns.name, NAME);
        return cond(cur, "TLSReady")?.reason === "CertificateReady" &&
          (cur.status?.activeScalingTriggers ?? []).length === 4
          ? cur
          : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1000, what: "the Certificate Ready again and all four triggers" },
    );
    expect(back.status?.urls?.platform).toBe(`https://${HOST}/`);
    expect(await hpaMetricTypes(ns.name)).toEqual(["Resource", "Resource", "Pods", "Pods"]);
    // The URLs turn https again: another roll, then Running.
    await waitPhase(ns.name, NAME, "Running", 120_000);
  }, 420_000);

  it("pvcRetention Delete: deleting the platform deletes the database volume too", async () => {
    const pvc = `data-${NAME}-db-0`;
    expect(await getObj(ns.name, "pvc", pvc)).toBeDefined();
    await kubectl(["delete", "scaleplatform", NAME, "--wait=true", "--timeout=60s"], { namespace: ns.name });
    await waitFor(
      async () =>
        (await getObj(ns.name, "pvc", pvc)) === undefined &&
        (await getObj(ns.name, "statefulset", `${NAME}-db`)) === undefined,
      {
        timeoutMs: 180_000,
        intervalMs: 1000,
        what: "the StatefulSet and its PVC to be deleted",
      },
    );
  }, 200_000);
});
