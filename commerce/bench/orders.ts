// Benchmark of order placement on this machine (loopback, one real PostgreSQL with production
// durability: fsync, synchronous_commit and full_page_writes on):
//   - POST /api/v1/orders on the service as a client uses it: an issued API key (not the
//     operator's), a new Idempotency-Key on every request, one webhook subscribed to OrderCreated
//     (the outbox rows and the delivery worker as in production), rate limit lifted unless
//     BENCH_RATE_LIMIT is set;
//   - against a bare fastify + pg handler making an order's minimal writes in one transaction:
//     the variant's price read, a conditional stock decrement, the order, its line and an outbox
//     row (BEGIN, five statements, COMMIT), no auth, no validation library, no idempotency.
// Both take the same request (one line of a random SKU among 2,000, quantity 1), 16 connections,
// a pool of 10 each. Rounds alternate (bare, service, service, bare, …) so a drifting machine
// weighs on both sides alike; before each round the delivery worker's backlog is drained (for at
// most a minute; the round prints what was left) so one side's events are not delivered during
// the other's round. Prints per round and the medians of req/s, p50 and p99 latency per side, and
// the ratio service / bare of the medians.
// Each round also prints the CPU per answered request of this process (the side's server and
// autocannon) and of PostgreSQL (its processes' /proc counters). BENCH_DELIVER=0 leaves the
// delivery worker stopped (the write path alone, nothing to drain).
// Run: npm run bench:orders (BENCH_ROUNDS per side, default 5; BENCH_SECONDS per round, default 6).
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import autocannon from "autocannon";
import Fastify from "fastify";
import pg from "pg";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { createDb, migrate } from "../src/db/database.ts";
import { ensureDefaultStore } from "../src/db/seed.ts";
import { startPostgres } from "../test/setup/postgres.ts";
import { seedCatalog } from "./catalog.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const CONNECTIONS = 16;
const POOL = 10;
const SKUS = 2000; // seedCatalog's
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
const line = (r: autocannon.Result & { nodeCpuMs: number; pgCpuMs: number }) =>
  `${String(Math.round(r.requests.average)).padStart(4)} req/s, p50 ${String(r.latency.p50).padStart(3)} ms, p99 ${String(r.latency.p99).padStart(4)} ms, non-2xx ${r.non2xx}, errors ${r.errors}; CPU per request: this process ${r.nodeCpuMs.toFixed(2)} ms, PostgreSQL ${r.pgCpuMs.toFixed(2)} ms`;
/** CPU milliseconds used so far by the PostgreSQL server on `port` and its backends, ended ones included (Linux /proc). */
function postgresCpuMs(port: string): number {
  const pids = (args: string[]) => {
    try {
      return execFileSync("pgrep", args).toString().trim().split("\n").filter(Boolean);
    } catch {
      return [];
    }
  };
  const main = pids(["-f", "--", `-p ${port} `])[0];
  if (!main) return 0;
  let ticks = 0;
  for (const pid of [main, ...pids(["-P", main])]) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      ticks += Number(f[11]) + Number(f[12]); // utime, stime
      // The server's cutime and cstime: backends that have ended (a pool closes idle connections).
      if (pid === main) ticks += Number(f[13]) + Number(f[14]);
    } catch {
      // a backend that ended meanwhile
    }
  }
  return ticks * 10; // USER_HZ = 100
}

/** One order request: a random SKU, a new idempotency key. */
const orderRequest = (r: autocannon.Request) => ({
  ...r,
  headers: { ...r.headers, "idempotency-key": randomUUID() },
  body: JSON.stringify({ lines: [{ sku: `SKU-${1 + Math.floor(Math.random() * SKUS)}`, quantity: 1 }] }),
});

