// Benchmark: N ScheduledTasks applied → time until all are Running with their CronJob, against a
// baseline that writes the same children (ConfigMap + CronJob) directly with the same concurrency
// in the same run; then the operator's writes during 60 s of steady state, and its RSS.
//   KUBECONFIG=... node hack/bench/tasks.ts --count 1000 [--workers 4] [--steady-seconds 60]
// Schedules are yearly, so no pod runs: the figures are the control loop's, nodes don't matter.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { parse } from "yaml";
import { scheduledTaskSpecSchema } from "../../src/api/v1alpha1/scheduledtask.ts";
import { DEFAULT_TASK_CONTROLLER_CONFIG } from "../../src/controllers/scheduledtask/config.ts";
import { desiredCronJob, desiredScriptConfigMap } from "../../src/controllers/scheduledtask/desired.ts";
import { RealKubeClient } from "../../src/runtime/client.ts";
import { KubeTransport } from "../../src/runtime/rest.ts";
import type { KubeObject } from "../../src/runtime/types.ts";

const { values } = parseArgs({
  options: {
    count: { type: "string", default: "100" },
    workers: { type: "string", default: "4" },
    "steady-seconds": { type: "string", default: "60" },
  },
});
const N = Number(values.count);
const WORKERS = Number(values.workers);
const STEADY = Number(values["steady-seconds"]);
const root = new URL("../../", import.meta.url).pathname;

const kc = new KubeConfig();
kc.loadFromDefault();
const client = new RealKubeClient(KubeTransport.create(kc));
const suffix = randomBytes(3).toString("hex");
const nsBase = `bench-base-${suffix}`;
const nsOp = `bench-op-${suffix}`;

/** Runs `fn` for 0..n-1 with `workers` in flight. */
async function pool(n: number, workers: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

function spec() {
  return scheduledTaskSpecSchema.parse({
    schedule: "0 0 1 1 *",
    language: "Bash",
    plan: "Micro",
    script: "echo hi",
  });
}

function taskObj(ns: string, i: number): KubeObject {
  return {
    apiVersion: "cronscale.io/v1alpha1",
    kind: "ScheduledTask",
    metadata: { name: `t${i}`, namespace: ns },
    spec: spec(),
  };
}

async function ensureNamespace(name: string) {
  await client.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
}

async function installCrds() {
  for (const f of readdirSync(`${root}crds`).filter(
    (f) => f.startsWith("scheduledtasks") || f.startsWith("taskexecutions"),
  )) {
    await client.apply(parse(readFileSync(`${root}crds/${f}`, "utf8")) as KubeObject);
  }
  await new Promise((r) => setTimeout(r, 3000));
}

async function baseline(): Promise<number> {
  const t0 = performance.now();
  await pool(N, WORKERS, async (i) => {
    const task = {
      ...taskObj(nsBase, i),
      metadata: { name: `t${i}`, namespace: nsBase, uid: "none", generation: 1 },
    };
    for (const child of [
      desiredScriptConfigMap(task as never, spec()),
      desiredCronJob(task as never, spec(), DEFAULT_TASK_CONTROLLER_CONFIG),
    ]) {
      await client.apply({ ...child, metadata: { ...child.metadata, ownerReferences: undefined } });
    }
  });
  return (performance.now() - t0) / 1000;
}

function startOperator(): Promise<{ child: ChildProcess; lines: string[] }> {
  const child = spawn(process.execPath, [`${root}hack/bench/task-operator.ts`, nsOp, String(WORKERS)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (d: Buffer) => {
      for (const l of d.toString().split("\n").filter(Boolean)) {
        lines.push(l);
        if (l === "started") resolve({ child, lines });
      }
    });
    child.on("exit", (code) => reject(new Error(`operator exited with ${code}`)));
  });
}

async function snapshot(
  child: ChildProcess,
  lines: string[],
): Promise<{ writes: Record<string, number>; rss: number }> {
  const before = lines.length;
  child.kill("SIGUSR2");
  while (lines.length === before) await new Promise((r) => setTimeout(r, 50));
  return JSON.parse(lines.at(-1) ?? "{}");
}

function total(w: Record<string, number>): number {
  return Object.values(w).reduce((a, b) => a + b, 0);
}

async function main() {
  await installCrds();
  await ensureNamespace(nsBase);
  await ensureNamespace(nsOp);
  console.error(`baseline: writing ${N} × (ConfigMap + CronJob) with ${WORKERS} in flight`);
  const baseSeconds = await baseline();
  const { child, lines } = await startOperator();
  try {
    console.error(`operator: applying ${N} ScheduledTasks with ${WORKERS} in flight`);
    const t0 = performance.now();
    await pool(N, WORKERS, (i) => client.apply(taskObj(nsOp, i)));
    const appliedSeconds = (performance.now() - t0) / 1000;
    let running = 0;
    for (;;) {
      const tasks = await client.list<KubeObject>("cronscale.io/v1alpha1", "ScheduledTask", nsOp);
      running = tasks.filter((t) => (t.status as { phase?: string } | undefined)?.phase === "Running").length;
      const cronJobs = (await client.list("batch/v1", "CronJob", nsOp)).length;
      if (running === N && cronJobs === N) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const opSeconds = (performance.now() - t0) / 1000;
    const atReady = await snapshot(child, lines);
    await new Promise((r) => setTimeout(r, STEADY * 1000));
    const atEnd = await snapshot(child, lines);
    const result = {
      count: N,
      workers: WORKERS,
      baselineSeconds: +baseSeconds.toFixed(1),
      baselineWritesPerSecond: +((2 * N) / baseSeconds).toFixed(1),
      applySeconds: +appliedSeconds.toFixed(1),
      allRunningSeconds: +opSeconds.toFixed(1),
      operatorWritesToReady: total(atReady.writes),
      operatorWritesByVerb: atReady.writes,
      steadyStateSeconds: STEADY,
      steadyStateWrites: total(atEnd.writes) - total(atReady.writes),
      operatorRssMiB: +(atEnd.rss / 1048576).toFixed(0),
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    child.kill("SIGTERM");
    for (const ns of [nsBase, nsOp]) await client.delete("v1", "Namespace", "", ns).catch(() => undefined);
  }
}

await main();
