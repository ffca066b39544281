// Benchmark of the commerce service on this machine (loopback, one real PostgreSQL):
//   1. GET /api/v1/products (a page of 50, authenticated, rate limit lifted) against a bare
//      fastify + pg handler running the same two queries (page + its variants), no auth;
//   2. order creation throughput (POST /api/v1/orders);
//   3. webhook delivery lag from commit to receipt (p50/p99).
// Run: npm run bench (bounded: a few seconds per phase, loopback only).
import { createServer } from "node:http";
import autocannon from "autocannon";
import pg from "pg";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { createDb, migrate } from "../src/db/database.ts";
import { ensureDefaultStore } from "../src/db/seed.ts";
import { startPostgres } from "../test/setup/postgres.ts";
import { bareProducts, seedCatalog } from "./catalog.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = 16;
const KEY = `csk_${"b".repeat(40)}`;

const run = (opts: autocannon.Options) =>
  new Promise<autocannon.Result>((resolve, reject) =>
    autocannon({ duration: SECONDS, connections: CONNECTIONS, ...opts }, (err, res) =>
      err ? reject(err) : resolve(res),
    ),
  );
const fmt = (r: autocannon.Result) =>
  `${Math.round(r.requests.average)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`;

const server = await startPostgres();
try {
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query("create database bench");
  await admin.end();
  const dbUrl = server.url.replace(/\/postgres$/, "/bench");

  // The receiver of webhook events: lag = receipt time - event timestamp.
  const lags: number[] = [];
  const rx = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString()));
    req.on("end", () => {
      lags.push(Date.now() - Date.parse(JSON.parse(raw).timestamp));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => rx.listen(0, "127.0.0.1", r));
  const rxPort = (rx.address() as { port: number }).port;

  const config = loadConfig({
    DATABASE_URL: dbUrl,
    API_KEY: KEY,
    PLATFORM_PLAN: "Enterprise",
    COMMERCE_RATE_LIMIT_PER_MINUTE: process.env.BENCH_RATE_LIMIT ?? "unlimited",
    COMMERCE_LOG_LEVEL: "silent",
    COMMERCE_DB_POOL_SIZE: "10",
    COMMERCE_WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8",
    CONFIG_WEBHOOKS: JSON.stringify([
      { name: "bench", url: `http://127.0.0.1:${rxPort}/`, events: ["OrderCreated"] },
    ]),
  });
  const { db, pool } = createDb(config.databaseUrl, 10);
  await migrate(db);
  await ensureDefaultStore(db, config);
  await seedCatalog(pool);
  const svc = await buildApp({ config, db, logger: false, webhookPollSeconds: 0.5 });
  await svc.webhooks.start(svc.outbox);
  await svc.app.listen({ port: 0, host: "127.0.0.1" });
  const svcUrl = `http://127.0.0.1:${(svc.app.server.address() as { port: number }).port}`;

  const bare = await bareProducts(dbUrl, 10);

  const auth = { authorization: `Bearer ${KEY}` };
  await run({ url: `${svcUrl}/api/v1/products?limit=50`, headers: auth, duration: 2 }); // warm-up
  await run({ url: bare.url, duration: 2 });
  const bareRes = await run({ url: bare.url });
  const svcRes = await run({ url: `${svcUrl}/api/v1/products?limit=50`, headers: auth });
  console.log(`bare fastify + pg     : ${fmt(bareRes)}`);
  console.log(`GET /api/v1/products  : ${fmt(svcRes)}`);
  console.log(`ratio service / bare  : ${(svcRes.requests.average / bareRes.requests.average).toFixed(2)}`);

  const orders = await run({
    url: `${svcUrl}/api/v1/orders`,
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    // Random SKUs: concurrent orders rarely wait on the same stock row.
    requests: [
      {
        setupRequest: (r) => ({
          ...r,
          body: JSON.stringify({
            lines: [{ sku: `SKU-${1 + Math.floor(Math.random() * 2000)}`, quantity: 1 }],
          }),
        }),
      },
    ],
  });
  console.log(`POST /api/v1/orders   : ${fmt(orders)}`);
  const created = orders.requests.total;
  const deadline = Date.now() + 60_000;
  while (lags.length < orders["2xx"] && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  lags.sort((a, b) => a - b);
  const q = (p: number) => lags[Math.min(lags.length - 1, Math.floor((p / 100) * lags.length))];
  console.log(
    `webhook lag (commit → receipt), ${lags.length} of ${orders["2xx"]} orders (${created} sent): p50 ${q(50)} ms, p99 ${q(99)} ms`,
  );

  await svc.webhooks.stop();
  await svc.app.close();
  await bare.close();
  await db.destroy();
  rx.close();
} finally {
  await server.stop();
}
