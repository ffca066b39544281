import { afterEach, describe, expect, it } from "vitest";
import { kubeConnection } from "../../../src/runtime/kube.ts";
import type { KubeObject } from "../../../src/runtime/types.ts";
import { kubeConfig, useNamespace, waitFor } from "../../support/cluster.ts";
import { type OperatorProcess, probe, startOperator } from "./support.ts";

// A real operator process (the mirror fixture on the runtime's Manager): probes, metrics, and
// graceful shutdown on SIGTERM.

const ns = useNamespace("rt-op");
const { client } = kubeConnection(kubeConfig());
const running: OperatorProcess[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) {
    p.kill("SIGKILL");
    await p.exited;
  }
});

function source(
  name: string,
  data: Record<string, string>,
  annotations?: Record<string, string>,
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: ns.name, labels: { "runtime-test/source": "true" }, annotations },
    data,
  };
}

const mirror = (name: string) => client.get<KubeObject>("v1", "ConfigMap", ns.name, `${name}-mirror`);

describe("operator process", () => {
  it("/readyz is 503 until the informers have synced; /metrics shows reconcile counters and queue depth", async () => {
    await client.apply(source("alpha", { k: "v" }));
    const op = startOperator("solo", { MIRROR_NAMESPACE: ns.name, MIRROR_LIST_DELAY_MS: "3000" });
    running.push(op);
    const port = await op.port();
    const early = await probe(port, "/readyz");
    expect(early.status).toBe(503);
    expect(early.body).toContain("not synced");
    expect((await probe(port, "/healthz")).status).toBe(200);
    await waitFor(async () => (await probe(port, "/readyz")).status === 200, { what: "/readyz 200" });
    const m = await waitFor(mirror.bind(null, "alpha"), { what: "mirror of alpha" });
    expect(m.data).toEqual({ k: "v" });
    expect(m.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "ConfigMap",
      name: "alpha",
      controller: true,
    });

    const metrics = await waitFor(
      async () => {
        const body = (await probe(port, "/metrics")).body;
        return (
          /controller_runtime_reconcile_total\{controller="mirror",result="success"\} [1-9]/.test(body) &&
          body
        );
      },
      { what: "reconcile counter" },
    );
    expect(metrics).toMatch(/workqueue_depth\{controller="mirror",name="mirror"\} \d+/);
    expect(metrics).toMatch(
      /controller_runtime_reconcile_time_seconds_bucket\{[^}]*controller="mirror"[^}]*\} \d+/,
    );
    expect(metrics).toMatch(/cronscale_informer_last_event_timestamp_seconds\{resource="v1\/ConfigMap"\} \d/);
    expect(metrics).toContain("process_cpu_seconds_total");

    // Steady state: the mirror is not written again when nothing changed.
    const rv = m.metadata.resourceVersion;
    await client.apply({
      ...source("alpha", { k: "v" }),
      metadata: { ...source("alpha", {}).metadata, annotations: { touch: "1" } },
    });
    await op.waitForLine(
      (l) => l.msg === "mirror up to date" && l.name === "alpha",
      15_000,
      "no-op reconcile",
    );
    expect((await mirror("alpha"))?.metadata.resourceVersion).toBe(rv);

    op.kill("SIGTERM");
    expect(await op.exited).toBe(0);
  });

  it("SIGTERM drains the in-flight reconcile and releases the lease", async () => {
    const op = startOperator("drainer", {
      MIRROR_NAMESPACE: ns.name,
      MIRROR_LEADER_ELECTION: "1",
      MIRROR_LEASE_NAME: "drain-lease",
    });
    running.push(op);
    await op.waitForLine((l) => l.msg === "became leader", 30_000, "leadership");
    await client.apply(source("slow", { s: "1" }, { "runtime-test/delay-ms": "4000" }));
    await op.waitForLine(
      (l) => l.msg === "slow reconcile started" && l.name === "slow",
      30_000,
      "slow reconcile",
    );
    op.kill("SIGTERM");
    expect(await op.exited).toBe(0);
    const applied = op.lines.findIndex((l) => l.msg === "mirror applied" && l.name === "slow");
    const stopped = op.lines.findIndex((l) => l.msg === "manager stopped");
    expect(applied).toBeGreaterThan(-1);
    expect(stopped).toBeGreaterThan(applied);
    expect(op.lines.some((l) => l.msg === "leader lease released")).toBe(true);
    expect((await mirror("slow"))?.data).toEqual({ s: "1" });
    const lease = await client.get<KubeObject>("coordination.k8s.io/v1", "Lease", ns.name, "drain-lease");
    expect((lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity ?? "").toBe("");
  });
});
