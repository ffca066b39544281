import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { body, type Json, productBody, type Service, startService } from "./support/harness.ts";

// Order placement under concurrency and retries: the conditional stock decrement, the answer built
// in memory, and the Idempotency-Key claimed in the order's own transaction.

describe("placing orders", () => {
  let svc: Service;
  const count = async (q: ReturnType<typeof sql<{ n: number }>>) => (await q.execute(svc.db)).rows[0]?.n;
  const level = async (sku: string) =>
    (
      await sql<{
        available: number;
      }>`select available from inventory_levels i join variants v on v.id = i.variant_id
        where v.sku = ${sku}`.execute(svc.db)
    ).rows[0]?.available;
  const variantOf = async (sku: string) =>
    (await sql<{ id: string }>`select id from variants where sku = ${sku}`.execute(svc.db)).rows[0]?.id;
  const order = (lines: { sku: string; quantity: number }[], key?: string) =>
    svc.call("/api/v1/orders", {
      method: "POST",
      json: { lines },
      ...(key ? { headers: { "idempotency-key": key } } : {}),
    });

  beforeAll(async () => {
    svc = await startService({
      CONFIG_LOCALIZATION: JSON.stringify({ currency: "EUR", tax: { defaultRatePercent: "19" } }),
      CONFIG_WEBHOOKS: JSON.stringify([
        { name: "all", url: "https://hooks.test/in", events: ["OrderCreated", "InventoryLow"] },
      ]),
    });
    for (const [title, sku, stock] of [
      ["Last", "LAST", 5],
      ["Left", "LEFT", 1000],
      ["Right", "RIGHT", 1000],
      ["Twice", "TWICE", 50],
      ["Keyed", "KEYED", 3],
    ] as const) {
      const r = await svc.call("/api/v1/products", {
        method: "POST",
        json: productBody(title, [sku], 1000, stock),
      });
      expect(r.status).toBe(201);
    }
  });
  afterAll(() => svc.close());

  it("sells the last units once: of 12 concurrent orders for 5 units, 5 are placed and 7 refused", async () => {
    const threshold = await svc.call(`/api/v1/inventory/${await variantOf("LAST")}`, {
      method: "PATCH",
      json: { lowStockThreshold: 2 },
    });
    expect(await body(threshold)).toMatchObject({ available: 5, low: false });
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => order([{ sku: "LAST", quantity: 1 }])),
    );
    const codes = answers.map((r) => r.status).sort();
    expect(codes).toEqual([...Array(5).fill(201), ...Array(7).fill(409)]);
    const refused = await body(answers.find((r) => r.status === 409) as Response);
    expect(refused.errors[0].pointer).toBe("#/lines/0/quantity");
    expect(await level("LAST")).toBe(0);
    expect(await count(sql`select count(*)::int as n from order_lines where sku = 'LAST'`)).toBe(5);
    expect(
      await count(
        sql`select count(*)::int as n from webhook_events where type = 'order.created' and payload->'data'->'lines'->0->>'sku' = 'LAST'`,
      ),
    ).toBe(5);
    // The level crossed its threshold (2) once, on the third sale.
    expect(
      await count(
        sql`select count(*)::int as n from webhook_events where type = 'inventory.low' and payload->'data'->>'sku' = 'LAST'`,
      ),
    ).toBe(1);
  });

  it("places concurrent orders whose lines lock the same stock in opposite orders", async () => {
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        order(
          i % 2
            ? [
                { sku: "LEFT", quantity: 1 },
                { sku: "RIGHT", quantity: 1 },
              ]
            : [
                { sku: "RIGHT", quantity: 1 },
                { sku: "LEFT", quantity: 1 },
              ],
        ),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(16).fill(201));
    expect([await level("LEFT"), await level("RIGHT")]).toEqual([984, 984]);
  });

  it("answers with the order as it is stored, and takes a variant on two lines by their sum", async () => {
    const r = await order([
      { sku: "TWICE", quantity: 2 },
      { sku: "TWICE", quantity: 3 },
    ]);
    expect(r.status).toBe(201);
    const placed = await body(r);
    expect(r.headers.get("location")).toBe(`/api/v1/orders/${placed.id}`);
    expect(r.headers.get("etag")).toBe('"v1"');
    const read = await svc.call(`/api/v1/orders/${placed.id}`);
    expect(placed).toEqual(await body(read));
    expect(placed).toMatchObject({ subtotalMinor: 5000, taxMinor: 950, totalMinor: 5950, version: 1 });
    expect(await level("TWICE")).toBe(45);
    const adjustments = await body(
      await svc.call(`/api/v1/inventory/${placed.lines[0].variantId}/adjustments`),
    );
    expect(
      adjustments.data.filter((a: Json) => a.reason === `order ${placed.id}`).map((a: Json) => a.delta),
    ).toEqual([-5]);
  });

  it("places an order once per Idempotency-Key, also when the retry comes while the first is running", async () => {
    const lines = [{ sku: "KEYED", quantity: 1 }];
    const [a, b] = await Promise.all([order(lines, "k-1"), order(lines, "k-1")]);
    expect([a.status, b.status]).toEqual([201, 201]);
    const [ja, jb] = [await body(a), await body(b)];
    expect(ja).toEqual(jb);
    expect([a, b].filter((r) => r.headers.get("idempotent-replayed") === "true")).toHaveLength(1);
    const later = await order(lines, "k-1");
    expect(later.headers.get("idempotent-replayed")).toBe("true");
    expect(later.headers.get("location")).toBe(`/api/v1/orders/${ja.id}`);
    expect(await body(later)).toEqual(ja);
    expect(await level("KEYED")).toBe(2);
    expect(await count(sql`select count(*)::int as n from order_lines where sku = 'KEYED'`)).toBe(1);

    const other = await order([{ sku: "KEYED", quantity: 2 }], "k-1");
    expect(other.status).toBe(422);
    expect(await level("KEYED")).toBe(2);
  });

  it("replays a refused order as refused, and lets a key be used again after 24 hours", async () => {
    const tooMany = [{ sku: "KEYED", quantity: 3 }];
    const first = await order(tooMany, "k-2");
    expect(first.status).toBe(409);
    await svc.call(`/api/v1/inventory/${await variantOf("KEYED")}/adjustments`, {
      method: "POST",
      json: { delta: 10, reason: "restock" },
    });
    const again = await order(tooMany, "k-2");
    expect(again.status).toBe(409);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await level("KEYED")).toBe(12);

    await sql`update idempotency_keys set created_at = now() - interval '25 hours' where key = 'k-2'`.execute(
      svc.db,
    );
    const later = await order(tooMany, "k-2");
    expect(later.status).toBe(201);
    expect(later.headers.get("idempotent-replayed")).toBeNull();
    expect(await level("KEYED")).toBe(9);
  });
});
