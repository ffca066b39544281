// Benchmark of the store frontend at the Professional plan's product limit (50,000 products, two
// variants each), on this machine (loopback, one real PostgreSQL): p50/p99 under concurrent load
// of the listing (first page, a deep page, a search) and the product page, next to the API's
// GET /api/v1/products measured in the same run. Also prints the plans of the listing and search
// queries, which must use the indexes of migration 0004 rather than scan the table.
// Run: npm run bench:store (BENCH_SECONDS per phase, default 6).
import autocannon from "autocannon";
import pg from "pg";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { createDb, migrate } from "../src/db/database.ts";
import { ensureDefaultStore } from "../src/db/seed.ts";
import { encodeCursor } from "../src/store/catalog.ts";
import { startPostgres } from "../test/setup/postgres.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const CONNECTIONS = 16;
const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? 50_000);
const KEY = `csk_${"b".repeat(40)}`;
const COLORS = ["Blue", "Red", "Green", "Black", "White", "Amber", "Olive", "Coral", "Slate", "Ivory"];
const THINGS = ["Mug", "Apron", "Skillet", "Kettle", "Bowl", "Plate", "Towel", "Knife", "Board", "Jar"];
const MATERIALS = ["enamel", "linen", "cast iron", "stoneware", "walnut", "steel", "cotton", "glass"];

const run = (opts: autocannon.Options) =>
  new Promise<autocannon.Result>((resolve, reject) =>
    autocannon({ duration: SECONDS, connections: CONNECTIONS, ...opts }, (err, res) =>
      err ? reject(err) : resolve(res),
    ),
  );
const fmt = (r: autocannon.Result) =>
  `${String(Math.round(r.requests.average)).padStart(4)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`;
const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)] as T;

