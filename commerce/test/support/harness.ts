import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { type App, buildApp } from "../../src/app.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import { createDb, type DB, migrate } from "../../src/db/database.ts";
import { ensureDefaultStore } from "../../src/db/seed.ts";

// A fresh database on the run's PostgreSQL server, and the service on a random port of 127.0.0.1
// serving it, as the process would (config from env, migrations, default store).

export const OPERATOR_KEY = `csk_${"k".repeat(40)}`;

/** Creates an empty database; returns its URL. */
export async function freshDatabase(): Promise<string> {
  const admin = inject("pgAdminUrl");
  const name = `t_${randomBytes(6).toString("hex")}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`create database ${name}`);
  await c.end();
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return u.toString();
}

export interface Service {
  url: string;
  config: Config;
  db: DB;
  app: App;
  /** fetch against the service with the operator's key (unless headers say otherwise). */
  call: (path: string, init?: RequestInit & { json?: unknown; key?: string | null }) => Promise<Response>;
  close: () => Promise<void>;
}

export async function startService(
  env: Record<string, string> = {},
  databaseUrl?: string,
  opts: { webhooks?: boolean; webhookPollSeconds?: number } = {},
): Promise<Service> {
  const dbUrl = databaseUrl ?? (await freshDatabase());
  const config = loadConfig({
    DATABASE_URL: dbUrl,
    API_KEY: OPERATOR_KEY,
    COMMERCE_LOG_LEVEL: "silent",
    ...env,
  });
  const { db } = createDb(config.databaseUrl, 5);
  await migrate(db);
  await ensureDefaultStore(db, config);
  const app = await buildApp({
    config,
    db,
    logger: false,
    webhookPollSeconds: opts.webhookPollSeconds ?? 0.5,
  });
  if (opts.webhooks) await app.webhooks.start(app.outbox);
  await app.app.listen({ port: 0, host: "127.0.0.1" });
  const addr = app.app.server.address();
  if (!addr || typeof addr !== "object") throw new Error("no address");
  const url = `http://127.0.0.1:${addr.port}`;
  const call: Service["call"] = (path, init = {}) => {
    const { json, key, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (key !== null && !headers.has("authorization"))
      headers.set("authorization", `Bearer ${key ?? OPERATOR_KEY}`);
    if (json !== undefined) headers.set("content-type", "application/json");
    return fetch(url + path, {
      ...rest,
      headers,
      body: json !== undefined ? JSON.stringify(json) : rest.body,
    });
  };
  return {
    url,
    config,
    db,
    app,
    call,
    close: async () => {
      await app.app.close();
      if (opts.webhooks) await app.webhooks.stop();
      await db.destroy();
    },
  };
}

/** A product body with one variant per SKU. */
export function productBody(title: string, skus: string[], priceMinor = 1000, stock = 100) {
  return {
    title,
    variants: skus.map((sku) => ({
      sku,
      title: sku,
      priceMinor,
      inventory: { available: stock, lowStockThreshold: 5 },
    })),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: test assertions read response bodies freely
export type Json = any;
/** The response body as JSON. */
export const body = (r: Response): Promise<Json> => r.json() as Promise<Json>;
