// Benchmark of the ScheduledTask controllers against the raw-write floor (docs/benchmarks.md).
//
// Cold convergence: N ScheduledTasks already stored in a fresh namespace; at t0 the operator
// (dist/ as shipped: `node dist/main.js`, built by `make build`) starts; done when every task is
// Running and has its CronJob, seen by a watch (no polling). The raw writer, in the same run and
// at the same concurrency, makes exactly the requests that end state needs: one LIST of the
// tasks (for their uids), then per task the ConfigMap, the CronJob with its ownerReference and
// the status. The floor is that raw writer started as a new process at t0, as the operator is
// (raw-writer.ts, bundled and started as dist/ is): both sides start cold. Each round also runs
// it inside this already running process (warm: modules loaded, connections open, the API's
// discovery cached, code compiled and optimized by earlier rounds), the second figure,
// `ratioToWarmRaw`. The three sides rotate their order from round to round and the rounds
// repeat; medians are quoted. `--raw process|in-process` runs one of the raw writers.
// In these timed rounds both talk to the API server as the operator does in a cluster: over TLS,
// with the kubeconfig's credentials. Then one counted pair (raw, then operator) runs again with
// every request going through a counting proxy (hack/bench/proxy.ts): verbs, 404s, latency, the
// timeline; its times are reported apart. The proxy is kept out of the timed rounds because it
// costs the operator's rounds more than the raw writer's: it also relays, decrypts and re-frames
// the operator's watch streams (docs/benchmarks.md, "The counting proxy out of the timed rounds");
// `--count-every-round` puts it back in every round, as the earlier figures were measured.
// The operator's peak RSS (VmHWM) and heap after a full GC are read from inside it
// (hack/bench/heap-probe.mjs). CPU-seconds per round: the operator's (its start apart), this
// process's (raw rounds: writer and convergence watch; operator rounds: the watch only, and the
// proxy in counted rounds), the API server's and etcd's, and the whole machine's. After the
// counted operator run: writes during --steady-seconds of steady state, and across a restart.
// A run first waits until an earlier run's namespaces are gone (their deletion would load the
// API server). --operator-only runs one operator round, direct unless --count-every-round.
//
// Live creation (--live): the operator already running; N tasks created at t0 with the same
// concurrency; against a raw writer that creates each task and then writes its children and status.
//
//   KUBECONFIG=... npm run bench:tasks -- --count 1000 [--workers 4] [--rounds 3] [--live] [--operator-only]
//     [--count-every-round] [--raw both|process|in-process] [--raw-informers] [--clean-between] [--trace DIR]
// (builds dist/ first; `node hack/bench/tasks.ts ...` runs the dist/ as it is)
// Schedules are yearly, so no pod runs: the figures are the control loop's. The machine may be
// shared: compare the ratios of one run, not absolute times across runs.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { hostname, tmpdir } from "node:os";
import { parseArgs } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { parse } from "yaml";
import type { ScheduledTask } from "../../src/api/v1alpha1/scheduledtask.ts";
import { silentLogger } from "../../src/log.ts";
import { RealKubeClient } from "../../src/runtime/client.ts";
import { Informer } from "../../src/runtime/informer.ts";
import { KubeListWatch } from "../../src/runtime/listwatch.ts";
import { KubeTransport } from "../../src/runtime/rest.ts";
import type { KubeObject } from "../../src/runtime/types.ts";
import { CountingProxy, type VerbStats } from "./proxy.ts";
import { pool, rawWrite, rawWriteAll, spec, TASK_KIND } from "./raw-write.ts";

