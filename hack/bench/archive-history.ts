// Benchmark of a task page's history at an every-minute task's week: 10,080 archived runs of one
// task (1 in 20 failed) among other tasks' runs, in a PostgreSQL with production durability
// (fsync on), read through the history endpoint over HTTP (loopback, an authorizer that allows
// all: the API server's TokenReview and SubjectAccessReview are not what is measured) as the
// dashboard reads it: pages of 50, newest first, by cursor, every page from the first to the last,
// all results and failed only. Then the archive's query alone, by cursor, against the baseline of
// the same pages by OFFSET (what paging without a cursor costs), in the same rounds, alternated.
// Prints p50 and p99 per way and the ratios cursor / offset.
//   node hack/bench/archive-history.ts [--runs 10080] [--neighbours 50] [--rounds 5] [--page 50]
import { get } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { startHistoryServer } from "../../src/archive/http.ts";
import {
  type ArchivedRun,
  PgExecutionArchive,
  positionOf,
  type RunPosition,
} from "../../src/archive/store.ts";
import { silentLogger } from "../../src/log.ts";
import { startPostgres } from "../../test/support/postgres.ts";
import { periodicRun } from "../../test/support/runs.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "10080" },
    neighbours: { type: "string", default: "50" },
    rounds: { type: "string", default: "5" },
    page: { type: "string", default: "50" },
  },
});
const RUNS = Number(values.runs);
const NEIGHBOURS = Number(values.neighbours);
const ROUNDS = Number(values.rounds);
const PAGE = Number(values.page);

const pg = await startPostgres({ fsync: true });
const archive = new PgExecutionArchive(pg.dsn, { maxConnections: 4 });
await archive.migrate();

const end = Date.UTC(2026, 10, 8);
const END = new Date(end);

// The week of the every-minute task, and of NEIGHBOURS tasks every 10 minutes (1,008 runs each).
const all = [
  ...Array.from({ length: RUNS }, (_, i) => periodicRun("bench", "every-minute", i, END)),
  ...Array.from({ length: NEIGHBOURS }, (_, n) =>
    Array.from({ length: Math.ceil(RUNS / 10) }, (_, i) =>
      periodicRun("bench", `neighbour-${n}`, i, END, 10),
    ),
  ).flat(),
];
const t0 = performance.now();
for (let i = 0; i < all.length; i += 1000) await archive.insert(all.slice(i, i + 1000));
await sql`analyze`.execute(archive.db);
console.log(
  `archived: ${all.length} runs (${RUNS} of every-minute, ${NEIGHBOURS} neighbours) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);

const server = await startHistoryServer(
  { host: "127.0.0.1", port: 0, log: silentLogger() },
  { archive, authorizer: { check: async () => "allowed" } },
);
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/namespaces/bench/scheduledtasks/every-minute/history`;

function fetchJson(url: string): Promise<{ items: unknown[]; next?: string }> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { authorization: "Bearer bench" } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        text += c;
      });
      res.on("end", () => (res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(text))));
    }).on("error", reject);
  });
}

/** Every page by cursor; the time of each. */
async function byCursor(filter: string): Promise<number[]> {
  const times: number[] = [];
  let cursor: string | undefined;
  do {
    const s = performance.now();
    const r = await fetchJson(`${base}?limit=${PAGE}${filter}${cursor ? `&cursor=${cursor}` : ""}`);
    times.push(performance.now() - s);
    cursor = r.next;
  } while (cursor);
  return times;
}

/** Every page by cursor, the archive's query alone (the same layer as the OFFSET baseline). */
async function byCursorQuery(result?: string): Promise<number[]> {
  const times: number[] = [];
  let after: RunPosition | undefined;
  for (;;) {
    const s = performance.now();
    const rows = await archive.history({
      namespace: "bench",
      taskName: "every-minute",
      result,
      after,
      limit: PAGE + 1,
    });
    JSON.stringify({ items: rows.slice(0, PAGE) });
    times.push(performance.now() - s);
    const last = rows[PAGE - 1];
    if (rows.length <= PAGE || !last) break;
    after = positionOf(last);
  }
  return times;
}

