import type { Transaction } from "kysely";
import { sql } from "kysely";
import pg from "pg";
import client from "prom-client";
import type { Database } from "../db/schema.ts";

// A product-read cache per replica, invalidated across replicas through PostgreSQL LISTEN/NOTIFY:
// a change notifies in its own transaction (delivered at commit), and every replica drops that
// product. The cache is used only while the listening connection is up; after a reconnect it
// starts empty (notifications may have been missed). A read that raced with an invalidation is
// not stored (generation check), so a stale product never outlives the notification.

export const CHANNEL = "commerce_product_changed";
const MAX_ENTRIES = 10_000;

export class ProductCache<T> {
  private readonly entries = new Map<string, T>();
  private generation = 0;
  private listener?: pg.Client;
  private connected = false;
  private stopped = false;
  private readonly url: string;
  private readonly requests?: client.Counter<"result">;

  constructor(url: string, registry?: client.Registry) {
    this.url = url;
    if (registry) {
      this.requests = new client.Counter({
        name: "commerce_product_cache_requests_total",
        help: "Product reads by cache result (hit, miss, bypass while not listening).",
        labelNames: ["result"] as const,
        registers: [registry],
      });
    }
  }

  async start(): Promise<void> {
    const c = new pg.Client({ connectionString: this.url });
    c.on("notification", (n) => {
      this.generation++;
      if (n.payload) this.entries.delete(n.payload);
    });
    c.on("error", () => this.reconnect(c));
    c.on("end", () => this.reconnect(c));
    await c.connect();
    await c.query(`listen ${CHANNEL}`);
    this.listener = c;
    this.entries.clear();
    this.generation++;
    this.connected = true;
  }

  private reconnect(c: pg.Client): void {
    if (this.listener !== c || this.stopped) return;
    this.connected = false;
    this.listener = undefined;
    this.entries.clear();
    setTimeout(() => void this.start().catch(() => this.reconnect(c)), 1000).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.connected = false;
    await this.listener?.end().catch(() => {});
  }

  /** The product from the cache, else from `load` (stored unless an invalidation raced it). */
  async get(id: string, load: () => Promise<T>): Promise<T> {
    if (!this.connected) {
      this.requests?.inc({ result: "bypass" });
      return load();
    }
    const hit = this.entries.get(id);
    if (hit !== undefined) {
      this.requests?.inc({ result: "hit" });
      return hit;
    }
    this.requests?.inc({ result: "miss" });
    const gen = this.generation;
    const value = await load();
    if (gen === this.generation && this.connected) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(id, value);
    }
    return value;
  }
}

/** Tells every replica, at commit of `trx`, that product `id` changed. */
export async function productChanged(trx: Transaction<Database>, id: string): Promise<void> {
  await sql`select pg_notify(${CHANNEL}, ${id})`.execute(trx);
}