const { values } = parseArgs({
  options: {
    count: { type: "string", default: "100" },
    workers: { type: "string", default: "4" },
    rounds: { type: "string", default: "3" },
    "steady-seconds": { type: "string", default: "30" },
    live: { type: "boolean", default: false },
    // Memory at a size where the raw runs would take too long on a shared machine: one cold
    // operator run, no raw writer, so no ratio.
    "operator-only": { type: "boolean", default: false },
    // Every round through the counting proxy (the method of the figures before 2026-11-24
    // midday), instead of timed rounds straight to the API server and one counted pair.
    "count-every-round": { type: "boolean", default: false },
    "node-options": { type: "string" },
    // Diagnostic: the raw writer also runs, from t0, informers (LIST + WATCH, in its own process)
    // of the three kinds the task controller writes or reads: ScheduledTasks, their script
    // ConfigMaps (metadata only) and CronJobs, as the operator does. What a controller pays to
    // watch, apart from what it does with the events.
    "raw-informers": { type: "boolean", default: false },
    // After each timed side, its namespace (N tasks and their children) is deleted and waited
    // for, so that every side starts on the same stored state, instead of on all the earlier
    // sides' objects (at 10,000 the API server's CPU per round grew with them).
    "clean-between": { type: "boolean", default: false },
    // Which raw writers run in each round: "process" (the floor: a new process started at t0,
    // bundled and started with the module compile cache as the operator is), "in-process" (in
    // this already running process: warm, the second figure), or "both" (the default). With
    // "in-process" alone the ratio is against the warm writer, as figures before 2026-11-24 evening were.
    raw: { type: "string", default: "both" },
    // Writes each window's requests (JSON lines: verb, resource, status, at, ms; counted rounds
    // only, the others' files are empty) and the operator's output there, to see where a round's
    // time went.
    trace: { type: "string" },
    // Writes a V8 CPU profile of each operator process there (`node --cpu-prof`), to see where
    // its CPU-seconds go (open in Chrome DevTools or speedscope).
    "cpu-prof": { type: "string" },
  },
});
const N = Number(values.count);
if (!["both", "process", "in-process"].includes(values.raw))
  throw new Error(`--raw: must be both, process or in-process, not ${JSON.stringify(values.raw)}`);
/** Whether the rounds run the raw writer as a process started at t0 (the floor). */
const RAW_PROCESS = values.raw !== "in-process";
/** Whether the rounds run the raw writer in this process (warm). */
const RAW_WARM = values.raw !== "process";
const W = Number(values.workers);
const ROUNDS = Number(values.rounds);
const STEADY = Number(values["steady-seconds"]);
const root = new URL("../../", import.meta.url).pathname;
const TASK_TYPE = {
  ...TASK_KIND,
  plural: "scheduledtasks",
  namespaced: true,
};
const CRONJOB_TYPE = { apiVersion: "batch/v1", kind: "CronJob", plural: "cronjobs", namespaced: true };

// The operator runs with the heap limits the chart gives it (values.yaml `nodeOptions`), as shipped;
// `--node-options` overrides them (e.g. "" for V8's defaults).
const chartValues = parse(readFileSync(`${root}charts/cronscale/values.yaml`, "utf8")) as {
  nodeOptions?: string;
};
const NODE_OPTIONS = values["node-options"] ?? chartValues.nodeOptions ?? "";

