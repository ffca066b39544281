// Benchmark of reads under the shared rate limit on this machine (loopback, one real PostgreSQL
// with production durability: fsync, synchronous_commit and full_page_writes on):
//   - "service": GET /api/v1/products?limit=50 as a client uses it — an issued API key (resolved
//     from the replica's key cache) and the shared rate limit ON (GCRA leases; BENCH_RATE_LIMIT
//     per minute, default 100,000,000: on, never reached);
//   - "bare": a bare fastify + pg handler running the same two queries (the page, its variants)
//     and sending the same JSON, no auth, no limit, no validation;
//   - "limit off": the service with the operator's key and the limit off (what the limit and the
//     issued key cost together, measured in the same run).
// 2,000 products, 16 connections, a pool of 10 each. Rounds rotate the sides' order (bare,
// service, limit off, then the reverse, …) so a drifting machine weighs on all alike. Prints each
// round and, per side, the medians of req/s, p50 and p99, the ratio service / bare of the median
// req/s and the median of the rounds' ratios, and the rate-limit lease calls per request.
// Run: npm run bench:reads (BENCH_ROUNDS per side, default 5; BENCH_SECONDS per round, default 6).
import autocannon from "autocannon";
import pg from "pg";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { createDb, migrate } from "../src/db/database.ts";
import { ensureDefaultStore } from "../src/db/seed.ts";
import { startPostgres } from "../test/setup/postgres.ts";
import { bareProducts, seedCatalog } from "./catalog.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const RATE = process.env.BENCH_RATE_LIMIT ?? "100000000";
const CONNECTIONS = 16;
const POOL = 10;
const OPERATOR_KEY = `csk_${"b".repeat(40)}`;

const run = (opts: autocannon.Options) =>
  new Promise<autocannon.Result>((resolve, reject) =>
    autocannon({ duration: SECONDS, connections: CONNECTIONS, ...opts }, (err, res) =>
      err ? reject(err) : resolve(res),
    ),
  );
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const line = (r: autocannon.Result) =>
  `${String(Math.round(r.requests.average)).padStart(4)} req/s, p50 ${String(r.latency.p50).padStart(3)} ms, p99 ${String(r.latency.p99).padStart(4)} ms, non-2xx ${r.non2xx}, errors ${r.errors}`;

const server = await startPostgres({ durable: true });
try {
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query("create database bench");
  // Counts calls of plpgsql functions (rate_limit_lease) in pg_stat_user_functions.
  await admin.query("alter database bench set track_functions = 'pl'");
  const settings = await admin.query(
    "select name, setting from pg_settings where name in ('fsync', 'synchronous_commit', 'full_page_writes') order by name",
  );
  await admin.end();
  const dbUrl = server.url.replace(/\/postgres$/, "/bench");

  const env = {
    DATABASE_URL: dbUrl,
    API_KEY: OPERATOR_KEY,
    PLATFORM_PLAN: "Enterprise",
    COMMERCE_LOG_LEVEL: "silent",
    COMMERCE_DB_POOL_SIZE: String(POOL),
  };
  const { db, pool } = createDb(dbUrl, POOL);
  await migrate(db);
  await ensureDefaultStore(db, loadConfig(env));
  await seedCatalog(pool, 1000);

  const start = async (extra: Record<string, string>) => {
    const config = loadConfig({ ...env, ...extra });
    const own = createDb(dbUrl, POOL);
    const svc = await buildApp({ config, db: own.db, logger: false });
    await svc.app.listen({ port: 0, host: "127.0.0.1" });
    const url = `http://127.0.0.1:${(svc.app.server.address() as { port: number }).port}`;
    const close = async () => {
      await svc.app.close();
      await own.db.destroy();
    };
    return { url, close };
  };
  const limited = await start({ COMMERCE_RATE_LIMIT_PER_MINUTE: RATE });
  const unlimited = await start({ COMMERCE_RATE_LIMIT_PER_MINUTE: "unlimited" });

  // An issued key with the read scope, as a client would use.
  const issued = await fetch(`${limited.url}/api/v1/api-keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${OPERATOR_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench", scopes: ["products:read"] }),
  });
  const key = ((await issued.json()) as { key: string }).key;

  const bare = await bareProducts(dbUrl, POOL);

  const sides = {
    bare: { url: bare.url, headers: {} },
    service: { url: `${limited.url}/api/v1/products?limit=50`, headers: { authorization: `Bearer ${key}` } },
    "limit off": {
      url: `${unlimited.url}/api/v1/products?limit=50`,
      headers: { authorization: `Bearer ${OPERATOR_KEY}` },
    },
  } as const;
  type Side = keyof typeof sides;
  const order: Side[] = ["bare", "service", "limit off"];
  const results: Record<Side, autocannon.Result[]> = { bare: [], service: [], "limit off": [] };

  console.log(
    `PostgreSQL ${settings.rows.map((r) => `${r.name}=${r.setting}`).join(", ")}; ${ROUNDS} rounds × ${SECONDS} s per side, ${CONNECTIONS} connections, rate limit ${RATE}/min`,
  );
  for (const side of order) await run({ ...sides[side], duration: 2 }); // warm-up
  const leaseCalls = async () => {
    const r = await pool.query(
      "select coalesce(sum(calls), 0)::int as n from pg_stat_user_functions where funcname = 'rate_limit_lease'",
    );
    return r.rows[0].n as number;
  };
  let leases = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    for (const side of round % 2 ? order : [...order].reverse()) {
      // Statistics reach pg_stat_user_functions when a backend goes idle (at most once a second).
      const before = side === "service" ? await leaseCalls() : 0;
      const r = await run(sides[side]);
      if (side === "service") {
        await new Promise((res) => setTimeout(res, 1500));
        leases += (await leaseCalls()) - before;
      }
      results[side].push(r);
      console.log(`round ${round} ${side.padEnd(9)}: ${line(r)}`);
    }
  }
  const med = (side: Side, f: (r: autocannon.Result) => number) => median(results[side].map(f));
  console.log("\nmedians of the rounds");
  for (const side of order) {
    console.log(
      `${side.padEnd(9)}: ${Math.round(med(side, (r) => r.requests.average))} req/s, p50 ${med(side, (r) => r.latency.p50)} ms, p99 ${med(side, (r) => r.latency.p99)} ms`,
    );
  }
  const ratio = (side: Side) => med(side, (r) => r.requests.average) / med("bare", (r) => r.requests.average);
  const roundRatios = (side: Side) =>
    median(
      results[side].map(
        (r, i) => r.requests.average / (results.bare[i] as autocannon.Result).requests.average,
      ),
    );
  console.log(
    `service / bare   : ${ratio("service").toFixed(2)} (median of the rounds' ratios ${roundRatios("service").toFixed(2)})`,
  );
  console.log(
    `limit off / bare : ${ratio("limit off").toFixed(2)} (median of the rounds' ratios ${roundRatios("limit off").toFixed(2)})`,
  );
  const served = results.service.reduce((n, r) => n + r.requests.total, 0);
  console.log(
    `rate-limit leases: ${leases} calls for ${served} service requests (${((leases / served) * 1000).toFixed(1)} per 1,000)`,
  );

  await limited.close();
  await unlimited.close();
  await bare.close();
  await db.destroy();
} finally {
  await server.stop();
}