const server = await startPostgres();
try {
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query("create database bench");
  await admin.end();
  const config = loadConfig({
    DATABASE_URL: server.url.replace(/\/postgres$/, "/bench"),
    API_KEY: KEY,
    PLATFORM_PLAN: "Professional",
    PLATFORM_URL: "http://shop.bench",
    API_URL: "http://api.bench",
    COMMERCE_RATE_LIMIT_PER_MINUTE: "unlimited",
    COMMERCE_LOG_LEVEL: "silent",
    CONFIG_STORE: JSON.stringify({ name: "Bench Store", contactEmail: "shop@bench.test" }),
  });
  const { db, pool } = createDb(config.databaseUrl, 10);
  await migrate(db);
  await ensureDefaultStore(db, config);
  const t0 = Date.now();
  const arr = (xs: string[]) => `array[${xs.map((x) => `'${x}'`).join(",")}]`;
  await pool.query(`
    insert into products (id, title, description, status, created_at, updated_at)
      select 'prod_' || g,
        (${arr(COLORS)})[1 + g % 10] || ' ' || (${arr(THINGS)})[1 + (g / 10) % 10] || ' ' || g,
        'Made of ' || (${arr(MATERIALS)})[1 + g % 8] || '.',
        case when g % 50 = 0 then 'draft' else 'active' end,
        now() - g * interval '1 second', now()
      from generate_series(1, ${PRODUCTS}) g;
    insert into variants (id, product_id, sku, title, price_minor, currency, position)
      select 'var_' || g || '_' || v, 'prod_' || g, 'SKU-' || g || '-' || v, case v when 0 then 'Small' else 'Large' end,
        1000 + g % 5000 + v * 500, 'USD', v
      from generate_series(1, ${PRODUCTS}) g, generate_series(0, 1) v;
    insert into inventory_levels (variant_id, store_id, available, low_stock_threshold)
      select id, 'default', (hashtext(id) & 31), 5 from variants;
    analyze;`);
  console.log(`seeded ${PRODUCTS} products (${PRODUCTS * 2} variants) in ${Date.now() - t0} ms`);

  const explain = async (label: string, q: string) => {
    const r = await pool.query(`explain (analyze, format json) ${q}`);
    const plan = JSON.stringify(r.rows[0]["QUERY PLAN"]);
    const indexes = [...new Set([...plan.matchAll(/"Index Name":"([^"]+)"/g)].map((m) => m[1]))];
    const seq = plan.includes('"Seq Scan"') && plan.includes('"Relation Name":"products"');
    const ms = r.rows[0]["QUERY PLAN"][0]["Execution Time"];
    console.log(
      `plan ${label.padEnd(22)}: indexes ${indexes.join(", ") || "none"}; seq scan of products: ${seq ? "YES" : "no"}; ${ms.toFixed(2)} ms`,
    );
  };
  const vector = `to_tsvector('simple', products.title || ' ' || coalesce(products.description, ''))`;
  await explain(
    "listing, page 1",
    "select id, title from products where status = 'active' order by title, id limit 25",
  );
  await explain(
    "listing, deep page",
    "select id, title from products where status = 'active' and (title, id) > ('Olive Kettle 30000', 'prod_30000') order by title, id limit 25",
  );
  await explain(
    "search 'kettle'",
    `select id, title from products where status = 'active' and ${vector} @@ to_tsquery('simple', 'kettle:*') order by title, id limit 25`,
  );
  await explain(
    "search 'blue ket'",
    `select id, title from products where status = 'active' and ${vector} @@ to_tsquery('simple', 'blue:* & ket:*') order by title, id limit 25`,
  );

  const svc = await buildApp({ config, db, logger: false });
  await svc.app.listen({ port: 0, host: "127.0.0.1" });
  const url = `http://127.0.0.1:${(svc.app.server.address() as { port: number }).port}`;
  const shop = { host: "shop.bench" };
  const api = { host: "api.bench", authorization: `Bearer ${KEY}` };
  // A "next page" cursor at a random product: the keyset position of a deep page.
  const randomCursor = () => {
    const g = 1 + Math.floor(Math.random() * PRODUCTS);
    return encodeCursor([`${COLORS[g % 10]} ${THINGS[Math.floor(g / 10) % 10]} ${g}`, `prod_${g}`]);
  };
  // Drafts (every 50th) are not sold: the store answers 404 for them.
  const randomProduct = () => {
    const n = 1 + Math.floor(Math.random() * PRODUCTS);
    return `prod_${n % 50 === 0 ? n - 1 : n}`;
  };
  await run({ url: `${url}/products`, headers: shop, duration: 2 }); // warm-up
  await run({ url: `${url}/api/v1/products?limit=50`, headers: api, duration: 2 });

  const phases: [string, autocannon.Options][] = [
    ["GET /api/v1/products (API, 50)", { url: `${url}/api/v1/products?limit=50`, headers: api }],
    ["store listing, page 1 (24)", { url: `${url}/products`, headers: shop }],
    [
      "store listing, random deep page",
      {
        url: `${url}/products`,
        headers: shop,
        requests: [{ setupRequest: (r) => ({ ...r, path: `/products?after=${randomCursor()}` }) }],
      },
    ],
    [
      "store search (random words)",
      {
        url: `${url}/products`,
        headers: shop,
        requests: [
          {
            setupRequest: (r) => ({
              ...r,
              path: `/products?q=${encodeURIComponent(`${pick(COLORS)} ${pick(THINGS).slice(0, 3)}`)}`,
            }),
          },
        ],
      },
    ],
    [
      "store product page (random)",
      {
        url: `${url}/products`,
        headers: shop,
        requests: [{ setupRequest: (r) => ({ ...r, path: `/products/${randomProduct()}` }) }],
      },
    ],
  ];
  for (const [label, opts] of phases) console.log(`${label.padEnd(32)}: ${fmt(await run(opts))}`);
  await svc.app.close();
  await db.destroy();
} finally {
  await server.stop();
}
