// Webhook delivery benchmark: lag from an order's commit to the receipt of its order.created
// event, at a fixed order rate through the real API, on PostgreSQL with production's durability
// (fsync, synchronous_commit and full_page_writes on). Loopback only.
//
//   npm run bench:webhooks -- [--seconds 60] [--rate 100] [--rounds 5] [--warmup 3]
//
// Each round gets a fresh database and a fresh service (the real app: API key auth, order
// placement, outbox) whose webhook points at a receiver on 127.0.0.1. Orders are sent open-loop at
// `--rate` per second for `--seconds` (after `--warmup` seconds at the same rate that are not
// measured) by a worker thread, which also runs the receiver, so neither shares the service's
// event loop. Two sides alternate, ABBA, `--rounds` rounds each:
//   - worker: the service's webhook worker as it ships (NOTIFY wake-up, per-endpoint concurrency,
//     pool of its own, attempts recorded, Standard Webhooks signature);
//   - bare: the floor, a bare NOTIFY→POST loop: the order's transaction sends a NOTIFY instead of
//     inserting a job; one statement claims up to 128 pending deliveries (marked sent before they
//     are), and each is POSTed unsigned with nothing recorded.
// Reported per round and as medians per side: lag p50/p99/max of the measured window's events, the
// backlog (events committed − distinct webhook-ids received) over time, events committed vs
// receipts vs distinct webhook-ids (duplicates = receipts − distinct), the order rate achieved
// and order latency.
import { createServer, Agent as HttpAgent, request } from "node:http";
import { parseArgs } from "node:util";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { sql, type Transaction } from "kysely";
import pg from "pg";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { createDb, migrate } from "../src/db/database.ts";
import type { Database } from "../src/db/schema.ts";
import { ensureDefaultStore } from "../src/db/seed.ts";
import { startPostgres } from "../test/setup/postgres.ts";

const KEY = `csk_${"w".repeat(40)}`;
const PRODUCTS = 2000;

type Side = "worker" | "bare";
interface LoadParams {
  rate: number;
  seconds: number;
  warmup: number;
  diag: boolean;
}
type FromThread =
  | { type: "listening"; port: number }
  | { type: "tick"; distinct: number }
  | { type: "measuring"; at: number }
  | { type: "sent"; ok: number; failed: number; latencies: number[]; elapsedMs: number }
  | { type: "report"; receipts: number; distinct: number; lags: number[] };

const pct = (sorted: number[], p: number) =>
  sorted.length
    ? (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0)
    : Number.NaN;
const median = (xs: number[]) =>
  pct(
    [...xs].sort((a, b) => a - b),
    50,
  );

// ---------------------------------------------------------------------------------------------
// The load thread: the receiver and the open-loop order sender.