const kc = new KubeConfig();
kc.loadFromDefault();
const direct = KubeTransport.create(kc);
const client = new RealKubeClient(direct);
const proxy = new CountingProxy(kc);
const run = randomBytes(3).toString("hex");
const tmp = `${tmpdir()}/cronscale-bench-${run}`;
const TRACE = values.trace;
if (TRACE) mkdirSync(TRACE, { recursive: true });
let traceCounter = 0;
/** Ends the proxy's window; with --trace, writes its requests to `<trace>/<n>-<name>.jsonl`. */
function endWindow(name: string): void {
  const samples = proxy.reset();
  if (TRACE)
    writeFileSync(
      `${TRACE}/${String(traceCounter++).padStart(2, "0")}-${name}.jsonl`,
      samples.map((x) => JSON.stringify(x)).join("\n"),
    );
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after "pid (comm) ".
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds this (the raw writer's) process used since `from`; it also runs the watches. */
function benchCpu(from: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(from);
  return +((d.user + d.system) / 1e6).toFixed(2);
}

/** Busy CPU seconds of the whole machine so far (every core; /proc/stat, USER_HZ = 100). */
function machineCpu(): number {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: all but idle and iowait.
  return ((f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0)) / 100;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const taskObj = (ns: string, i: number): KubeObject => ({
  ...TASK_KIND,
  metadata: { name: `t${i}`, namespace: ns },
  spec: spec(),
});

async function installCrds(): Promise<void> {
  const crds: KubeObject[] = readdirSync(`${root}crds`).map((f) =>
    parse(readFileSync(`${root}crds/${f}`, "utf8")),
  );
  for (const crd of crds) await client.apply(crd);
  // Until every CRD's resource answers a LIST: a freshly installed or updated CRD answers 429
  // ("storage is (re)initializing") for a moment, which would delay only the first operator
  // round (its informers list TaskExecutions; the raw writer does not) and charge it to the operator.
  for (const crd of crds) {
    const spec = crd.spec as { group: string; names: { plural: string }; versions: { name: string }[] };
    const path = `/apis/${spec.group}/${spec.versions[0]!.name}/${spec.names.plural}?limit=1`;
    for (let i = 0; ; i++) {
      const ok = await direct.request("GET", path).then(
        () => true,
        () => false,
      );
      if (ok) break;
      if (i > 300) throw new Error(`${path} still not served after 30 s`);
      await sleep(100);
    }
  }
}

/**
 * CPU seconds used so far by the local cluster's kube-apiserver and etcd (the ones serving
 * KUBECONFIG: the apiserver by its port, etcd by the apiserver's --etcd-servers), from /proc.
 * Undefined for a cluster whose control plane is not a process on this machine. On two cores
 * both sides of a round share them with the control plane: its CPU per round says how much of a
 * round's difference is the API server's extra work (more watches to serve, for instance).
 */
function controlPlaneCpu(): { apiserver: number; etcd: number } | undefined {
  const port = new URL(kc.getCurrentCluster()?.server ?? "http://x").port;
  const procs = readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map((pid) => {
      try {
        return { pid: Number(pid), args: readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0") };
      } catch {
        return undefined;
      }
    })
    .filter((p) => p !== undefined);
  const flag = (args: string[], name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
  };
  const api = procs.find(
    (p) => p.args[0]?.endsWith("kube-apiserver") && flag(p.args, "--secure-port") === port,
  );
  const etcdUrl = api && flag(api.args, "--etcd-servers");
  const etcd = procs.find(
    (p) =>
      p.args[0]?.endsWith("etcd") &&
      etcdUrl !== undefined &&
      flag(p.args, "--listen-client-urls") === etcdUrl,
  );
  if (!api || !etcd) return undefined;
  return { apiserver: cpuSeconds(api.pid), etcd: cpuSeconds(etcd.pid) };
}

/** Control-plane CPU seconds since `from` (a controlPlaneCpu() reading). */
function controlPlaneSince(from: ReturnType<typeof controlPlaneCpu>) {
  const now = controlPlaneCpu();
  if (!from || !now) return undefined;
  return {
    apiserver: +(now.apiserver - from.apiserver).toFixed(2),
    etcd: +(now.etcd - from.etcd).toFixed(2),
  };
}

const RUN_LABEL = "bench.cronscale.io/run";
/** This host as a label value may carry it (at most 63 characters with the pid). */
const HOST =
  hostname()
    .slice(0, 48)
    .replace(/[^A-Za-z0-9.-]/g, "-")
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "") || "host";
let nsCounter = 0;
const namespaces: string[] = [];
async function freshNamespace(seedTasks: boolean): Promise<string> {
  const ns = `bench-${run}-${nsCounter++}`;
  namespaces.push(ns);
  // Which run made it (host and pid), so a later run can tell a killed run's namespace from a live one's.
  const owner = { [RUN_LABEL]: `${HOST}.${process.pid}` };
  await client.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns, labels: owner } });
  if (seedTasks) await pool(N, 16, (i) => client.apply(taskObj(ns, i)));
  return ns;
}

