// The execution archive with the operator in the loop (docs/benchmarks.md, "Execution archive"):
// a synthetic stream of finished runs written to a cluster as TaskExecutions — what the
// TaskExecution controller records when a run's Job ends — for T yearly (never firing) tasks,
// one run per task per simulated minute. The operator (src/main.ts, a child process) copies each
// record to its archive (a PostgreSQL on loopback) and deletes those beyond the recent window
// once archived. Sampled over time: the operator's RSS and peak RSS (VmRSS, VmHWM of
// /proc/<pid>/status), the TaskExecutions in etcd (a LIST, and the API server's object-count
// metric) against the bound T × window, and the runs in the archive.
//   KUBECONFIG=... node hack/bench/archive-operator.ts [--tasks 100] [--minutes 6]
//     [--minute-seconds 10] [--window 3] [--output-bytes 2048] [--sample-seconds 5]
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { sql } from "kysely";
import { parseAllDocuments } from "yaml";
import { API_VERSION } from "../../src/api/v1alpha1/kind.ts";
import {
  LABEL_MANAGED_BY,
  LABEL_RESULT,
  LABEL_TASK,
  LABEL_TRIGGER,
  MANAGED_BY,
} from "../../src/api/v1alpha1/labels.ts";
import type { ScheduledTask } from "../../src/api/v1alpha1/scheduledtask.ts";
import { PgExecutionArchive } from "../../src/archive/store.ts";
import { ownerRef } from "../../src/controllers/scheduledtask/desired.ts";
import { RealKubeClient } from "../../src/runtime/client.ts";
import { KubeTransport } from "../../src/runtime/rest.ts";
import type { KubeObject } from "../../src/runtime/types.ts";
import { startPostgres } from "../../test/support/postgres.ts";

const { values } = parseArgs({
  options: {
    tasks: { type: "string", default: "100" },
    minutes: { type: "string", default: "6" },
    "minute-seconds": { type: "string", default: "10" },
    window: { type: "string", default: "3" },
    "output-bytes": { type: "string", default: "2048" },
    "sample-seconds": { type: "string", default: "5" },
  },
});
const T = Number(values.tasks);
const M = Number(values.minutes);
const MINUTE_MS = Number(values["minute-seconds"]) * 1000;
const W = Number(values.window);
const OUTPUT = Number(values["output-bytes"]);
const SAMPLE_MS = Number(values["sample-seconds"]) * 1000;
const root = new URL("../../", import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const kc = new KubeConfig();
kc.loadFromDefault();
const transport = KubeTransport.create(kc);
const client = new RealKubeClient(transport);

/** Runs `f` over `items` with 8 requests in flight. */
async function each<T>(items: T[], f: (x: T) => Promise<unknown>): Promise<void> {
  let i = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (i < items.length) await f(items[i++] as T);
    }),
  );
}

for (const f of readdirSync(`${root}crds`).filter((n) => n.endsWith(".yaml")))
  for (const d of parseAllDocuments(readFileSync(`${root}crds/${f}`, "utf8")))
    await client.apply(d.toJS() as KubeObject);
await sleep(2000); // the CRDs' Established condition
const ns = `bench-archive-${randomBytes(3).toString("hex")}`;
await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
const pg = await startPostgres();
const archive = new PgExecutionArchive(pg.dsn, { maxConnections: 1 });
await archive.migrate();

const tasks: ScheduledTask[] = [];
await each([...Array(T).keys()], async (i) => {
  const spec = { schedule: "0 0 1 1 *", language: "Bash", plan: "Micro", script: "echo hi" };
  const obj = {
    apiVersion: API_VERSION,
    kind: "ScheduledTask",
    metadata: { name: `t-${i}`, namespace: ns },
    spec,
  };
  tasks.push(await client.create<ScheduledTask>(obj));
});

const op: ChildProcess = spawn(process.execPath, [`${root}src/main.ts`], {
  stdio: ["ignore", "ignore", "inherit"],
  env: {
    ...process.env,
    CRONSCALE_NAMESPACE: ns,
    CRONSCALE_HTTP_HOST: "127.0.0.1",
    CRONSCALE_HTTP_PORT: "0",
    CRONSCALE_ARCHIVE__HTTP_HOST: "127.0.0.1",
    CRONSCALE_ARCHIVE__HTTP_PORT: "0",
    CRONSCALE_LOG_LEVEL: "warn",
    CRONSCALE_ARCHIVE__DSN: pg.dsn,
    CRONSCALE_ARCHIVE__WINDOW: String(W),
  },
});

