// Benchmark of the execution archive: a synthetic stream of finished runs (1,000 tasks every
// minute for M minutes = 1,000 × M runs, each with a few KiB of console output) written as the
// operator writes them (one idempotent insert per run, C concurrent writers), then the history
// and usage queries and the bulk prune. Reports write throughput, the archive's size per 1,000
// runs, query times and this process's RSS. Runs its own PostgreSQL (Debian's postgresql-15) on
// a random loopback port, or the one of --dsn.
//   node hack/bench/archive.ts [--tasks 1000] [--minutes 10] [--concurrency 4] [--output-bytes 2048]
import { parseArgs } from "node:util";
import { sql } from "kysely";
import type { TaskExecutionSpec } from "../../src/api/v1alpha1/taskexecution.ts";
import { type ArchivedRun, PgExecutionArchive } from "../../src/archive/store.ts";
import { startPostgres } from "../../test/support/postgres.ts";

const { values } = parseArgs({
  options: {
    tasks: { type: "string", default: "1000" },
    minutes: { type: "string", default: "10" },
    concurrency: { type: "string", default: "4" },
    "output-bytes": { type: "string", default: "2048" },
    dsn: { type: "string" },
  },
});
const TASKS = Number(values.tasks);
const MINUTES = Number(values.minutes);
const CONCURRENCY = Number(values.concurrency);
const OUTPUT = Number(values["output-bytes"]);

const pg = values.dsn ? undefined : await startPostgres();
const archive = new PgExecutionArchive(values.dsn ?? pg?.dsn ?? "", { maxConnections: CONCURRENCY });
await archive.migrate();

const start = Date.UTC(2026, 10, 1);
function run(task: number, minute: number): ArchivedRun {
  const t = new Date(start + minute * 60_000 + 3000).toISOString();
  // Output like a script's: varied lines (compresses as real logs do, not as one repeated byte).
  let output = "";
  for (let i = 0; output.length < OUTPUT; i++)
    output += `${t} task ${task} step ${i} value=${(i * 7919) % 10007}\n`;
  const spec: TaskExecutionSpec = {
    taskName: `task-${task}`,
    trigger: "Schedule",
    jobName: `task-${task}-${minute}`,
    language: "Bash",
    plan: "Micro",
    completionTime: t,
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
    output: output.slice(0, OUTPUT),
    outputTruncated: false,
    expiresAt: t,
  };
  return {
    namespace: "bench",
    name: `task-${task}-${9_999_999_999 - minute}-${minute}`,
    taskUid: `uid-${task}`,
    spec,
  };
}

const total = TASKS * MINUTES;
let next = 0;
let peakRss = 0;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    for (let i = next++; i < total; i = next++) {
      await archive.insert([run(i % TASKS, Math.floor(i / TASKS))]);
      if (i % 1000 === 0) peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }
  }),
);
const seconds = (performance.now() - t0) / 1000;
const size = await sql<{ bytes: string }>`
  select pg_total_relation_size('cronscale_executions') as bytes`.execute(archive.db);
const bytes = Number(size.rows[0]?.bytes ?? 0);

const timed = async (what: string, f: () => Promise<unknown>) => {
  const s = performance.now();
  await f();
  return `${what} ${(performance.now() - s).toFixed(1)} ms`;
};
const month = "2026-11";
const queries = [
  await timed("history(100)", () => archive.history({ namespace: "bench", taskName: "task-7", limit: 100 })),
  await timed("logs", () => archive.run("bench", "task-7")),
  await timed("usage(namespace)", () => archive.usage("bench", month)),
  await timed("prune(half)", () => archive.prune(new Date(start + (MINUTES / 2) * 60_000))),
];
const again = await archive.insert([run(0, 0), run(1, 1)]);
const usage = await archive.usage("bench", month, "task-0");

console.log(`runs written:        ${total} (${TASKS} tasks x ${MINUTES} minutes, ${OUTPUT} B output each)`);
console.log(
  `write throughput:    ${(total / seconds).toFixed(0)} runs/s (${seconds.toFixed(1)} s, ${CONCURRENCY} writers)`,
);
console.log(
  `archive size:        ${(bytes / 1024 / 1024).toFixed(1)} MiB, ${(((bytes / total) * 1000) / 1024 / 1024).toFixed(2)} MiB per 1,000 runs`,
);
console.log(`queries:             ${queries.join(", ")}`);
console.log(
  `re-sent after prune:  ${again} runs stored again; task-0 still billed ${usage[0]?.runs} runs (once each)`,
);
console.log(
  `this process's RSS (peak):  ${(Math.max(peakRss, process.memoryUsage().rss) / 1024 / 1024).toFixed(0)} MiB`,
);

await archive.close();
await pg?.destroy();