/** Deletes `ns` and waits until it is gone (its objects deleted by the namespace controller). */
async function deleteNamespace(ns: string): Promise<void> {
  const t0 = performance.now();
  await client.delete("v1", "Namespace", "", ns);
  while (await client.get("v1", "Namespace", "", ns)) {
    if (performance.now() - t0 > 900_000) throw new Error(`namespace ${ns} still there after 15 minutes`);
    await sleep(1000);
  }
  namespaces.splice(namespaces.indexOf(ns), 1);
  console.error(`deleted ${ns} in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
}

/** Resolves when every task of `ns` is Running and N CronJobs exist, as two watches see it. */
async function converged(ns: string): Promise<{ done: Promise<void>; stop: () => Promise<void> }> {
  const running = new Set<string>();
  const cronJobs = new Set<string>();
  let resolve = () => {};
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  const check = () => running.size >= N && cronJobs.size >= N && resolve();
  const tasks = new Informer({ source: new KubeListWatch(direct, TASK_TYPE, ns), log: silentLogger() });
  const onTask = (t: KubeObject) => {
    if ((t.status as { phase?: string } | undefined)?.phase === "Running") running.add(t.metadata.name ?? "");
    else running.delete(t.metadata.name ?? "");
    check();
  };
  tasks.addHandlers({ onAdd: onTask, onUpdate: (_, t) => onTask(t) });
  const cjs = new Informer({ source: new KubeListWatch(direct, CRONJOB_TYPE, ns), log: silentLogger() });
  cjs.addHandlers({
    onAdd: (c) => {
      cronJobs.add(c.metadata.name ?? "");
      check();
    },
  });
  tasks.start();
  cjs.start();
  await Promise.all([tasks.waitForSync(), cjs.waitForSync()]);
  return { done, stop: () => Promise.all([tasks.stop(), cjs.stop()]).then(() => undefined) };
}

/**
 * The raw writer: the requests the end state needs per task, and nothing else. Counted: through
 * the proxy; else straight to the API server with the kubeconfig's credentials (on the connection
 * pool this process shares among transports with those credentials, runtime/kube-auth.ts; the
 * operator, a process of its own, has its own).
 */
function rawClient(counted: boolean): RealKubeClient {
  if (!counted) return new RealKubeClient(KubeTransport.create(kc));
  const pkc = new KubeConfig();
  pkc.loadFromFile(proxy.kubeconfigFor(`${tmp}-raw.kubeconfig`));
  return new RealKubeClient(KubeTransport.create(pkc));
}

/** --raw-informers: the task controller's three watched kinds in `ns` (same credentials, so same pool, as the raw writer). */
function rawInformers(ns: string): Informer<KubeObject>[] {
  const t = KubeTransport.create(kc);
  const kinds: [typeof TASK_TYPE, boolean][] = [
    [TASK_TYPE, false],
    [{ apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true }, true],
    [CRONJOB_TYPE, false],
  ];
  return kinds.map(([type, metadataOnly]) => {
    const inf = new Informer({ source: new KubeListWatch(t, type, ns, metadataOnly), log: silentLogger() });
    inf.start();
    return inf;
  });
}

/** The bundle of raw-writer.ts, built once per run (bundleRawWriter). */
const RAW_BUNDLE = `${tmp}-raw/raw-writer.js`;

/**
 * Bundles raw-writer.ts (the raw writer and what it imports, as the operator's dist/operator.js
 * bundles the operator); rolldown is the bundler `make build` uses.
 */
async function bundleRawWriter(): Promise<void> {
  const { build } = await import("rolldown");
  await build({
    input: `${root}hack/bench/raw-writer.ts`,
    platform: "node",
    logLevel: "warn",
    output: { dir: `${tmp}-raw`, format: "esm", entryFileNames: "raw-writer.js", sourcemap: false },
  });
}

/**
 * The floor: the raw writer started as a new process at t0 (raw-writer-main.mjs, the bundle),
 * as the operator is; resolves with its CPU seconds when it exits. With V8's default heap sizes,
 * as this process has (not the operator's `nodeOptions`): it differs from the in-process raw
 * writer only in starting at t0.
 */
async function rawProcess(ns: string, counted: boolean): Promise<number> {
  const child = spawn(
    process.execPath,
    [`${root}hack/bench/raw-writer-main.mjs`, RAW_BUNDLE, ns, String(W)],
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: {
        ...process.env,
        ...(counted ? { KUBECONFIG: proxy.kubeconfigFor(`${tmp}-raw.kubeconfig`) } : {}),
      },
    },
  );
  let out = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const code = await new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
  if (code !== 0) throw new Error(`the raw writer's process exited with code ${code}`);
  return (JSON.parse(out) as { cpuSeconds: number }).cpuSeconds;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

interface Operator {
  child: ChildProcess;
  port: number;
  exited: Promise<void>;
}

/** Starts `node dist/main.js` for `ns`; counted: through the proxy, else with this process's kubeconfig. */
async function startOperator(ns: string, counted: boolean): Promise<Operator> {
  const port = await freePort();
  const args = ["--expose-gc", `--import=${root}hack/bench/heap-probe.mjs`];
  if (values["cpu-prof"]) args.push("--cpu-prof", `--cpu-prof-dir=${values["cpu-prof"]}`);
  args.push(`${root}dist/main.js`);
  args.push("--namespace", ns, "--metrics-port", String(port), "--metrics-bind-address", "127.0.0.1");
  args.push("--log-level", TRACE ? "info" : "warn", "--max-concurrent-reconciles", String(W));
  const out = TRACE
    ? createWriteStream(`${TRACE}/${String(traceCounter).padStart(2, "0")}-operator.log`)
    : undefined;
  const child = spawn(process.execPath, args, {
    stdio: ["ignore", out ? "pipe" : "ignore", "inherit"],
    env: {
      ...process.env,
      ...(counted ? { KUBECONFIG: proxy.kubeconfigFor(`${tmp}-op.kubeconfig`) } : {}),
      BENCH_MEMORY_FILE: `${tmp}-mem.json`,
      NODE_OPTIONS,
    },
  });
  if (out) child.stdout?.pipe(out);
  const exited = new Promise<void>((r) => child.on("exit", () => r()));
  return { child, port, exited };
}

/**
 * Resolves with `p`, or rejects if the operator exits first (a bad --node-options, a crash): the
 * run then fails with its exit status instead of waiting forever for a convergence (its stderr
 * is this process's).
 */
async function unlessExited<T>(op: Operator, p: Promise<T>): Promise<T> {
  const died = op.exited.then(() => {
    throw new Error(
      `the operator exited (code ${op.child.exitCode}, signal ${op.child.signalCode}) before the round converged`,
    );
  });
  return Promise.race([p, died]);
}

function alive(op: Operator): boolean {
  return op.child.exitCode === null && op.child.signalCode === null;
}

async function ready(op: Operator): Promise<void> {
  for (;;) {
    if (!alive(op)) return;
    const ok = await fetch(`http://127.0.0.1:${op.port}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await sleep(100);
  }
}

interface Memory {
  vmHwmMiB: number;
  heapAfterGcMiB: number;
  externalMiB: number;
  heapLimitMiB: number;
}

async function memory(op: Operator): Promise<Memory> {
  rmSync(`${tmp}-mem.json`, { force: true });
  op.child.kill("SIGUSR2");
  while (!existsSync(`${tmp}-mem.json`) || readFileSync(`${tmp}-mem.json`, "utf8") === "") await sleep(50);
  const m = JSON.parse(readFileSync(`${tmp}-mem.json`, "utf8"));
  return {
    vmHwmMiB: +(m.vmHwm / 1048576).toFixed(0),
    heapAfterGcMiB: +(m.heapUsedAfterGc / 1048576).toFixed(0),
    externalMiB: +(m.external / 1048576).toFixed(0),
    heapLimitMiB: +(m.heapLimit / 1048576).toFixed(0),
  };
}

/** Reconcile passes so far per controller, from the operator's /metrics. */
async function reconciles(op: Operator): Promise<Record<string, number>> {
  const text = await fetch(`http://127.0.0.1:${op.port}/metrics`).then((r) => r.text());
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^controller_runtime_reconcile_total\{([^}]*)\} (\S+)$/gm)) {
    const controller = /controller="([^"]*)"/.exec(m[1]!)?.[1] ?? "";
    out[controller] = (out[controller] ?? 0) + Number(m[2]);
  }
  return out;
}