async function loadThread(): Promise<void> {
  const port = parentPort;
  if (!port) return;
  const seen = new Map<string, number>(); // webhook-id → receipts
  const lags: number[] = [];
  let receipts = 0;
  let measureFrom = Number.POSITIVE_INFINITY;
  const rx = createServer((req, res) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const id = String(req.headers["webhook-id"]);
      receipts++;
      const n = seen.get(id) ?? 0;
      seen.set(id, n + 1);
      const ts = Date.parse(JSON.parse(Buffer.concat(chunks).toString()).timestamp);
      if (n === 0 && ts >= measureFrom) lags.push(at - ts);
      res.writeHead(204).end();
    });
  });
  rx.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => rx.listen(0, "127.0.0.1", r));
  const post = (msg: FromThread) => port.postMessage(msg);
  post({ type: "listening", port: (rx.address() as { port: number }).port });
  const tick = setInterval(() => post({ type: "tick", distinct: seen.size }), 250);

  port.on("message", async (msg: { type: "go"; url: string } | { type: "report" } | { type: "close" }) => {
    if (msg.type === "report") {
      post({ type: "report", receipts, distinct: seen.size, lags });
      return;
    }
    if (msg.type === "close") {
      clearInterval(tick);
      rx.closeAllConnections();
      rx.close();
      port.close();
      return;
    }
    const { rate, seconds, warmup } = workerData as LoadParams;
    const agent = new HttpAgent({ keepAlive: true, maxSockets: 256 });
    const latencies: number[] = [];
    let ok = 0;
    let failed = 0;
    const inflight = new Set<Promise<void>>();
    const order = (measured: boolean) => {
      const t0 = performance.now();
      const body = JSON.stringify({
        lines: [{ sku: `SKU-${1 + Math.floor(Math.random() * PRODUCTS)}`, quantity: 1 }],
      });
      const p = new Promise<void>((resolve) => {
        const req = request(
          `${msg.url}/api/v1/orders`,
          {
            method: "POST",
            agent,
            headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
          },
          (res) => {
            res.resume();
            res.on("end", () => {
              if (res.statusCode === 201) ok += measured ? 1 : 0;
              else failed++;
              if (measured) latencies.push(performance.now() - t0);
              resolve();
            });
          },
        );
        req.on("error", () => {
          failed++;
          resolve();
        });
        req.end(body);
      });
      inflight.add(p);
      void p.then(() => inflight.delete(p));
    };
    // Open loop: at each 5 ms tick, send what the rate says should have been sent by now.
    const run = (secs: number, measured: boolean) =>
      new Promise<number>((resolve) => {
        const start = performance.now();
        let sent = 0;
        const total = Math.round(rate * secs);
        const timer = setInterval(() => {
          const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate));
          while (sent < due) {
            order(measured);
            sent++;
          }
          if (sent >= total) {
            clearInterval(timer);
            resolve(performance.now() - start);
          }
        }, 5);
      });
    await run(warmup, false);
    measureFrom = Date.now();
    post({ type: "measuring", at: measureFrom });
    const t0 = performance.now();
    await run(seconds, true);
    await Promise.all(inflight);
    const elapsedMs = performance.now() - t0;
    agent.destroy();
    post({ type: "sent", ok, failed, latencies, elapsedMs });
  });
}

// ---------------------------------------------------------------------------------------------
// The bare NOTIFY→POST loop (the baseline).

const BARE_CHANNEL = "bench_bare_webhooks";
const BARE_BATCH = 128;

class BareLoop {
  private readonly pool: pg.Pool;
  private readonly listener: pg.Client;
  private readonly agent = new HttpAgent({ keepAlive: true });
  private fetching = false;
  private again = false;
  private running = true;
  private readonly posts = new Set<Promise<void>>();

  constructor(url: string) {
    this.pool = new pg.Pool({ connectionString: url, max: 4 });
    this.listener = new pg.Client({ connectionString: url });
  }

  /** The outbox hook: a NOTIFY in the order's transaction instead of a job. */
  readonly enqueue = async (trx: Transaction<Database>) => {
    await sql`select pg_notify(${BARE_CHANNEL}, '')`.execute(trx);
  };

  async start(): Promise<void> {
    this.listener.on("notification", () => this.wake());
    await this.listener.connect();
    await this.listener.query(`listen ${BARE_CHANNEL}`);
  }

  private wake(): void {
    if (!this.running) return;
    if (this.fetching) {
      this.again = true;
      return;
    }
    this.fetching = true;
    void this.pump().finally(() => (this.fetching = false));
  }

  private async pump(): Promise<void> {
    do {
      this.again = false;
      const { rows } = await this.pool.query<{ url: string; event_id: string; payload: string }>(
        `update webhook_deliveries d set status = 'succeeded', attempts = 1, updated_at = now()
           from webhook_events e
          where e.id = d.event_id and d.id in (
            select id from webhook_deliveries where status = 'pending'
             order by created_at limit ${BARE_BATCH} for update skip locked)
          returning d.url, d.event_id, e.payload::text as payload`,
      );
      for (const r of rows) {
        const p = new Promise<void>((resolve) => {
          const req = request(
            r.url,
            {
              method: "POST",
              agent: this.agent,
              headers: { "content-type": "application/json", "webhook-id": r.event_id },
            },
            (res) => {
              res.resume();
              res.on("end", resolve);
            },
          );
          req.on("error", () => resolve());
          req.end(r.payload);
        });
        this.posts.add(p);
        void p.then(() => this.posts.delete(p));
      }
      if (rows.length === BARE_BATCH) this.again = true;
    } while (this.again && this.running);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.listener.end();
    while (this.fetching) await new Promise((r) => setTimeout(r, 10));
    await Promise.all(this.posts);
    this.agent.destroy();
    await this.pool.end();
  }
}

