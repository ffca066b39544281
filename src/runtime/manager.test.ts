import { describe, expect, it } from "vitest";
import { silentLogger } from "../log.ts";
import { FakeKubeClient } from "./fake-client.ts";
import { FakeListWatch } from "./fake-listwatch.ts";
import { NotLeaderError } from "./gated-client.ts";
import { Manager } from "./manager.ts";

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

describe("Manager probe server", () => {
  it("/readyz is 503 until every informer has synced, then 200; /healthz and /metrics answer", async () => {
    const client = new FakeKubeClient();
    let releaseList: () => void = () => {};
    const gate = new Promise<void>((r) => {
      releaseList = r;
    });
    const mgr = new Manager({
      client,
      sourceFor: (t, ns) => {
        const src = new FakeListWatch(client, t.apiVersion, t.kind, ns);
        const list = src.list.bind(src);
        // Hold the first LIST so the test can look at /readyz before sync.
        src.list = async (p) => {
          await gate;
          return list(p);
        };
        return src;
      },
      log: silentLogger(),
      http: { host: "127.0.0.1", port: 0 },
      leaderElection: false,
    });
    mgr.addController({
      name: "cm",
      for: { apiVersion: "v1", kind: "ConfigMap" },
      reconciler: { reconcile: async () => ({}) },
    });
    await mgr.start();
    const port = mgr.port!;
    const before = await get(port, "/readyz");
    expect(before.status).toBe(503);
    expect(before.body).toContain("informers not synced: fake v1/ConfigMap");
    expect((await get(port, "/healthz")).status).toBe(200);
    releaseList();
    await mgr.informerFor({ apiVersion: "v1", kind: "ConfigMap" }).waitForSync();
    expect((await get(port, "/readyz")).status).toBe(200);
    const metrics = await get(port, "/metrics");
    expect(metrics.body).toContain("workqueue_depth");
    expect(metrics.body).toContain("controller_runtime_max_concurrent_reconciles");
    expect((await get(port, "/nope")).status).toBe(404);
    await mgr.stop();
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });

  it("refuses writes through its client once stopped", async () => {
    const client = new FakeKubeClient();
    const mgr = new Manager({
      client,
      sourceFor: (t, ns) => new FakeListWatch(client, t.apiVersion, t.kind, ns),
      log: silentLogger(),
      http: false,
      leaderElection: false,
    });
    await mgr.start();
    await mgr.client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", namespace: "ns" },
    });
    await mgr.stop();
    await expect(
      mgr.client.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "b", namespace: "ns" } }),
    ).rejects.toBeInstanceOf(NotLeaderError);
    expect(await mgr.done).toBe("shutdown");
  });
});
