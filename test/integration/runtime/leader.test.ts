import { afterEach, describe, expect, it } from "vitest";
import { kubeConnection } from "../../../src/runtime/kube.ts";
import type { KubeObject } from "../../../src/runtime/types.ts";
import { kubeConfig, useNamespace, waitFor } from "../../support/cluster.ts";
import { type OperatorProcess, startOperator } from "./support.ts";

// Two operator processes with Lease leader election (lease 6 s, renew deadline 4 s, retry 1 s).

const LEASE_MS = 6000;
const ns = useNamespace("rt-leader");
const { client } = kubeConnection(kubeConfig());
const running: OperatorProcess[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) {
    p.kill("SIGCONT");
    p.kill("SIGKILL");
    await p.exited;
  }
});

function pair(lease: string): [OperatorProcess, OperatorProcess] {
  const env = { MIRROR_NAMESPACE: ns.name, MIRROR_LEADER_ELECTION: "1", MIRROR_LEASE_NAME: lease };
  const a = startOperator(`${lease}-a`, env);
  const b = startOperator(`${lease}-b`, env);
  running.push(a, b);
  return [a, b];
}

async function leaderOf(ops: OperatorProcess[]): Promise<[OperatorProcess, OperatorProcess]> {
  // Two Node processes starting at once on a busy 2-core machine can take a while to come up.
  const leader = await waitFor(() => ops.find((o) => o.lines.some((l) => l.msg === "became leader")), {
    timeoutMs: 90_000,
    what: "a leader",
  }).catch((err: unknown) => {
    const tails = ops.map((o) => `${o.identity}: ${JSON.stringify(o.lines.slice(-6))}`).join("\n");
    throw new Error(`${String(err)}\n${tails}`);
  });
  return [leader, ops.find((o) => o !== leader)!];
}

async function putSource(name: string, data: Record<string, string>): Promise<void> {
  await client.apply({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: ns.name, labels: { "runtime-test/source": "true" } },
    data,
  });
}

async function mirrorWrittenBy(
  name: string,
  identity: string,
  data: Record<string, string>,
): Promise<KubeObject> {
  return waitFor(
    async () => {
      const m = await client.get<KubeObject>("v1", "ConfigMap", ns.name, `${name}-mirror`);
      return (
        m?.metadata.annotations?.["runtime-test/writer"] === identity &&
        JSON.stringify(m.data) === JSON.stringify(data) &&
        m
      );
    },
    { timeoutMs: 30_000, what: `${name}-mirror written by ${identity}` },
  );
}

const applies = (o: OperatorProcess) => o.lines.filter((l) => l.msg === "mirror applied").length;

describe("leader election between two processes", () => {
  it("one reconciles; after kill -9 of the leader the other takes over within lease duration + a few seconds", async () => {
    const [leader, standby] = await leaderOf(pair("kill"));
    await putSource("s1", { v: "1" });
    await mirrorWrittenBy("s1", leader.identity, { v: "1" });
    expect(applies(standby)).toBe(0);
    expect(standby.lines.some((l) => l.msg === "became leader")).toBe(false);

    leader.kill("SIGKILL");
    const killedAt = Date.now();
    await standby.waitForLine((l) => l.msg === "became leader", LEASE_MS + 10_000, "takeover");
    const takeoverMs = Date.now() - killedAt;
    expect(takeoverMs).toBeLessThan(LEASE_MS + 4000);
    console.log(`leader election: standby took over ${takeoverMs} ms after kill -9 (lease ${LEASE_MS} ms)`);

    await putSource("s1", { v: "2" });
    await mirrorWrittenBy("s1", standby.identity, { v: "2" });
    const lease = await client.get<KubeObject>("coordination.k8s.io/v1", "Lease", ns.name, "kill");
    expect(lease?.spec).toMatchObject({ holderIdentity: standby.identity, leaseTransitions: 1 });
  });

  it("a process that lost the lease (paused past the lease) writes nothing more and exits", async () => {
    const [leader, standby] = await leaderOf(pair("pause"));
    await putSource("p1", { v: "1" });
    await mirrorWrittenBy("p1", leader.identity, { v: "1" });
    // Counted once the leader is idle: the echo of its own write may still be in flight when the
    // mirror is seen, and would finish (and log) after the resume without being a new write.
    await new Promise((r) => setTimeout(r, 1500));
    const before = applies(leader);

    leader.kill("SIGSTOP");
    await standby.waitForLine((l) => l.msg === "became leader", LEASE_MS + 10_000, "takeover during pause");
    // Changes while the old leader is frozen: its watch buffers them and will deliver them on resume.
    await putSource("p1", { v: "2" });
    await putSource("p2", { v: "1" });
    await mirrorWrittenBy("p1", standby.identity, { v: "2" });
    leader.kill("SIGCONT");
    await putSource("p3", { v: "1" });

    const code = await leader.exited;
    if (code !== 1)
      console.log(`old leader exited with ${code}; last lines: ${JSON.stringify(leader.lines.slice(-10))}`);
    expect(code, JSON.stringify(leader.lines.slice(-8))).toBe(1);
    expect(leader.lines.some((l) => l.msg === "leader lease lost")).toBe(true);
    expect(applies(leader)).toBe(before);
    await mirrorWrittenBy("p2", standby.identity, { v: "1" });
    await mirrorWrittenBy("p3", standby.identity, { v: "1" });
    // Nothing the old leader did after resuming reached the API: every mirror names the new leader.
    const mirrors = await client.list<KubeObject>("v1", "ConfigMap", ns.name, "runtime-test/mirror=true");
    for (const m of mirrors.filter((x) => x.metadata.name?.startsWith("p"))) {
      expect(m.metadata.annotations?.["runtime-test/writer"]).toBe(standby.identity);
    }
  });
});