async function stopOperator(op: Operator): Promise<void> {
  op.child.kill("SIGTERM");
  await op.exited;
}

interface Sample {
  seconds: number;
  /** Whether the round went through the counting proxy (requests and timeline only then). */
  counted: boolean;
  requests?: Record<string, VerbStats>;
  /** When requests happened (s after t0), from the proxy. */
  timeline?: ReturnType<CountingProxy["timeline"]>;
  /** CPU seconds the writer's process used from t0 to convergence. */
  cpuSeconds: number;
  /** CPU seconds of the API server and etcd from t0 to convergence (local cluster only). */
  controlPlaneCpuSeconds?: { apiserver: number; etcd: number };
  /**
   * In operator rounds, the CPU seconds of this process, which then only runs the convergence
   * watch (and the counting proxy in a counted round): the raw writer's own share of its rounds
   * is the difference (see rawWriterOwnCpuSeconds).
   */
  harnessCpuSeconds?: number;
  /** Busy CPU seconds of the whole machine from t0 to convergence (all processes, all cores). */
  machineCpuSeconds: number;
  /** Of those, the operator's until it answered /readyz (loading, informers synced): its start. */
  startCpuSeconds?: number;
  memory?: Memory;
  /** The operator's reconcile passes per controller (controller_runtime_reconcile_total). */
  reconciles?: Record<string, number>;
  steadyWrites?: number;
  writesAcrossRestart?: number;
}

/** `warm`: the raw writer in this process (the second figure); else its own process, started at t0. */
async function coldRaw(counted: boolean, warm = false): Promise<Sample> {
  const ns = await freshNamespace(true);
  const watch = await converged(ns);
  const raw = rawClient(counted);
  proxy.reset();
  const cpu0 = process.cpuUsage();
  const cp0 = controlPlaneCpu();
  const m0 = machineCpu();
  const t0 = performance.now();
  const informers = values["raw-informers"] ? rawInformers(ns) : [];
  let childCpu = 0;
  if (warm) await rawWriteAll(raw, ns, W);
  else childCpu = await rawProcess(ns, counted);
  await watch.done;
  const seconds = (performance.now() - t0) / 1000;
  if (counted) await proxy.settled();
  await Promise.all(informers.map((i) => i.stop()));
  const sample = {
    seconds,
    counted,
    ...(counted ? { requests: proxy.stats(), timeline: proxy.timeline() } : {}),
    // This process's (the convergence watch, and the warm writer), plus the floor writer's process.
    cpuSeconds: +(benchCpu(cpu0) + childCpu).toFixed(2),
    controlPlaneCpuSeconds: controlPlaneSince(cp0),
    machineCpuSeconds: +(machineCpu() - m0).toFixed(2),
  };
  endWindow("cold-raw");
  await watch.stop();
  return sample;
}