/** Every page by OFFSET (the same query without a cursor); the time of each. */
async function byOffset(result?: string): Promise<number[]> {
  const times: number[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const s = performance.now();
    let q = archive.db
      .selectFrom("cronscale_executions")
      .select(["name", "record"])
      .where("namespace", "=", "bench")
      .where("task_name", "=", "every-minute");
    if (result) q = q.where("result", "=", result);
    const rows = await q
      .orderBy("completion_time", "desc")
      .orderBy("name", "desc")
      .limit(PAGE + 1)
      .offset(offset)
      .execute();
    JSON.stringify({ items: rows.slice(0, PAGE) });
    times.push(performance.now() - s);
    if (rows.length <= PAGE) break;
  }
  return times;
}

const ways: Record<string, () => Promise<number[]>> = {
  "endpoint (HTTP), all results": () => byCursor(""),
  "endpoint (HTTP), Failed only": () => byCursor("&result=Failed"),
  "cursor query, all results": () => byCursorQuery(),
  "offset query, all (baseline)": () => byOffset(),
  "cursor query, Failed only": () => byCursorQuery("Failed"),
  "offset query, Failed (baseline)": () => byOffset("Failed"),
};
const samples: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
const firstAndLast: Record<string, { first: number[]; last: number[] }> = {};
const names = Object.keys(ways);
for (let round = 0; round < ROUNDS; round++) {
  // Alternated: each round starts with another way.
  const order = names.map((_, i) => names[(i + round) % names.length] as string);
  for (const name of order) {
    const t = await (ways[name] as () => Promise<number[]>)();
    samples[name]?.push(...t);
    const fl = firstAndLast[name] ?? { first: [], last: [] };
    firstAndLast[name] = fl;
    fl.first.push(t[0] ?? 0);
    fl.last.push(t.at(-1) ?? 0);
  }
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? 0;
};
const ms = (x: number) => `${x.toFixed(2)} ms`;
console.log(`pages of ${PAGE}, ${ROUNDS} rounds, every page of the history each round`);
for (const name of names) {
  const xs = samples[name] ?? [];
  const fl = firstAndLast[name] ?? { first: [], last: [] };
  console.log(
    `${name.padEnd(32)} pages ${String(xs.length / ROUNDS).padStart(4)}/round  p50 ${ms(pct(xs, 50))}  p99 ${ms(pct(xs, 99))}  first page p50 ${ms(pct(fl.first, 50))}  last page p50 ${ms(pct(fl.last, 50))}`,
  );
}
for (const [c, o] of [
  ["cursor query, all results", "offset query, all (baseline)"],
  ["cursor query, Failed only", "offset query, Failed (baseline)"],
] as const) {
  const a = samples[c] ?? [];
  const b = samples[o] ?? [];
  console.log(
    `${c} / offset: p50 ${(pct(a, 50) / pct(b, 50)).toFixed(2)}x, p99 ${(pct(a, 99) / pct(b, 99)).toFixed(2)}x`,
  );
}
for (const [what, result] of [
  ["all results", sql``],
  ["Failed only", sql`and result = 'Failed'`],
] as const) {
  const plan = await sql<{
    "QUERY PLAN": string;
  }>`explain analyze select name, record from cronscale_executions
    where namespace = 'bench' and task_name = 'every-minute' ${result}
      and (completion_time, name) < (${new Date(end - 10_000 * 60_000).toISOString()}::timestamptz, 'z')
    order by completion_time desc, name desc limit ${PAGE + 1}`.execute(archive.db);
  console.log(
    `plan of a page near the end, ${what}:\n  ${plan.rows.map((r) => r["QUERY PLAN"]).join("\n  ")}`,
  );
}

server.close();
await archive.close();
await pg.destroy();
