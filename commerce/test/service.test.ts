import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";
import { createDb, migrate, pendingMigrations } from "../src/db/database.ts";
import { body, freshDatabase, type Service, startService } from "./support/harness.ts";

describe("configuration", () => {
  const base = { DATABASE_URL: "postgres://u@h/d" };
  it("refuses an unknown setting under its own prefixes, naming it", () => {
    expect(() => loadConfig({ ...base, CONFIG_STROE: "{}" })).toThrow(/CONFIG_STROE: unknown setting/);
    expect(() => loadConfig({ ...base, COMMERCE_FOO: "1" })).toThrow(/COMMERCE_FOO/);
  });
  it("refuses an invalid setting, naming it and the field inside", () => {
    expect(() => loadConfig({ ...base, PLATFORM_PLAN: "Gold" })).toThrow(/PLATFORM_PLAN/);
    expect(() => loadConfig({ ...base, CONFIG_LOCALIZATION: "{nope" })).toThrow(
      /CONFIG_LOCALIZATION: is not valid JSON/,
    );
    expect(() => loadConfig({ ...base, CONFIG_LOCALIZATION: '{"currency":"euro"}' })).toThrow(
      /CONFIG_LOCALIZATION \(at currency\)/,
    );
    // Well-formed for the platform's schema, but no zone: refused at start, not at the first read.
    expect(() => loadConfig({ ...base, CONFIG_LOCALIZATION: '{"timezone":"Mars/Olympus"}' })).toThrow(
      /CONFIG_LOCALIZATION \(at timezone\): must be an IANA time zone name/,
    );
    expect(
      loadConfig({ ...base, CONFIG_LOCALIZATION: '{"timezone":"Europe/Berlin"}' }).CONFIG_LOCALIZATION,
    ).toMatchObject({ timezone: "Europe/Berlin" });
    expect(() => loadConfig({ ...base, COMMERCE_WEBHOOK_ALLOWED_CIDRS: "10.0.0.0/33" })).toThrow(
      /COMMERCE_WEBHOOK_ALLOWED_CIDRS/,
    );
    expect(() => loadConfig({})).toThrow(ConfigError);
  });
  it("reads what the operator passes (src/controllers/scaleplatform/desired)", () => {
    const c = loadConfig({
      PORT: "8080",
      DB_USER: "commerce",
      DB_PASSWORD: "pw",
      DB_NAME: "commerce",
      DATABASE_URL: "postgres://commerce:pw@shop-db.ns.svc:5432/commerce?sslmode=disable",
      PLATFORM_INSTANCE: "shop",
      PLATFORM_PLAN: "Professional",
      PLATFORM_URL: "https://shop.example.test/",
      ADMIN_URL: "https://admin.shop.example.test/",
      API_URL: "https://api.shop.example.test/api/v1/",
      PLAN_MAX_PRODUCTS: "50000",
      ADMIN_USERNAME: "admin",
      ADMIN_PASSWORD: "secret",
      API_KEY: "csk_0123456789012345678901234567890123456789",
      CONFIG_STORE: '{"name":"Shop","contactEmail":"a@b.test"}',
      CONFIG_LOCALIZATION: '{"currency":"EUR","tax":{"defaultRatePercent":"19"}}',
      CONFIG_EMAIL: "",
      CONFIG_PAYMENT_GATEWAYS: '[{"name":"cards","type":"Card","provider":"stripe"}]',
      CONFIG_SHIPPING_METHODS: "[]",
      CONFIG_WEBHOOKS: '[{"name":"erp","url":"https://erp.test/hook","events":["OrderCreated"]}]',
      WEBHOOK_ERP_SIGNING_KEY: "whsec_abc",
      PAYMENT_CARDS_secretKey: "sk_test_123",
      PAYMENT_CARDS_webhookSecret: "whsec_123",
      PATH: "/usr/bin",
    });
    expect(c.hosts).toEqual({
      platform: "shop.example.test",
      admin: "admin.shop.example.test",
      api: "api.shop.example.test",
    });
    expect(c.issuer).toBe("https://api.shop.example.test");
    expect(c.webhookSigningKeys.get("erp")).toBe("whsec_abc");
    expect(c.paymentCredentials.get("cards")).toEqual({
      secretKey: "sk_test_123",
      webhookSecret: "whsec_123",
    });
    expect(c.CONFIG_LOCALIZATION?.currency).toBe("EUR");
    expect(c.CONFIG_EMAIL).toBeUndefined();
  });
  it("builds the database URL from its parts", () => {
    const c = loadConfig({ DB_HOST: "db", DB_USER: "u", DB_PASSWORD: "p@ss", DB_NAME: "shop" });
    expect(c.databaseUrl).toBe("postgres://u:p%40ss@db:5432/shop");
  });
  it("refuses a signing key of a webhook that is not configured", () => {
    expect(() => loadConfig({ ...base, WEBHOOK_GHOST_SIGNING_KEY: "x" })).toThrow(
      /WEBHOOK_GHOST_SIGNING_KEY/,
    );
  });
});