// ---------------------------------------------------------------------------------------------
// One round.

interface Round {
  side: Side;
  lag: { p50: number; p99: number; max: number; n: number };
  events: number;
  receipts: number;
  distinct: number;
  ordersPerSecond: number;
  orderP50: number;
  orderP99: number;
  failed: number;
  /** Backlog (events − distinct received) each second of the measured window. */
  backlog: number[];
  drainMs: number;
  /** CPU of this process (service and load thread) during the load, in cores. */
  serviceCpu: number;
}

async function round(adminUrl: string, n: number, side: Side, params: LoadParams): Promise<Round> {
  const dbName = `bench_webhooks_${n}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.query(`create database ${dbName}`);
  await admin.end();
  const dbUrl = adminUrl.replace(/\/postgres$/, `/${dbName}`);

  const thread = new Worker(new URL(import.meta.url), { workerData: params });
  const inbox: FromThread[] = [];
  let distinctNow = 0;
  let measuringAt = 0;
  const waiters: (() => void)[] = [];
  thread.on("message", (m: FromThread) => {
    if (m.type === "tick") distinctNow = m.distinct;
    else if (m.type === "measuring") measuringAt = m.at;
    else inbox.push(m);
    for (const w of waiters.splice(0)) w();
  });
  const next = async <T extends FromThread["type"]>(type: T): Promise<Extract<FromThread, { type: T }>> => {
    for (;;) {
      const i = inbox.findIndex((m) => m.type === type);
      if (i >= 0) return inbox.splice(i, 1)[0] as Extract<FromThread, { type: T }>;
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  const { port } = await next("listening");

  const config = loadConfig({
    DATABASE_URL: dbUrl,
    API_KEY: KEY,
    PLATFORM_PLAN: "Enterprise",
    COMMERCE_RATE_LIMIT_PER_MINUTE: "unlimited",
    COMMERCE_LOG_LEVEL: "silent",
    COMMERCE_WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8",
    CONFIG_WEBHOOKS: JSON.stringify([
      { name: "bench", url: `http://127.0.0.1:${port}/hook`, events: ["OrderCreated"] },
    ]),
    // Pool and concurrency settings can be varied from the environment; the defaults otherwise.
    ...Object.fromEntries(
      Object.entries(process.env).filter(([k]) =>
        /^COMMERCE_(WEBHOOK_DB_POOL_SIZE|WEBHOOK_CONCURRENCY|DB_POOL_SIZE)$/.test(k),
      ),
    ),
    WEBHOOK_BENCH_SIGNING_KEY: `whsec_${Buffer.from("bench-signing-key-0123456789abcdef").toString("base64")}`,
  });
  const { db, pool } = createDb(config.databaseUrl, config.COMMERCE_DB_POOL_SIZE);
  await migrate(db);
  await ensureDefaultStore(db, config);
  await pool.query(`
    insert into products (id, title, status, created_at, updated_at)
      select 'prod_' || g, 'Product ' || g, 'active', now() - g * interval '1 second', now() from generate_series(1, ${PRODUCTS}) g;
    insert into variants (id, product_id, sku, title, price_minor, currency, position)
      select 'var_' || g, 'prod_' || g, 'SKU-' || g, 'Default', 1000 + g, 'USD', 0 from generate_series(1, ${PRODUCTS}) g;
    insert into inventory_levels (variant_id, store_id, available, low_stock_threshold)
      select 'var_' || g, 'default', 1000000000, 0 from generate_series(1, ${PRODUCTS}) g;
    analyze;`);
  // The production settings: the default pool sizes and the default 2 s fallback poll.
  const svc = await buildApp({ config, db, logger: false });
  let bare: BareLoop | undefined;
  if (side === "worker") await svc.webhooks.start(svc.outbox);
  else {
    bare = new BareLoop(dbUrl);
    await bare.start();
    svc.outbox.enqueue = bare.enqueue;
  }
  await svc.app.listen({ port: 0, host: "127.0.0.1" });
  const url = `http://127.0.0.1:${(svc.app.server.address() as { port: number }).port}`;

  const counter = new pg.Client({ connectionString: dbUrl });
  await counter.connect();
  const events = async () =>
    Number((await counter.query("select count(*)::int as n from webhook_events")).rows[0].n);
  const backlog: number[] = [];
  let sampling = true;
  // --diag: what the database's sessions wait on, sampled every 100 ms during the load.
  const waits = new Map<string, number>();
  const diag = params.diag
    ? (async () => {
        while (sampling) {
          const r = await counter.query(
            `select coalesce(wait_event_type || ':' || wait_event, 'cpu') as w, left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 60) as q
               from pg_stat_activity where datname = current_database() and state = 'active' and pid <> pg_backend_pid()`,
          );
          for (const row of r.rows) waits.set(`${row.w} ${row.q}`, (waits.get(`${row.w} ${row.q}`) ?? 0) + 1);
          await new Promise((r) => setTimeout(r, 100));
        }
      })()
    : undefined;
  const sampler = (async () => {
    while (!measuringAt) await new Promise((r) => setTimeout(r, 20));
    for (let t = measuringAt + 1000; sampling; t += 1000) {
      await new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));
      if (!sampling) break;
      const d = distinctNow;
      backlog.push((await events()) - d);
    }
  })();

  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  thread.postMessage({ type: "go", url });
  const sent = await next("sent");
  const used = process.cpuUsage(cpu0);
  // CPU of the service's thread (API, worker or bare loop) while the orders ran, as a share of a core.
  const serviceCpu = (used.user + used.system) / 1000 / (performance.now() - wall0);
  sampling = false;
  await sampler;
  await diag;
  if (params.diag)
    for (const [k, v] of [...waits].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${v}\t${k}`);
  const drainStart = Date.now();
  const total = await events();
  while (distinctNow < total && Date.now() - drainStart < 30_000) await new Promise((r) => setTimeout(r, 20));
  const drainMs = Date.now() - drainStart;
  await new Promise((r) => setTimeout(r, 500)); // a late duplicate would arrive now
  thread.postMessage({ type: "report" });
  const rep = await next("report");
  thread.postMessage({ type: "close" });
  await new Promise((r) => thread.once("exit", r));

  if (side === "worker") await svc.webhooks.stop();
  else await bare?.stop();
  await svc.app.close();
  await counter.end();
  await db.destroy();

  const lags = rep.lags.sort((a, b) => a - b);
  const lat = sent.latencies.sort((a, b) => a - b);
  return {
    side,
    lag: { p50: pct(lags, 50), p99: pct(lags, 99), max: lags.at(-1) ?? Number.NaN, n: lags.length },
    events: await eventsOf(adminUrl, dbName),
    receipts: rep.receipts,
    distinct: rep.distinct,
    ordersPerSecond: (sent.ok / sent.elapsedMs) * 1000,
    orderP50: pct(lat, 50),
    orderP99: pct(lat, 99),
    failed: sent.failed,
    backlog,
    drainMs,
    serviceCpu,
  };
}

async function eventsOf(adminUrl: string, dbName: string): Promise<number> {
  const c = new pg.Client({ connectionString: adminUrl.replace(/\/postgres$/, `/${dbName}`) });
  await c.connect();
  const n = Number((await c.query("select count(*)::int as n from webhook_events")).rows[0].n);
  await c.end();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
  return n;
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: "string", default: "60" },
      rate: { type: "string", default: "100" },
      rounds: { type: "string", default: "5" },
      warmup: { type: "string", default: "3" },
      diag: { type: "boolean", default: false },
    },
  });
  const params: LoadParams = {
    seconds: Number(values.seconds),
    rate: Number(values.rate),
    warmup: Number(values.warmup),
    diag: values.diag ?? false,
  };
  const rounds = Number(values.rounds);
  const server = await startPostgres({ durable: true });
  const results: Round[] = [];
  try {
    const probe = new pg.Client({ connectionString: server.url });
    await probe.connect();
    const settings = await probe.query(
      "select name, setting from pg_settings where name in ('fsync', 'synchronous_commit', 'full_page_writes') order by name",
    );
    await probe.end();
    console.log(
      `webhook delivery at ${params.rate} orders/s for ${params.seconds} s (+${params.warmup} s warm-up), ${rounds} rounds per side, ABBA; PostgreSQL ${settings.rows.map((r) => `${r.name}=${r.setting}`).join(" ")}`,
    );
    let n = 0;
    for (let i = 0; i < rounds; i++) {
      const order: Side[] = i % 2 === 0 ? ["worker", "bare"] : ["bare", "worker"];
      for (const side of order) {
        const r = await round(server.url, n++, side, params);
        results.push(r);
        const series = r.backlog.filter((_, k) => (k + 1) % 10 === 0 || k === r.backlog.length - 1);
        console.log(
          `round ${n} ${side.padEnd(6)}: lag p50 ${r.lag.p50} ms, p99 ${r.lag.p99} ms, max ${r.lag.max} ms (${r.lag.n} events measured); ` +
            `events ${r.events}, receipts ${r.receipts}, distinct webhook-ids ${r.distinct}, duplicates ${r.receipts - r.distinct}, missing ${r.events - r.distinct}; ` +
            `orders ${r.ordersPerSecond.toFixed(1)}/s, p50 ${r.orderP50.toFixed(0)} ms, p99 ${r.orderP99.toFixed(0)} ms, failed ${r.failed}; ` +
            `backlog every 10 s [${series.join(", ")}], max ${Math.max(...r.backlog)}, drained ${r.drainMs} ms after the last order; process CPU ${r.serviceCpu.toFixed(2)} cores`,
        );
      }
    }
  } finally {
    await server.stop();
  }
  console.log("\nmedians over rounds:");
  const med: Record<Side, Record<string, number>> = { worker: {}, bare: {} };
  for (const side of ["worker", "bare"] as const) {
    const rs = results.filter((r) => r.side === side);
    med[side] = {
      p50: median(rs.map((r) => r.lag.p50)),
      p99: median(rs.map((r) => r.lag.p99)),
      max: median(rs.map((r) => r.lag.max)),
      backlogMax: median(rs.map((r) => Math.max(...r.backlog))),
      backlogEnd: median(rs.map((r) => r.backlog.at(-1) ?? 0)),
      rate: median(rs.map((r) => r.ordersPerSecond)),
      orderP99: median(rs.map((r) => r.orderP99)),
    };
    const dup = rs.reduce((a, r) => a + r.receipts - r.distinct, 0);
    const missing = rs.reduce((a, r) => a + r.events - r.distinct, 0);
    const m = med[side];
    console.log(
      `${side.padEnd(6)}: lag p50 ${m.p50} ms, p99 ${m.p99} ms, max ${m.max} ms; backlog max ${m.backlogMax}, at the end ${m.backlogEnd}; ` +
        `orders ${m.rate?.toFixed(1)}/s (p99 ${m.orderP99?.toFixed(0)} ms); over all rounds: duplicates ${dup}, missing ${missing}`,
    );
  }
  const ratio = (k: string) => ((med.worker[k] ?? 0) / (med.bare[k] ?? 1)).toFixed(2);
  console.log(`worker / bare: lag p50 ${ratio("p50")}×, p99 ${ratio("p99")}×, max ${ratio("max")}×`);
}

if (isMainThread) await main();
else await loadThread();
