// Chaos: repeated `kill -9` of the operator during a cold convergence (docs/benchmarks.md).
//
// N ScheduledTasks are stored in a fresh namespace; then, --kills times, the operator (dist/ as
// shipped, with the chart's heap limits) starts and is SIGKILLed a random 0.5-4 s after it is
// ready (caches synced, workers writing: so every kill lands in the convergence, not in the
// process start; `--from-start` counts the delay from the spawn instead); then it starts once
// more and runs until every task is Running with its CronJob. Printed findings: per
// task exactly one CronJob and one script ConfigMap, each controlled by that task's uid; no child
// without its task (orphan); no duplicate; the writes the survivor needed to finish.
//
//   KUBECONFIG=... npm run bench:chaos-kill -- --count 1000 --kills 20
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { parseArgs } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { parse } from "yaml";
import { scheduledTaskSpecSchema } from "../../src/api/v1alpha1/scheduledtask.ts";
import { RealKubeClient } from "../../src/runtime/client.ts";
import { KubeTransport } from "../../src/runtime/rest.ts";
import type { KubeObject } from "../../src/runtime/types.ts";

const { values } = parseArgs({
  options: {
    count: { type: "string", default: "200" },
    kills: { type: "string", default: "20" },
    seed: { type: "string", default: "1" },
    "from-start": { type: "boolean", default: false },
  },
});
const N = Number(values.count);
const KILLS = Number(values.kills);
const root = new URL("../../", import.meta.url).pathname;
const chart = parse(readFileSync(`${root}charts/cronscale/values.yaml`, "utf8")) as { nodeOptions?: string };
const kc = new KubeConfig();
kc.loadFromDefault();
const client = new RealKubeClient(KubeTransport.create(kc));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let rnd = Number(values.seed);
const random = () => {
  rnd = (rnd * 1103515245 + 12345) % 2147483648;
  return rnd / 2147483648;
};

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/** Resolves when the operator answers /readyz (or has exited). */
async function ready(op: ChildProcess, port: number): Promise<void> {
  while (op.exitCode === null && op.signalCode === null) {
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await sleep(100);
  }
}

function startOperator(ns: string, port = 0): ChildProcess {
  return spawn(
    process.execPath,
    [
      `${root}dist/main.js`,
      "--namespace",
      ns,
      "--metrics-port",
      String(port),
      "--metrics-bind-address",
      "127.0.0.1",
      "--log-level",
      "error",
    ],
    {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, NODE_OPTIONS: chart.nodeOptions ?? "" },
    },
  );
}

async function pool(n: number, workers: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

const controller = (o: KubeObject) => o.metadata.ownerReferences?.find((r) => r.controller)?.uid;

async function main() {
  const ns = `chaos-${randomBytes(3).toString("hex")}`;
  await client.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  const spec = scheduledTaskSpecSchema.parse({
    schedule: "0 0 1 1 *",
    language: "Bash",
    plan: "Micro",
    script: "echo hi",
  });
  await pool(N, 16, (i) =>
    client.apply({
      apiVersion: "cronscale.io/v1alpha1",
      kind: "ScheduledTask",
      metadata: { name: `t${i}`, namespace: ns },
      spec,
    }),
  );
  const t0 = performance.now();
  const cronJobsAtKill: number[] = [];
  for (let k = 0; k < KILLS; k++) {
    const port = await freePort();
    const op = startOperator(ns, port);
    if (!values["from-start"]) await ready(op, port);
    await sleep(500 + random() * 3500);
    const exited = new Promise((r) => op.once("exit", r));
    if (op.exitCode === null && op.signalCode === null) op.kill("SIGKILL");
    await exited;
    if ((k + 1) % 10 === 0 || k === KILLS - 1) {
      cronJobsAtKill.push((await client.list("batch/v1", "CronJob", ns)).length);
      console.error(`kill ${k + 1}/${KILLS}: ${cronJobsAtKill.at(-1)} CronJobs`);
    }
  }
  const cronJobsAfterKills = (await client.list("batch/v1", "CronJob", ns)).length;
  const op = startOperator(ns);
  let running = 0;
  for (;;) {
    const tasks = await client.list("cronscale.io/v1alpha1", "ScheduledTask", ns);
    running = tasks.filter((t) => (t.status as { phase?: string } | undefined)?.phase === "Running").length;
    const cjs = await client.list("batch/v1", "CronJob", ns);
    if (running === N && cjs.length >= N) break;
    await sleep(5000);
  }
  const seconds = (performance.now() - t0) / 1000;
  op.kill("SIGTERM");
  await new Promise((r) => op.once("exit", r));

  const tasks = await client.list("cronscale.io/v1alpha1", "ScheduledTask", ns);
  const uids = new Map(tasks.map((t) => [t.metadata.uid, t.metadata.name]));
  const cronJobs = await client.list("batch/v1", "CronJob", ns);
  const configMaps = (await client.list("v1", "ConfigMap", ns)).filter((c) =>
    c.metadata.name?.includes("-script-"),
  );
  const findings: string[] = [];
  const tally = { orphans: 0, duplicates: 0, missing: 0 };
  for (const [kind, objs] of [
    ["CronJob", cronJobs],
    ["ConfigMap", configMaps],
  ] as const) {
    const perTask = new Map<string, number>();
    for (const o of objs) {
      const owner = uids.get(controller(o));
      if (!owner) {
        tally.orphans++;
        findings.push(`orphan ${kind} ${o.metadata.name}`);
      } else perTask.set(owner, (perTask.get(owner) ?? 0) + 1);
    }
    for (const t of tasks) {
      const c = perTask.get(t.metadata.name ?? "") ?? 0;
      if (c > 1) tally.duplicates++;
      if (c === 0) tally.missing++;
      if (c !== 1) findings.push(`${kind}s of task ${t.metadata.name}: ${c}`);
    }
  }
  console.log(
    JSON.stringify(
      {
        count: N,
        kills: KILLS,
        killsAfter: values["from-start"] ? "spawn" : "ready",
        cronJobsEvery10Kills: cronJobsAtKill,
        cronJobsWhenKillsEnded: cronJobsAfterKills,
        secondsToConverged: +seconds.toFixed(1),
        tasksRunning: running,
        cronJobs: cronJobs.length,
        scriptConfigMaps: configMaps.length,
        ...tally,
        findings: findings.slice(0, 20),
        findingCount: findings.length,
      },
      null,
      2,
    ),
  );
  await client.delete("v1", "Namespace", "", ns);
  if (findings.length > 0) process.exitCode = 1;
}

await main();