function memory(): { rss: number; hwm: number } {
  const st = readFileSync(`/proc/${op.pid}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(st)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

/** The API server's count of stored TaskExecutions, cluster-wide (refreshed about once a minute). */
async function storedObjects(): Promise<number | undefined> {
  const text = await transport.request<string>("GET", "/metrics", { accept: "text/plain" });
  const line = String(text)
    .split("\n")
    .find((l) => /^apiserver_(storage|resource)_objects\{/.test(l) && l.includes('resource="taskexecutions'));
  return line ? Number(line.split(" ").at(-1)) : undefined;
}

async function archived(): Promise<number> {
  const r = await sql<{ n: string }>`select count(*) as n from cronscale_executions`.execute(archive.db);
  return Number(r.rows[0]?.n ?? 0);
}

interface Sample {
  s: number;
  created: number;
  etcd: number;
  metric?: number;
  archived: number;
  rss: number;
  hwm: number;
}
const samples: Sample[] = [];
let created = 0;
let t0 = Date.now();
async function sample(): Promise<Sample> {
  const list = await client.list(API_VERSION, "TaskExecution", ns);
  const s: Sample = {
    s: Math.round((Date.now() - t0) / 1000),
    created,
    etcd: list.length,
    metric: await storedObjects(),
    archived: await archived(),
    ...memory(),
  };
  samples.push(s);
  return s;
}

// The operator's start: every task has a status.
for (;;) {
  const list = await client.list<ScheduledTask>(API_VERSION, "ScheduledTask", ns);
  if (list.filter((t) => t.status?.conditions?.length).length === T) break;
  await sleep(1000);
}
const idle = memory();
t0 = Date.now();
let sampling = true;
const sampler = (async () => {
  while (sampling) {
    await sample();
    await sleep(SAMPLE_MS);
  }
})();

const output = (i: number, at: string) => {
  let out = "";
  for (let k = 0; out.length < OUTPUT; k++) out += `${at} task ${i} step ${k} value=${(k * 7919) % 10007}\n`;
  return out.slice(0, OUTPUT);
};
for (let m = 0; m < M; m++) {
  const minuteStart = Date.now();
  await each(tasks, async (task) => {
    const at = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const i = Number(task.metadata.name?.slice(2));
    await client.create({
      apiVersion: API_VERSION,
      kind: "TaskExecution",
      metadata: {
        name: `${task.metadata.name}-${m}`,
        namespace: ns,
        labels: {
          [LABEL_MANAGED_BY]: MANAGED_BY,
          [LABEL_TASK]: task.metadata.name ?? "",
          [LABEL_TRIGGER]: "Schedule",
          [LABEL_RESULT]: "Succeeded",
        },
        ownerReferences: [ownerRef(task)],
      },
      spec: {
        taskName: task.metadata.name,
        trigger: "Schedule",
        jobName: `${task.metadata.name}-${m}`,
        language: "Bash",
        plan: "Micro",
        completionTime: at,
        durationSeconds: 3,
        runMilliseconds: 2713,
        measuredBy: "Runner",
        billedSeconds: 3,
        cost: "0.000012",
        currency: "USD",
        result: "Succeeded",
        exitCode: 0,
        reason: "Completed",
        message: "exit code 0",
        output: output(i, at),
        outputTruncated: false,
        expiresAt: new Date(Date.now() + 7 * 86_400_000).toISOString().replace(/\.\d+Z$/, "Z"),
      },
    });
    created++;
  });
  await sleep(Math.max(0, MINUTE_MS - (Date.now() - minuteStart)));
}
// Settle: everything archived and etcd back to the window (or two minutes).
const bound = T * W;
for (let i = 0; i < 120; i++) {
  const s = await sample();
  if (s.archived >= T * M && s.etcd <= bound) break;
  await sleep(1000);
}
sampling = false;
await sampler;
await sleep(65_000); // one more refresh of the API server's object-count metric
const last = await sample();

console.log(
  `stream: ${T} tasks x ${M} simulated minutes (${MINUTE_MS / 1000} s each) = ${T * M} runs, window ${W}`,
);
console.log(
  "   t(s)  created  etcd(LIST)  etcd(metric, all namespaces)  archived  operator RSS / peak (MiB)",
);
for (const s of samples)
  console.log(
    `${String(s.s).padStart(7)}  ${String(s.created).padStart(7)}  ${String(s.etcd).padStart(10)}  ${String(s.metric ?? "-").padStart(28)}  ${String(s.archived).padStart(8)}  ${s.rss.toFixed(0)} / ${s.hwm.toFixed(0)}`,
  );
const maxEtcd = Math.max(...samples.map((s) => s.etcd));
console.log(
  `TaskExecutions in etcd: at most ${maxEtcd} sampled, ${last.etcd} at the end (bound ${T} x ${W} = ${bound}); ${last.archived} of ${T * M} runs in the archive`,
);
console.log(
  `operator RSS: ${idle.rss.toFixed(0)} MiB idle with ${T} tasks, peak ${last.hwm.toFixed(0)} MiB (VmHWM), ${last.rss.toFixed(0)} MiB at the end`,
);

op.kill("SIGTERM");
await new Promise((r) => op.on("exit", r));
await client.delete("v1", "Namespace", "", ns);
await archive.close();
await pg.destroy();