describe("migrations", () => {
  it("apply once when several replicas start together, then are reported applied", async () => {
    const url = await freshDatabase();
    const replicas = Array.from({ length: 4 }, () => createDb(url, 2).db);
    const applied = await Promise.all(replicas.map((db) => migrate(db)));
    const names = applied.flat().sort();
    // Each migration applied by exactly one replica.
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual([
      "0001_catalog_orders",
      "0002_auth_limits",
      "0003_payments_webhooks",
      "0004_store_accounts_carts",
      "0005_admin_auth",
      "0006_order_shipping_address",
      "0007_gcra_key_notify",
      "0008_place_order",
      "0009_payment_intents",
      "0010_place_order_lock_order",
    ]);
    const db = replicas[0]!;
    expect(await pendingMigrations(db)).toEqual([]);
    const rows = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(db);
    expect(rows.rows[0]?.n).toBe(names.length);
    await Promise.all(replicas.map((r) => r.destroy()));
  });
});

describe("operations endpoints", () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({
      API_URL: "https://api.shop.test/api/v1/",
      PLATFORM_URL: "https://shop.test/",
    });
  });
  afterAll(() => svc.close());

  it("/healthz and /readyz answer", async () => {
    expect((await svc.call("/healthz", { key: null })).status).toBe(200);
    const r = await svc.call("/readyz", { key: null });
    expect(r.status).toBe(200);
    expect(await body(r)).toEqual({ status: "ready" });
  });

  it("/readyz is 503 while this version's migrations are not applied", async () => {
    await sql`delete from kysely_migration where name = '0002_auth_limits'`.execute(svc.db);
    const r = await svc.call("/readyz", { key: null });
    expect(r.status).toBe(503);
    expect(r.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect((await body(r)).detail).toMatch(/0002_auth_limits/);
    await sql`insert into kysely_migration (name, timestamp) values ('0002_auth_limits', now()::text)`.execute(
      svc.db,
    );
    expect((await svc.call("/readyz", { key: null })).status).toBe(200);
  });

  it("/metrics counts requests by route and status, and is not served on the public hosts", async () => {
    await svc.call("/api/v1/products");
    await svc.call("/api/v1/products", { key: "wrong-key-000000000000" });
    const text = await (await svc.call("/metrics", { key: null })).text();
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/products",status="200"\} 1/);
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/products",status="401"\} 1/);
    expect(text).toMatch(/http_request_duration_seconds_bucket/);
    expect(text).toMatch(/http_requests_in_flight/);
    expect(text).toMatch(/commerce_database_size_bytes [1-9]\d+/);
    expect(text).toMatch(/webhook_queue_depth 0/);
    // The host's /proc/net/dev here (the pod's own in a cluster); loopback traffic left out.
    expect(text).toMatch(/commerce_pod_network_receive_bytes_total \d+/);
    expect(text).toMatch(/commerce_pod_network_transmit_bytes_total \d+/);
    const pub = await svc.call("/metrics", { key: null, headers: { "x-forwarded-host": "shop.test" } });
    expect(pub.status).toBe(404);
  });

  it("the API is not served on the store host", async () => {
    const r = await svc.call("/api/v1/products", { headers: { "x-forwarded-host": "shop.test" } });
    expect(r.status).toBe(404);
    expect((await body(r)).detail).toMatch(/api\.shop\.test/);
  });

  it("serves an OpenAPI 3.1 document of the API", async () => {
    const r = await svc.call("/api/v1/openapi.json", { key: null });
    expect(r.status).toBe(200);
    const doc = await body(r);
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toContain("/api/v1/products");
    expect(doc.paths["/api/v1/products"].post.requestBody).toBeDefined();
  });
});
