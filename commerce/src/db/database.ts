import { CamelCasePlugin, Kysely, PostgresDialect } from "kysely";
import { type Migration, type MigrationProvider, Migrator } from "kysely/migration";
import pg from "pg";
import * as m0001 from "./migrations/0001_catalog_orders.ts";
import * as m0002 from "./migrations/0002_auth_limits.ts";
import * as m0003 from "./migrations/0003_payments_webhooks.ts";
import * as m0004 from "./migrations/0004_store_accounts_carts.ts";
import * as m0005 from "./migrations/0005_admin_auth.ts";
import * as m0006 from "./migrations/0006_order_shipping_address.ts";
import * as m0007 from "./migrations/0007_gcra_key_notify.ts";
import * as m0008 from "./migrations/0008_place_order.ts";
import * as m0009 from "./migrations/0009_payment_intents.ts";
import * as m0010 from "./migrations/0010_place_order_lock_order.ts";
import type { Database } from "./schema.ts";

// bigint (int8) as number: money in minor units and counts stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

export type DB = Kysely<Database>;

/** Every migration of this version, in order (imported, not read from disk: the image is read-only). */
const MIGRATIONS: Record<string, Migration> = {
  "0001_catalog_orders": m0001,
  "0002_auth_limits": m0002,
  "0003_payments_webhooks": m0003,
  "0004_store_accounts_carts": m0004,
  "0005_admin_auth": m0005,
  "0006_order_shipping_address": m0006,
  "0007_gcra_key_notify": m0007,
  "0008_place_order": m0008,
  "0009_payment_intents": m0009,
  "0010_place_order_lock_order": m0010,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

export function createDb(url: string, poolSize = 10): { db: DB; pool: pg.Pool } {
  // Two connections stay open and the rest linger a minute: every new connection resolves the
  // database's Service name again, and a burst after a quiet spell used to meet a slow cluster DNS
  // (EAI_AGAIN) and answer 500 where an open connection would have served.
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    min: Math.min(2, poolSize),
    idleTimeoutMillis: 60_000,
  });
  // An idle connection closed by the server (restart, failover) is dropped by the pool; without a
  // listener the 'error' event would end the process. The next query opens a new connection.
  pool.on("error", () => {});
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    plugins: [new CamelCasePlugin()],
  });
  return { db, pool };
}

/**
 * Applies the pending migrations. Kysely's Migrator holds a PostgreSQL advisory lock while it
 * reads and applies them, so replicas starting together apply each migration exactly once; the
 * others wait and then find nothing to do. A database migrated by a newer version (unknown names)
 * is accepted: forward-only migrations keep older pods working during a rolling upgrade.
 */
export async function migrate(db: DB): Promise<string[]> {
  // Kysely refuses a database with executed migrations it does not know; an older pod restarting
  // mid-upgrade finds its own all applied and goes on.
  if ((await pendingMigrations(db)).length === 0) return [];
  const migrator = new Migrator({ db, provider, allowUnorderedMigrations: false });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

/** Names of this version's migrations not yet applied (empty when the schema is ready). */
export async function pendingMigrations(db: DB): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  const all = await migrator.getMigrations();
  return all.filter((m) => !m.executedAt).map((m) => m.name);
}
