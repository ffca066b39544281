import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_VERSION } from "../../../src/api/v1alpha1/kind.ts";
import type { ScheduledTask } from "../../../src/api/v1alpha1/scheduledtask.ts";
import type { KubeClient } from "../../../src/runtime/client.ts";
import { kubeConnection } from "../../../src/runtime/kube.ts";
import { kubeConfig, useNamespace, waitFor } from "../../support/cluster.ts";
import { installCrds, localTaskConfig, startOperator, type TestOperator } from "./operator.ts";

// What the operator asks of the API server once its caches have synced, on the real cluster:
// no read for a new task (no GET answering 404), its two children and one status write, and no
// write at all at steady state — also across a forced relist and a restart.

const ns = useNamespace("stask-steady");
const { client } = kubeConnection(kubeConfig());
const COUNT = 12;

/** The operator's client, counting requests by verb. */
function counting(): { wrap: (c: KubeClient) => KubeClient; calls: string[] } {
  const calls: string[] = [];
  const note = <T>(what: string, p: Promise<T>): Promise<T> => {
    calls.push(what);
    return p;
  };
  const wrap = (c: KubeClient): KubeClient => ({
    get: (...a) => note(`get ${a[1]} ${a[3]}`, c.get(...a)),
    list: (...a) => note(`list ${a[1]}`, c.list(...a)),
    getRaw: (...a) => note(`getRaw ${a[0]}`, c.getRaw(...a)),
    apply: (o, opts) => note(`apply ${o.kind} ${o.metadata.name}`, c.apply(o, opts)),
    applyStatus: (o) => note(`applyStatus ${o.kind} ${o.metadata.name}`, c.applyStatus(o)),
    create: (o) => note(`create ${o.kind} ${o.metadata.name}`, c.create(o)),
    replace: (o) => note(`replace ${o.kind} ${o.metadata.name}`, c.replace(o)),
    delete: (...a) => note(`delete ${a[1]} ${a[3]}`, c.delete(...a)),
  });
  return { wrap, calls };
}

function task(name: string, env = false): ScheduledTask {
  return {
    apiVersion: API_VERSION,
    kind: "ScheduledTask",
    metadata: { name, namespace: ns.name },
    spec: {
      schedule: "0 0 1 1 *",
      language: "Bash",
      plan: "Micro",
      script: `echo ${name}`,
      ...(env ? { env: [{ name: "TOKEN", value: `secret-${name}` }] } : {}),
    },
  } as ScheduledTask;
}

async function allRunning(n: number): Promise<boolean> {
  const tasks = await client.list<ScheduledTask>(API_VERSION, "ScheduledTask", ns.name);
  const cronJobs = await client.list("batch/v1", "CronJob", ns.name);
  return tasks.filter((t) => t.status?.phase === "Running").length === n && cronJobs.length === n;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let op: TestOperator | undefined;

beforeAll(async () => {
  await installCrds();
  for (let i = 0; i < COUNT; i++) await client.apply(task(`t${i}`, i % 2 === 0));
}, 120_000);
afterAll(async () => {
  await op?.stop();
});

describe("ScheduledTask operator at steady state", () => {
  it("converges, then writes and reads nothing across a forced relist and a restart; a new task costs 3 writes and no read", async () => {
    const config = localTaskConfig({}, []);
    const first = counting();
    op = await startOperator(ns.name, config, { wrapClient: first.wrap, watchdogMs: 3000 });
    await waitFor(() => allRunning(COUNT), { timeoutMs: 60_000, what: `${COUNT} tasks Running` });
    // Cold start: nothing is read through the client (caches answer), nothing is missing twice.
    expect(first.calls.filter((c) => /^(get|list) /.test(c))).toEqual([]);
    expect(first.calls.filter((c) => c.startsWith("applyStatus")).length).toBe(COUNT);
    await sleep(2000);

    // Steady state, through at least one watchdog relist of every informer.
    first.calls.length = 0;
    const relistsBefore = op.logLines.filter((l) => l.includes('"relisting"')).length;
    await sleep(9000);
    expect(op.logLines.filter((l) => l.includes('"relisting"')).length).toBeGreaterThan(relistsBefore);
    expect(first.calls).toEqual([]);

    // A new task: its two children and one status write, no read.
    await client.apply(task("fresh"));
    await waitFor(() => allRunning(COUNT + 1), { timeoutMs: 30_000, what: "fresh Running" });
    await sleep(2000);
    expect(first.calls).toEqual([
      "apply ConfigMap fresh-script-1",
      "apply CronJob fresh",
      "applyStatus ScheduledTask fresh",
    ]);
    await op.stop();

    // Restart: a fresh operator with fresh caches finds everything as it should be.
    const second = counting();
    op = await startOperator(ns.name, config, { wrapClient: second.wrap });
    await waitFor(async () => op?.manager.ready().ok, { timeoutMs: 30_000, what: "caches synced" });
    await sleep(5000);
    expect(second.calls).toEqual([]);
  }, 180_000);
});
