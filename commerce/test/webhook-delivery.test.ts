import { randomBytes } from "node:crypto";
import { CamelCasePlugin, Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../src/db/schema.ts";
import { body, freshDatabase, type Service, startService } from "./support/harness.ts";
import { type Receiver, startReceiver } from "./support/receiver.ts";

// How fast deliveries start and what they do not wait for, with real receivers on 127.0.0.1 and
// the fallback poll set to a minute, so that only the NOTIFY wake-up can explain a fast delivery.

const lag = (r: { at: number; body: { timestamp: string } }) => r.at - Date.parse(r.body.timestamp);

describe("webhook delivery latency and isolation", () => {
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  let fast: Receiver;
  let slow: Receiver;
  let svc: Service;

  beforeAll(async () => {
    fast = await startReceiver(secret);
    slow = await startReceiver(secret);
    slow.delays.set("/slow", 2000);
    svc = await startService(
      {
        CONFIG_WEBHOOKS: JSON.stringify([
          { name: "fast", url: `${fast.url}/fast`, events: ["CustomerRegistered"] },
          { name: "slow", url: `${slow.url}/slow`, events: ["CustomerRegistered"] },
        ]),
        WEBHOOK_FAST_SIGNING_KEY: secret,
        WEBHOOK_SLOW_SIGNING_KEY: secret,
        COMMERCE_WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8",
        COMMERCE_WEBHOOK_CONCURRENCY: "2",
        COMMERCE_WEBHOOK_DB_POOL_SIZE: "3",
      },
      await freshDatabase(),
      { webhooks: true, webhookPollSeconds: 60 },
    );
    // Past the first fetch the worker makes at start.
    await new Promise((r) => setTimeout(r, 300));
  });
  afterAll(async () => {
    await svc.close();
    await fast.close();
    await slow.close();
  });

  it("a receiver taking 2 s per answer does not delay another endpoint's events", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const c = await body(
        await svc.call("/api/v1/customers", {
          method: "POST",
          json: { email: `c${i}@iso.test`, name: `C${i}` },
        }),
      );
      ids.push(c.id);
    }
    await fast.waitFor((r) => r.length === 12, 5_000);
    // Every event reached the fast endpoint within a second of its commit, verified, once each…
    expect(fast.received.every((r) => r.verified)).toBe(true);
    expect(new Set(fast.received.map((r) => r.body.data.id))).toEqual(new Set(ids));
    expect(new Set(fast.received.map((r) => r.id)).size).toBe(12);
    expect(Math.max(...fast.received.map(lag))).toBeLessThan(1000);
    // …while the slow one, two at a time (COMMERCE_WEBHOOK_CONCURRENCY), has had only the first few.
    expect(slow.received.length).toBeLessThanOrEqual(4);
    // It gets them all in the end, two in flight at most: 12 × 2 s / 2 ≈ 12 s.
    await slow.waitFor((r) => r.length === 12, 25_000);
    const starts = slow.received.map((r) => r.at).sort((a, b) => a - b);
    for (let i = 2; i < starts.length; i++) {
      expect(starts[i]! - starts[i - 2]!).toBeGreaterThanOrEqual(1900);
    }
    // The last answer's transaction may still be committing.
    const pending = async () =>
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from webhook_deliveries where status <> 'succeeded'`.execute(svc.db)
      ).rows[0]?.n;
    for (let i = 0; i < 40 && (await pending()) !== 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await pending()).toBe(0);
  }, 40_000);

  it("wakes up on the commit's NOTIFY while every connection of the API's pool is busy", async () => {
    // The API's pool (5 connections in tests) held for 3 s; the event is written on a connection of
    // its own, through the outbox, as an order's transaction would.
    const held = Array.from({ length: 5 }, () => sql`select pg_sleep(3)`.execute(svc.db));
    const own = new pg.Pool({ connectionString: svc.config.databaseUrl, max: 1 });
    const db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: own }),
      plugins: [new CamelCasePlugin()],
    });
    try {
      await new Promise((r) => setTimeout(r, 100));
      const before = fast.received.length;
      const t0 = Date.now();
      await db
        .transaction()
        .execute((trx) => svc.app.outbox.emit(trx, "CustomerRegistered", { id: "cus_held" }));
      await fast.waitFor((r) => r.length > before, 2_000);
      const got = fast.received.at(-1)!;
      expect(got.body.data.id).toBe("cus_held");
      expect(got.at - t0).toBeLessThan(1000);
      expect(got.at).toBeLessThan(t0 + 2500); // before the API's connections came back
    } finally {
      await Promise.all(held);
      await db.destroy();
    }
  });

  it("completes each job in the transaction that records its attempt", async () => {
    await slow.waitFor((r) => r.length === 13, 5_000);
    const states = () =>
      sql<{ state: string; n: number }>`
        select j.state, count(*)::int as n from pgboss.job j
          join webhook_deliveries d on d.id = j.data->>'deliveryId' and d.status = 'succeeded'
         where j.name like 'webhook-delivery/%' group by j.state`.execute(svc.db);
    // The last answer's transaction may be committing: it settles the job and the row together.
    for (let i = 0; i < 40 && (await states()).rows[0]?.n !== 26; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect((await states()).rows).toEqual([{ state: "completed", n: 26 }]);
  });
});