/** `last`: then also the writes at steady state and across a restart (counted rounds only). */
async function coldOperator(counted: boolean, last = false): Promise<Sample> {
  const ns = await freshNamespace(true);
  const watch = await converged(ns);
  proxy.reset();
  const cp0 = controlPlaneCpu();
  const harness0 = process.cpuUsage();
  const m0 = machineCpu();
  const t0 = performance.now();
  let op = await startOperator(ns, counted);
  let startCpu: number | undefined;
  void ready(op).then(() => {
    if (startCpu === undefined && alive(op)) startCpu = cpuSeconds(op.child.pid);
  });
  await unlessExited(op, watch.done);
  const seconds = (performance.now() - t0) / 1000;
  if (counted) await proxy.settled();
  const requests = counted ? proxy.stats() : undefined;
  const timeline = counted ? proxy.timeline() : undefined;
  const cpu = cpuSeconds(op.child.pid);
  const controlPlaneCpuSeconds = controlPlaneSince(cp0);
  const harnessCpuSeconds = benchCpu(harness0);
  const machineCpuSeconds = +(machineCpu() - m0).toFixed(2);
  startCpu ??= cpu;
  endWindow("cold-operator");
  await watch.stop();
  const sample: Sample = {
    seconds,
    counted,
    requests,
    timeline,
    cpuSeconds: cpu,
    controlPlaneCpuSeconds,
    harnessCpuSeconds,
    machineCpuSeconds,
    startCpuSeconds: startCpu,
    reconciles: await reconciles(op),
    memory: await memory(op),
  };
  if (last && counted) {
    proxy.reset();
    await sleep(STEADY * 1000);
    sample.steadyWrites = proxy.writes();
    await stopOperator(op);
    proxy.reset();
    op = await startOperator(ns, true);
    await ready(op);
    await sleep(STEADY * 1000);
    sample.writesAcrossRestart = proxy.writes();
  }
  await stopOperator(op);
  return sample;
}

async function liveRaw(counted: boolean): Promise<Sample> {
  const ns = await freshNamespace(false);
  const raw = rawClient(counted);
  const watch = await converged(ns);
  proxy.reset();
  const cpu0 = process.cpuUsage();
  const m0 = machineCpu();
  const t0 = performance.now();
  await pool(N, W, async (i) => rawWrite(raw, await client.apply<ScheduledTask>(taskObj(ns, i))));
  await watch.done;
  const seconds = (performance.now() - t0) / 1000;
  const sample = {
    seconds,
    counted,
    ...(counted ? { requests: proxy.stats(), timeline: proxy.timeline() } : {}),
    cpuSeconds: benchCpu(cpu0),
    machineCpuSeconds: +(machineCpu() - m0).toFixed(2),
  };
  endWindow("live-raw");
  await watch.stop();
  return sample;
}

