import { beforeAll, describe, expect, it } from "vitest";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import {
  apply,
  containerSecurity,
  deploymentReady,
  httpGetScript,
  nodeImages,
  replicas,
  securityContext,
  skipReason,
  webApp,
} from "./support.ts";

// metrics add-on: metrics-server scrapes the real kubelet, so `kubectl top` shows numbers and a
// CPU HorizontalPodAutoscaler scales a Deployment up under real load and back down after it.
// Timing: the cluster's HPA controller syncs every 5 s (up.sh: HPA_SYNC_PERIOD) and
// metrics-server scrapes every 10 s; the HPA here sets its own scale-down stabilisation window
// (10 s, instead of the cluster default 30 s, itself shortened from 5 min).

const reason = await skipReason("metrics");

/** A Deployment whose pod sends 4 concurrent streams of CPU-burning requests to `ip` until deleted. */
function loadGenerator(image: string, ip: string): object {
  const one = httpGetScript(ip, 80, "/burn?ms=200").replaceAll("\n", "; ");
  const script = `for i in 1 2 3 4; do ( while true; do ( ${one} ) >/dev/null 2>&1 || sleep 0.2; done ) & done; wait`;
  const labels = { app: "load" };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "load", labels },
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
              name: "load",
              image,
              imagePullPolicy: "Never",
              command: ["/bin/bash", "-c", script],
              securityContext: containerSecurity,
            },
          ],
        },
      },
    },
  };
}

describe.skipIf(reason)("metrics add-on (metrics-server)", () => {
  const ns = useNamespace("metrics");
  let shell = "";

  beforeAll(async () => {
    const images = nodeImages("shell", "python");
    shell = images.shell;
    await apply(ns.name, webApp("burner", images.python, { cpu: "100m" }));
    await deploymentReady(ns.name, "burner");
  }, 180_000);

  it("kubectl top shows CPU and memory of pods and the node", async () => {
    const pod = (
      await kubectl(["get", "pods", "-l", "app=burner", "-o", "jsonpath={.items[0].metadata.name}"], {
        namespace: ns.name,
      })
    ).stdout;
    // metrics-server needs two scrapes of a new pod before it reports it.
    const line = await waitFor(
      async () => {
        const r = await kubectl(["top", "pod", "--no-headers"], { namespace: ns.name, allowFailure: true });
        return r.stdout.split("\n").find((l) => l.startsWith(`${pod} `));
      },
      { timeoutMs: 90_000, intervalMs: 2_000, what: `kubectl top pod ${pod}` },
    );
    const [, cpu, mem] = line.trim().split(/\s+/);
    expect(cpu).toMatch(/^\d+m$/);
    expect(mem).toMatch(/^\d+Mi$/);
    // A running Go server holds some memory; metrics-server reports the working set.
    expect(Number(mem?.replace("Mi", ""))).toBeGreaterThan(0);
    const node = await kubectl(["top", "node", "--no-headers"]);
    expect(node.stdout).toMatch(/^\S+\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%/m);
  }, 120_000);

  it("a CPU HPA scales the Deployment up under load and down after it", async () => {
    await apply(ns.name, [
      {
        apiVersion: "autoscaling/v2",
        kind: "HorizontalPodAutoscaler",
        metadata: { name: "burner" },
        spec: {
          scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "burner" },
          minReplicas: 1,
          maxReplicas: 3,
          metrics: [
            {
              type: "Resource",
              resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } },
            },
          ],
          behavior: {
            scaleUp: { stabilizationWindowSeconds: 0 },
            scaleDown: {
              stabilizationWindowSeconds: 10,
              policies: [{ type: "Percent", value: 100, periodSeconds: 5 }],
            },
          },
        },
      },
    ]);
    // Idle: the HPA reads a utilisation and stays at one replica.
    await waitFor(
      async () => {
        const r = await kubectl(
          [
            "get",
            "hpa",
            "burner",
            "-o",
            "jsonpath={.status.currentMetrics[0].resource.current.averageUtilization}",
          ],
          {
            namespace: ns.name,
          },
        );
        return r.stdout !== "" ? r.stdout : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 2_000, what: "the HPA to read CPU utilisation" },
    );
    expect(await replicas(ns.name, "burner")).toBe(1);

    const ip = (
      await kubectl(["get", "service", "burner", "-o", "jsonpath={.spec.clusterIP}"], { namespace: ns.name })
    ).stdout;
    await apply(ns.name, [loadGenerator(shell, ip)]);
    await waitFor(async () => (await replicas(ns.name, "burner")) >= 2, {
      timeoutMs: 180_000,
      intervalMs: 2_000,
      what: "the HPA to scale burner up under load",
    });
    const up = await kubectl(["get", "hpa", "burner", "-o", "json"], { namespace: ns.name });
    const status = (JSON.parse(up.stdout) as { status: { desiredReplicas: number } }).status;
    expect(status.desiredReplicas).toBeGreaterThanOrEqual(2);

    await kubectl(["delete", "deployment", "load", "--wait=true", "--timeout=60s"], { namespace: ns.name });
    await waitFor(async () => (await replicas(ns.name, "burner")) === 1, {
      timeoutMs: 180_000,
      intervalMs: 2_000,
      what: "the HPA to scale burner back to 1 after the load stopped",
    });
    const events = await kubectl(
      [
        "get",
        "events",
        "--field-selector",
        "involvedObject.name=burner",
        "-o",
        "jsonpath={.items[*].reason}",
      ],
      {
        namespace: ns.name,
      },
    );
    expect(events.stdout).toContain("SuccessfulRescale");
  }, 420_000);
});
