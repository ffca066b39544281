// Chaos: repeated `kill -9` of the operator during a cold convergence (docs/benchmarks.md).
//
// N ScheduledTasks are stored in a fresh namespace; then, --kills times, the operator (dist/ as
// shipped, with the chart's heap limits) starts and is SIGKILLed once it is ready (caches synced,
// workers writing: so every kill lands in the convergence, not in the process start;
// `--from-start` counts from the spawn instead) at a random moment: after a random delay in
// [--min-delay, --max-delay] s, or earlier, as soon as it has created a random number of CronJobs
// (1 to 1.6 N / kills, 0.8 N / kills on average) — so that all the kills fit in one convergence
// instead of the convergence ending after the first ~75 at 10,000 tasks. Then it starts once more
// and runs until every task is Running with its CronJob. Two watches (started before the first
// start) say, at each kill, how many CronJobs and Running tasks there were: a kill counts as
// "during the convergence" only if some task was not Running with its CronJob yet. Printed
// findings: per task exactly one CronJob and one script ConfigMap, each controlled by that task's
// uid; no child without its task (orphan); no duplicate; nothing missing.
//
//   KUBECONFIG=... npm run bench:chaos-kill -- --count 10000 --kills 200
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { parseArgs } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { parse } from "yaml";
import { silentLogger } from "../../src/log.ts";
import { RealKubeClient } from "../../src/runtime/client.ts";
import { Informer } from "../../src/runtime/informer.ts";
import { KubeListWatch } from "../../src/runtime/listwatch.ts";
import { KubeTransport } from "../../src/runtime/rest.ts";
import type { KubeObject } from "../../src/runtime/types.ts";
import { pool, spec, TASK_KIND } from "./raw-write.ts";

const { values } = parseArgs({
  options: {
    count: { type: "string", default: "200" },
    kills: { type: "string", default: "20" },
    seed: { type: "string", default: "1" },
    "from-start": { type: "boolean", default: false },
    "min-delay": { type: "string", default: "0.2" },
    "max-delay": { type: "string", default: "4" },
  },
});
const N = Number(values.count);
const KILLS = Number(values.kills);
const MIN_DELAY_MS = Number(values["min-delay"]) * 1000;
const MAX_DELAY_MS = Number(values["max-delay"]) * 1000;
/** Average CronJobs one operator life may create before its kill: 0.8 N / kills. */
const PER_KILL = Math.max(1, Math.floor((0.8 * N) / Math.max(1, KILLS)));
const root = new URL("../../", import.meta.url).pathname;
const chart = parse(readFileSync(`${root}charts/cronscale/values.yaml`, "utf8")) as { nodeOptions?: string };
const kc = new KubeConfig();
kc.loadFromDefault();
const transport = KubeTransport.create(kc);
const client = new RealKubeClient(transport);
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

const controller = (o: KubeObject) => o.metadata.ownerReferences?.find((r) => r.controller)?.uid;

/** What the namespace holds, as two watches see it: CronJobs and Running tasks, by name. */
async function watchProgress(ns: string) {
  const cronJobs = new Set<string>();
  const running = new Set<string>();
  const small = (o: KubeObject): KubeObject => ({
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: {
      name: o.metadata.name,
      namespace: o.metadata.namespace,
      resourceVersion: o.metadata.resourceVersion,
    },
    status: { phase: (o.status as { phase?: string } | undefined)?.phase },
  });
  const tasks = new Informer({
    source: new KubeListWatch(transport, { ...TASK_KIND, plural: "scheduledtasks", namespaced: true }, ns),
    log: silentLogger(),
    transform: small,
  });
  const onTask = (t: KubeObject) => {
    if ((t.status as { phase?: string }).phase === "Running") running.add(t.metadata.name ?? "");
    else running.delete(t.metadata.name ?? "");
  };
  tasks.addHandlers({ onAdd: onTask, onUpdate: (_, t) => onTask(t) });
  const cjs = new Informer({
    source: new KubeListWatch(
      transport,
      { apiVersion: "batch/v1", kind: "CronJob", plural: "cronjobs", namespaced: true },
      ns,
    ),
    log: silentLogger(),
    transform: small,
  });
  cjs.addHandlers({
    onAdd: (c) => cronJobs.add(c.metadata.name ?? ""),
    onDelete: (c) => cronJobs.delete(c.metadata.name ?? ""),
  });
  tasks.start();
  cjs.start();
  await Promise.all([tasks.waitForSync(), cjs.waitForSync()]);
  return {
    cronJobs: () => cronJobs.size,
    running: () => running.size,
    converged: () => cronJobs.size >= N && running.size >= N,
    stop: () => Promise.all([tasks.stop(), cjs.stop()]),
  };
}

/** Resolves after `ms`, or earlier once `until()` holds (checked every 50 ms). */
async function waitUntil(ms: number, until: () => boolean): Promise<void> {
  const end = performance.now() + ms;
  while (performance.now() < end && !until()) await sleep(Math.min(50, end - performance.now()));
}

async function main() {
  const ns = `chaos-${randomBytes(3).toString("hex")}`;
  await client.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  const taskSpec = spec();
  await pool(N, 16, (i) =>
    client.apply({ ...TASK_KIND, metadata: { name: `t${i}`, namespace: ns }, spec: taskSpec }),
  );
  const progress = await watchProgress(ns);
  const t0 = performance.now();
  const cronJobsAtKill: number[] = [];
  let killsDuring = 0;
  for (let k = 0; k < KILLS; k++) {
    const port = await freePort();
    const op = startOperator(ns, port);
    if (!values["from-start"]) await ready(op, port);
    const from = progress.cronJobs();
    const budget = 1 + Math.floor(random() * 2 * PER_KILL);
    await waitUntil(
      MIN_DELAY_MS + random() * (MAX_DELAY_MS - MIN_DELAY_MS),
      () => progress.cronJobs() - from >= budget,
    );
    const exited = new Promise((r) => op.once("exit", r));
    if (op.exitCode === null && op.signalCode === null) op.kill("SIGKILL");
    if (!progress.converged()) killsDuring++;
    await exited;
    cronJobsAtKill.push(progress.cronJobs());
    if ((k + 1) % 10 === 0 || k === KILLS - 1)
      console.error(
        `kill ${k + 1}/${KILLS} at ${((performance.now() - t0) / 1000).toFixed(0)} s: ${progress.cronJobs()} CronJobs, ${progress.running()} tasks Running`,
      );
  }
  const cronJobsAfterKills = progress.cronJobs();
  const runningAfterKills = progress.running();
  const op = startOperator(ns);
  while (!progress.converged()) await sleep(500);
  const running = progress.running();
  await progress.stop();
  const seconds = (performance.now() - t0) / 1000;
  op.kill("SIGTERM");
  await new Promise((r) => op.once("exit", r));

  const tasks = await client.list(TASK_KIND.apiVersion, TASK_KIND.kind, ns);
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
        delaySeconds: [MIN_DELAY_MS / 1000, MAX_DELAY_MS / 1000],
        averageCronJobsPerLife: PER_KILL,
        killsDuringConvergence: killsDuring,
        cronJobsEvery10Kills: cronJobsAtKill.filter((_, i) => (i + 1) % 10 === 0),
        cronJobsWhenKillsEnded: cronJobsAfterKills,
        tasksRunningWhenKillsEnded: runningAfterKills,
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