async function liveOperator(counted: boolean): Promise<Sample> {
  const ns = await freshNamespace(false);
  const op = await startOperator(ns, counted);
  await unlessExited(op, ready(op));
  const watch = await converged(ns);
  proxy.reset();
  const cpu0 = cpuSeconds(op.child.pid);
  const m0 = machineCpu();
  const t0 = performance.now();
  await pool(N, W, (i) => client.apply(taskObj(ns, i)));
  await unlessExited(op, watch.done);
  const seconds = (performance.now() - t0) / 1000;
  const machineCpuSeconds = +(machineCpu() - m0).toFixed(2);
  if (counted) await proxy.settled();
  const requests = counted ? proxy.stats() : undefined;
  const timeline = counted ? proxy.timeline() : undefined;
  const cpu = cpuSeconds(op.child.pid) - cpu0;
  endWindow("live-operator");
  await watch.stop();
  const sample = {
    seconds,
    counted,
    requests,
    timeline,
    cpuSeconds: cpu,
    machineCpuSeconds,
    memory: await memory(op),
  };
  await stopOperator(op);
  return sample;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** The timed rounds' figures; `counted`: the counted pair, when it ran apart from them. */
function summary(raw: Sample[], op: Sample[], counted?: { raw: Sample; op: Sample }, warm: Sample[] = []) {
  const r = median(raw.map((s) => s.seconds));
  const o = median(op.map((s) => s.seconds));
  const w = warm.length ? median(warm.map((s) => s.seconds)) : undefined;
  const countedRaw = counted?.raw ?? raw.at(-1);
  const countedOp = counted?.op ?? op.at(-1);
  return {
    // Whether the timed rounds went through the counting proxy (--count-every-round).
    timedRoundsCounted: raw.every((s) => s.counted) && op.every((s) => s.counted),
    rawSeconds: raw.map((s) => +s.seconds.toFixed(1)),
    operatorSeconds: op.map((s) => +s.seconds.toFixed(1)),
    rawMedian: +r.toFixed(1),
    operatorMedian: +o.toFixed(1),
    ratio: +(o / r).toFixed(2),
    // The second figure: against the raw writer run in this already running process (warm).
    ...(w === undefined
      ? {}
      : {
          warmRawSeconds: warm.map((s) => +s.seconds.toFixed(1)),
          warmRawMedian: +w.toFixed(1),
          ratioToWarmRaw: +(o / w).toFixed(2),
          warmRawCpuSeconds: warm.map((s) => s.cpuSeconds),
          warmRawMachineCpuSeconds: warm.map((s) => s.machineCpuSeconds),
          warmRawControlPlaneCpuSeconds: warm.map((s) => s.controlPlaneCpuSeconds),
        }),
    // The counted pair's own times (through the proxy; one round each, so no median).
    countedPair: counted && {
      rawSeconds: +counted.raw.seconds.toFixed(1),
      operatorSeconds: +counted.op.seconds.toFixed(1),
      ratio: +(counted.op.seconds / counted.raw.seconds).toFixed(2),
      harnessCpuSeconds: counted.op.harnessCpuSeconds,
    },
    rawRequests: countedRaw?.requests,
    operatorRequests: countedOp?.requests,
    operatorMemory: op.map((s) => s.memory),
    rawCpuSeconds: raw.map((s) => s.cpuSeconds),
    operatorCpuSeconds: op.map((s) => s.cpuSeconds),
    rawControlPlaneCpuSeconds: raw.map((s) => s.controlPlaneCpuSeconds),
    operatorControlPlaneCpuSeconds: op.map((s) => s.controlPlaneCpuSeconds),
    // The raw writer's own CPU, estimated: its process's, less what the convergence watch (and in
    // counted rounds the proxy) cost in the operator's rounds (their median). With the proxy in
    // the rounds it is a lower bound: the proxy also relays the operator's watch streams.
    rawWriterOwnCpuSeconds: (() => {
      const harness = op.map((s) => s.harnessCpuSeconds).filter((x) => x !== undefined);
      return harness.length ? raw.map((s) => +(s.cpuSeconds - median(harness)).toFixed(2)) : undefined;
    })(),
    rawMachineCpuSeconds: raw.map((s) => s.machineCpuSeconds),
    operatorMachineCpuSeconds: op.map((s) => s.machineCpuSeconds),
    // The operator's CPU from /readyz to convergence, per 1,000 tasks: its per-event work, without
    // the start (loading modules, first lists), and little distorted by other load on the machine.
    operatorConvergenceCpuSecondsPer1000: op.map((s) =>
      s.startCpuSeconds === undefined
        ? undefined
        : +(((s.cpuSeconds - s.startCpuSeconds) * 1000) / N).toFixed(2),
    ),
    operatorStartCpuSeconds: op.map((s) => s.startCpuSeconds),
    operatorReconciles: op.map((s) => s.reconciles),
    rawTimeline: counted ? [counted.raw.timeline] : raw.map((s) => s.timeline),
    operatorTimeline: counted ? [counted.op.timeline] : op.map((s) => s.timeline),
  };
}

/**
 * Waits until no namespace of an earlier run is left: deleting one (thousands of objects, by the
 * namespace controller) loads the API server and etcd for a minute or more, which would land on
 * this run's first rounds. One still active whose run (its label: host and pid) is no longer
 * running on this host was left by a run killed before its cleanup: it is deleted first. Another
 * run's, still running, is waited for.
 */
/** Whether the run named `run` (`host.pid`) is gone: on this host, no such process. */
function leftBehind(run: string | undefined): boolean {
  const m = run?.match(/^(.*)\.(\d+)$/);
  if (!m || m[1] !== HOST) return false;
  try {
    process.kill(Number(m[2]), 0);
    return false;
  } catch {
    return true;
  }
}

async function earlierRunsDeleted(): Promise<void> {
  for (let said = false; ; said = true) {
    const left = (await client.list<KubeObject>("v1", "Namespace")).filter((n) =>
      n.metadata.name?.startsWith("bench-"),
    );
    if (!left.length) return;
    for (const n of left)
      if (!n.metadata.deletionTimestamp && leftBehind(n.metadata.labels?.[RUN_LABEL])) {
        console.error(`deleting namespace ${n.metadata.name}, left by an earlier run that did not clean up`);
        await client.delete("v1", "Namespace", "", n.metadata.name!);
      }
    if (!said) console.error(`waiting for ${left.length} namespace(s) of an earlier run to be deleted`);
    await sleep(2000);
  }
}

async function main() {
  if (!existsSync(`${root}dist/main.js`)) throw new Error("dist/main.js missing: run `make build` first");
  await earlierRunsDeleted();
  await installCrds();
  if (RAW_PROCESS) await bundleRawWriter();
  await proxy.start();
  const cleanup = async () => {
    await proxy.stop();
    for (const ns of namespaces) await client.delete("v1", "Namespace", "", ns).catch(() => undefined);
    rmSync(`${tmp}-raw.kubeconfig`, { force: true });
    rmSync(`${tmp}-op.kubeconfig`, { force: true });
    rmSync(`${tmp}-mem.json`, { force: true });
    rmSync(`${tmp}-raw`, { recursive: true, force: true });
  };
  try {
    if (values["operator-only"]) {
      const sample = await coldOperator(values["count-every-round"]);
      console.log(
        JSON.stringify({ count: N, workers: W, nodeOptions: NODE_OPTIONS, operatorOnly: sample }, null, 2),
      );
      return;
    }
    const everyRound = values["count-every-round"];
    // raw: the floor's rounds (the raw writer started at t0, or the warm one with --raw in-process);
    // warm: the warm raw writer's, when both run.
    const raw: Sample[] = [];
    const op: Sample[] = [];
    const warm: Sample[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const last = r === ROUNDS - 1;
      const sides = [
        async () => raw.push(await coldRaw(everyRound, !RAW_PROCESS)),
        async () => op.push(await coldOperator(everyRound, last)),
        ...(RAW_PROCESS && RAW_WARM ? [async () => warm.push(await coldRaw(everyRound, true))] : []),
      ];
      // Rotate the order so no side always runs first, on a warmer (or busier) API server.
      for (let i = 0; i < sides.length; i++) {
        await sides[(r + i) % sides.length]!();
        if (values["clean-between"]) await deleteNamespace(namespaces.at(-1)!);
      }
      const rounds = [raw.at(-1)!, op.at(-1)!, ...(warm.length ? [warm.at(-1)!] : [])];
      console.error(
        `round ${r + 1}: raw ${raw.at(-1)?.seconds.toFixed(1)} s, operator ${op.at(-1)?.seconds.toFixed(1)} s` +
          (warm.length ? `, warm raw ${warm.at(-1)?.seconds.toFixed(1)} s` : ""),
        JSON.stringify({
          raw: raw.at(-1)?.timeline,
          operator: op.at(-1)?.timeline,
          cpu: rounds.map((s) => s.cpuSeconds),
          harnessCpu: op.at(-1)?.harnessCpuSeconds,
          machineCpu: rounds.map((s) => s.machineCpuSeconds),
          operatorStartCpu: op.at(-1)?.startCpuSeconds,
          controlPlaneCpu: rounds.map((s) => s.controlPlaneCpuSeconds),
        }),
      );
    }
    let counted: { raw: Sample; op: Sample } | undefined;
    if (!everyRound) {
      counted = { raw: await coldRaw(true, !RAW_PROCESS), op: await coldOperator(true, true) };
      console.error(
        `counted pair (through the proxy): raw ${counted.raw.seconds.toFixed(1)} s, operator ${counted.op.seconds.toFixed(1)} s`,
        JSON.stringify({ raw: counted.raw.timeline, operator: counted.op.timeline }),
      );
    }
    const countedOp = counted?.op ?? op.at(-1);
    const result: Record<string, unknown> = {
      count: N,
      workers: W,
      nodeOptions: NODE_OPTIONS,
      rounds: ROUNDS,
      // The floor: the raw writer started at t0 as a process of its own (or --raw in-process).
      floor: RAW_PROCESS
        ? "raw writer started at t0 (its own process)"
        : "raw writer in the benchmark's process (warm)",
      cold: summary(raw, op, counted, warm),
      steadyStateSeconds: STEADY,
      steadyWrites: countedOp?.steadyWrites,
      writesAcrossRestart: countedOp?.writesAcrossRestart,
    };
    if (values.live) {
      const lr: Sample[] = [];
      const lo: Sample[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        if (r % 2 === 0) {
          lr.push(await liveRaw(everyRound));
          lo.push(await liveOperator(everyRound));
        } else {
          lo.push(await liveOperator(everyRound));
          lr.push(await liveRaw(everyRound));
        }
        console.error(
          `live round ${r + 1}: raw ${lr.at(-1)?.seconds.toFixed(1)} s, operator ${lo.at(-1)?.seconds.toFixed(1)} s`,
        );
      }
      result.live = summary(
        lr,
        lo,
        everyRound ? undefined : { raw: await liveRaw(true), op: await liveOperator(true) },
      );
    }
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await cleanup();
  }
}

await main();
