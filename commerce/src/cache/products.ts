import type { Transaction } from "kysely";
import { sql } from "kysely";
import client from "prom-client";
import type { Database } from "../db/schema.ts";
import { NotifiedCache } from "./notified.ts";

// The product-read cache per replica (GET /api/v1/products/{id}): a change to a product notifies
// every replica in its transaction, and they drop their copy (cache/notified.ts).

export const CHANNEL = "commerce_product_changed";
const MAX_ENTRIES = 10_000;

export class ProductCache<T> extends NotifiedCache<T> {
  constructor(url: string, registry?: client.Registry) {
    super(url, CHANNEL, {
      maxEntries: MAX_ENTRIES,
      requests: registry
        ? new client.Counter({
            name: "commerce_product_cache_requests_total",
            help: "Product reads by cache result (hit, miss, bypass while not listening).",
            labelNames: ["result"] as const,
            registers: [registry],
          })
        : undefined,
    });
  }
}

/** Tells every replica, at commit of `trx`, that product `id` changed. */
export async function productChanged(trx: Transaction<Database>, id: string): Promise<void> {
  await sql`select pg_notify(${CHANNEL}, ${id})`.execute(trx);
}