const server = await startPostgres({ durable: true });
try {
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query("create database bench");
  const settings = await admin.query(
    "select name, setting from pg_settings where name in ('fsync', 'synchronous_commit', 'full_page_writes') order by name",
  );
  await admin.end();
  const dbUrl = server.url.replace(/\/postgres$/, "/bench");

  let received = 0;
  const rx = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => rx.listen(0, "127.0.0.1", r));
  const rxPort = (rx.address() as { port: number }).port;

  const config = loadConfig({
    DATABASE_URL: dbUrl,
    API_KEY: OPERATOR_KEY,
    PLATFORM_PLAN: "Enterprise",
    COMMERCE_RATE_LIMIT_PER_MINUTE: process.env.BENCH_RATE_LIMIT ?? "unlimited",
    COMMERCE_LOG_LEVEL: "silent",
    COMMERCE_DB_POOL_SIZE: String(POOL),
    COMMERCE_WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8",
    CONFIG_WEBHOOKS: JSON.stringify([
      { name: "bench", url: `http://127.0.0.1:${rxPort}/`, events: ["OrderCreated"] },
    ]),
  });
  const { db, pool } = createDb(config.databaseUrl, POOL);
  await migrate(db);
  await ensureDefaultStore(db, config);
  await seedCatalog(pool);
  const svc = await buildApp({ config, db, logger: false });
  const deliver = process.env.BENCH_DELIVER !== "0";
  if (deliver) await svc.webhooks.start(svc.outbox);
  await svc.app.listen({ port: 0, host: "127.0.0.1" });
  const svcUrl = `http://127.0.0.1:${(svc.app.server.address() as { port: number }).port}`;
  const issued = await fetch(`${svcUrl}/api/v1/api-keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${OPERATOR_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench", scopes: ["orders:write"] }),
  });
  if (issued.status !== 201) throw new Error(`issuing an API key: ${issued.status} ${await issued.text()}`);
  const { key } = (await issued.json()) as { key: string };

  // The bare baseline: the writes an order needs, hand-written, in one transaction.
  const bare = Fastify({ logger: false });
  const barePool = new pg.Pool({ connectionString: dbUrl, max: POOL });
  barePool.on("error", () => {}); // the server going away at the end
  bare.post("/orders", async (req, reply) => {
    const { lines } = req.body as { lines: { sku: string; quantity: number }[] };
    const l = lines[0] as { sku: string; quantity: number };
    const c = await barePool.connect();
    try {
      await c.query("begin");
      const v = await c.query<{ id: string; product_id: string; price_minor: number }>(
        "select id, product_id, price_minor from variants where sku = $1",
        [l.sku],
      );
      const variant = v.rows[0];
      if (!variant) throw new Error(`no variant ${l.sku}`);
      const stock = await c.query(
        "update inventory_levels set available = available - $2 where variant_id = $1 and store_id = 'default' and available >= $2",
        [variant.id, l.quantity],
      );
      if (stock.rowCount !== 1) {
        await c.query("rollback");
        return reply.code(409).send({ error: "insufficient stock" });
      }
      const id = `ord_${randomUUID()}`;
      const total = Number(variant.price_minor) * l.quantity;
      await c.query(
        `insert into orders (id, store_id, status, currency, subtotal_minor, tax_minor, shipping_minor, total_minor)
         values ($1, 'default', 'pending', 'USD', $2, 0, 0, $2)`,
        [id, total],
      );
      await c.query(
        `insert into order_lines (id, order_id, position, variant_id, product_id, sku, title, quantity, unit_price_minor, total_minor)
         values ($1, $2, 0, $3, $4, $5, 'Product', $6, $7, $8)`,
        [
          `oln_${randomUUID()}`,
          id,
          variant.id,
          variant.product_id,
          l.sku,
          l.quantity,
          variant.price_minor,
          total,
        ],
      );
      await c.query("insert into webhook_events (id, type, payload) values ($1, 'order.created', $2)", [
        `msg_${randomUUID()}`,
        JSON.stringify({ type: "order.created", data: { id, totalMinor: total } }),
      ]);
      await c.query("commit");
      return reply.code(201).send({ id, totalMinor: total, lines: [{ sku: l.sku, quantity: l.quantity }] });
    } catch (err) {
      await c.query("rollback").catch(() => {});
      throw err;
    } finally {
      c.release();
    }
  });
  await bare.listen({ port: 0, host: "127.0.0.1" });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`;

  const sides = {
    bare: { url: `${bareUrl}/orders`, headers: { "content-type": "application/json" } },
    service: {
      url: `${svcUrl}/api/v1/orders`,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    },
  } as const;
  type Side = keyof typeof sides;
  const pgPort = new URL(server.url).port;
  /** One round of `side`, with the CPU per answered request of this process and of PostgreSQL. */
  const round = async (side: Side, seconds = SECONDS) => {
    const [node0, pg0] = [process.cpuUsage(), postgresCpuMs(pgPort)];
    const r = await run({
      ...sides[side],
      method: "POST",
      duration: seconds,
      requests: [{ setupRequest: orderRequest }],
    });
    const node = process.cpuUsage(node0);
    const n = Math.max(1, r.requests.total);
    return Object.assign(r, {
      nodeCpuMs: (node.user + node.system) / 1000 / n,
      pgCpuMs: (postgresCpuMs(pgPort) - pg0) / n,
    });
  };
  type Round = Awaited<ReturnType<typeof round>>;
  /** Waits until every OrderCreated delivery so far is done (at most a minute). */
  const drain = async () => {
    if (!deliver) return 0;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await pool.query<{ n: number }>(
        "select count(*)::int as n from webhook_deliveries where status = 'pending'",
      );
      const n = r.rows[0]?.n ?? 0;
      if (n === 0) return 0;
      if (Date.now() > deadline) return n;
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  console.log(
    `PostgreSQL ${settings.rows.map((r) => `${r.name}=${r.setting}`).join(", ")}; ${CONNECTIONS} connections, pool ${POOL}, ${ROUNDS} rounds of ${SECONDS} s per side, rate limit ${config.COMMERCE_RATE_LIMIT_PER_MINUTE ?? "plan"}`,
  );
  await round("bare", 2); // warm-up
  await round("service", 2);
  const results: Record<Side, Round[]> = { bare: [], service: [] };
  const order: Side[] = [];
  for (let i = 0; i < ROUNDS; i++)
    order.push(...((i % 2 ? ["service", "bare"] : ["bare", "service"]) as Side[]));
  let left = 0;
  for (const [i, side] of order.entries()) {
    left = await drain();
    const r = await round(side);
    results[side].push(r);
    console.log(
      `round ${String(i + 1).padStart(2)} ${side.padEnd(7)}: ${line(r)}${left ? ` (${left} deliveries pending at start)` : ""}`,
    );
  }
  const med = (side: Side) => ({
    rps: median(results[side].map((r) => r.requests.average)),
    p50: median(results[side].map((r) => r.latency.p50)),
    p99: median(results[side].map((r) => r.latency.p99)),
    non2xx: results[side].reduce((s, r) => s + r.non2xx + r.errors, 0),
    nodeCpuMs: median(results[side].map((r) => r.nodeCpuMs)),
    pgCpuMs: median(results[side].map((r) => r.pgCpuMs)),
  });
  const b = med("bare");
  const s = med("service");
  const show = (name: string, m: ReturnType<typeof med>) =>
    `${name}: median ${Math.round(m.rps)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms (non-2xx and errors over all rounds: ${m.non2xx}); CPU per request: this process ${m.nodeCpuMs.toFixed(2)} ms, PostgreSQL ${m.pgCpuMs.toFixed(2)} ms`;
  console.log(show("bare fastify + pg, minimal writes", b));
  console.log(show("POST /api/v1/orders              ", s));
  console.log(`ratio service / bare (median req/s): ${(s.rps / b.rps).toFixed(2)}`);

  // What the service wrote (its orders alone have a status history): one OrderCreated delivery each.
  const count = async (q: string) => (await pool.query<{ n: number }>(q)).rows[0]?.n ?? 0;
  await new Promise((r) => setTimeout(r, 1000)); // requests still in flight when the last round ended
  const placed = await count("select count(distinct order_id)::int as n from order_status_history");
  const deliveries = await count("select count(*)::int as n from webhook_deliveries");
  console.log(
    `check: the service placed ${placed} orders (warm-up included), ${deliveries} deliveries written, ${received} received so far`,
  );

  if (deliver) await svc.webhooks.stop();
  await svc.app.close();
  await bare.close();
  await barePool.end();
  await db.destroy();
  rx.close();
} finally {
  await server.stop();
}
