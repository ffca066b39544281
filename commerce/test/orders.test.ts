import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decimalToMinor, taxOf } from "../src/orders/pricing.ts";
import { body, type Json, productBody, type Service, startService } from "./support/harness.ts";

describe("pricing", () => {
  it("converts decimals and computes tax exactly, rounding half up once", () => {
    expect(decimalToMinor("4.90")).toBe(490);
    expect(decimalToMinor("12")).toBe(1200);
    expect(decimalToMinor("0.005")).toBe(1);
    expect(taxOf(1000, "19", false)).toBe(190);
    expect(taxOf(1190, "19", true)).toBe(190);
    expect(taxOf(999, "7.25", false)).toBe(72); // 72.4275
    expect(taxOf(1000, undefined, false)).toBe(0);
  });
});

describe("customers, inventory, orders, analytics", () => {
  let svc: Service;
  const env = {
    CONFIG_LOCALIZATION: JSON.stringify({
      currency: "EUR",
      timezone: "Europe/Berlin",
      tax: { defaultRatePercent: "19" },
    }),
    CONFIG_SHIPPING_METHODS: JSON.stringify([
      {
        name: "standard",
        carrier: "dhl",
        zones: ["DE", "AT"],
        rate: { calculation: "Flat", amount: "4.90", currency: "EUR" },
      },
      { name: "express", carrier: "ups", zones: ["DE"], rate: { calculation: "Carrier" } },
    ]),
    CONFIG_PAYMENT_GATEWAYS: JSON.stringify([
      { name: "cards", type: "Card", provider: "test", mode: "Test" },
    ]),
    CONFIG_WEBHOOKS: JSON.stringify([
      {
        name: "all",
        url: "https://hooks.test/in",
        events: ["OrderCreated", "OrderUpdated", "PaymentReceived", "InventoryLow", "CustomerRegistered"],
      },
    ]),
  };
  let mug: Json;
  let tee: Json;
  const events = async (type: string) =>
    (
      await sql<{
        payload: Json;
      }>`select payload from webhook_events where type = ${type} order by created_at`.execute(svc.db)
    ).rows.map((r) => r.payload);

  beforeAll(async () => {
    svc = await startService(env);
    mug = await body(
      await svc.call("/api/v1/products", { method: "POST", json: productBody("Mug", ["MUG"], 1000, 10) }),
    );
    tee = await body(
      await svc.call("/api/v1/products", { method: "POST", json: productBody("Tee", ["TEE"], 2500, 100) }),
    );
  });
  afterAll(() => svc.close());

  it("registers customers once per email and emits customer.registered", async () => {
    const r = await svc.call("/api/v1/customers", {
      method: "POST",
      json: { email: "Ann@example.test", name: "Ann" },
    });
    expect(r.status).toBe(201);
    const dup = await svc.call("/api/v1/customers", {
      method: "POST",
      json: { email: "ann@EXAMPLE.test", name: "Ann 2" },
    });
    expect(dup.status).toBe(409);
    expect((await body(dup)).errors[0].pointer).toBe("#/email");
    const bad = await svc.call("/api/v1/customers", { method: "POST", json: { email: "nope", name: "x" } });
    expect((await body(bad)).errors[0].pointer).toBe("#/email");
    expect((await events("customer.registered")).map((e) => e.data.email)).toEqual(["Ann@example.test"]);
    const list = await body(await svc.call("/api/v1/customers?email=ann@example.test"));
    expect(list.data).toHaveLength(1);
  });

  it("creates an order with tax, shipping and stock taken; refuses what it cannot sell, naming the field", async () => {
    const r = await svc.call("/api/v1/orders", {
      method: "POST",
      json: {
        lines: [
          { sku: "MUG", quantity: 2 },
          { variantId: tee.variants[0].id, quantity: 1 },
        ],
        shippingMethod: "standard",
        shippingCountry: "DE",
      },
    });
    expect(r.status).toBe(201);
    const o = await body(r);
    expect(o).toMatchObject({
      status: "pending",
      currency: "EUR",
      subtotalMinor: 4500,
      taxMinor: 855,
      shippingMinor: 490,
      totalMinor: 5845,
    });
    expect(o.lines.map((l: Json) => [l.sku, l.quantity, l.totalMinor])).toEqual([
      ["MUG", 2, 2000],
      ["TEE", 1, 2500],
    ]);
    expect(o.history.map((h: Json) => h.to)).toEqual(["pending"]);
    expect((await body(await svc.call(`/api/v1/inventory/${mug.variants[0].id}`))).available).toBe(8);
    expect((await events("order.created")).at(-1).data).toMatchObject({ id: o.id, totalMinor: 5845 });

    const tooMany = await svc.call("/api/v1/orders", {
      method: "POST",
      json: {
        lines: [
          { sku: "TEE", quantity: 1 },
          { sku: "MUG", quantity: 99 },
        ],
      },
    });
    expect(tooMany.status).toBe(409);
    expect((await body(tooMany)).errors[0].pointer).toBe("#/lines/1/quantity");
    const unknown = await svc.call("/api/v1/orders", {
      method: "POST",
      json: { lines: [{ sku: "NOPE", quantity: 1 }] },
    });
    expect((await body(unknown)).errors[0].pointer).toBe("#/lines/0/sku");
    const zone = await svc.call("/api/v1/orders", {
      method: "POST",
      json: { lines: [{ sku: "TEE", quantity: 1 }], shippingMethod: "standard", shippingCountry: "FR" },
    });
    expect((await body(zone)).errors[0].pointer).toBe("#/shippingCountry");
    const method = await svc.call("/api/v1/orders", {
      method: "POST",
      json: { lines: [{ sku: "TEE", quantity: 1 }], shippingMethod: "pigeon" },
    });
    expect((await body(method)).detail).toMatch(
      /shippingMethod: no enabled shipping method pigeon \(offered: standard, express\)/,
    );
    // Nothing of the refused orders stayed: the stock is what the first order left.
    expect((await body(await svc.call(`/api/v1/inventory/${tee.variants[0].id}`))).available).toBe(99);
  });

  it("stores the shipping address given with an order; its country prices the shipping", async () => {
    const address = {
      name: "Lise Meitner",
      line1: "Thielallee 63",
      city: "Berlin",
      postalCode: "14195",
      country: "DE",
    };
    const r = await svc.call("/api/v1/orders", {
      method: "POST",
      json: { lines: [{ sku: "TEE", quantity: 1 }], shippingMethod: "standard", shippingAddress: address },
    });
    expect(r.status).toBe(201);
    const o = await body(r);
    expect(o.shippingAddress).toEqual(address);
    expect(o.shippingMinor).toBe(490);
    expect((await body(await svc.call(`/api/v1/orders/${o.id}`))).shippingAddress).toEqual(address);
    // An order without one has null; a country differing from the address's is refused.
    const none = await body(
      await svc.call("/api/v1/orders", { method: "POST", json: { lines: [{ sku: "TEE", quantity: 1 }] } }),
    );
    expect(none.shippingAddress).toBeNull();
    const clash = await svc.call("/api/v1/orders", {
      method: "POST",
      json: { lines: [{ sku: "TEE", quantity: 1 }], shippingCountry: "AT", shippingAddress: address },
    });
    expect(clash.status).toBe(422);
    expect((await body(clash)).errors[0].pointer).toBe("#/shippingCountry");
    const blank = await svc.call("/api/v1/orders", {
      method: "POST",
      json: { lines: [{ sku: "TEE", quantity: 1 }], shippingAddress: { ...address, city: " " } },
    });
    expect(blank.status).toBe(422);
    expect((await body(blank)).errors[0].pointer).toBe("#/shippingAddress/city");
  });

  it("moves an order through its statuses, with payments, history and events", async () => {
    const o = await body(
      await svc.call("/api/v1/orders", { method: "POST", json: { lines: [{ sku: "TEE", quantity: 1 }] } }),
    );
    const declined = await body(
      await svc.call(`/api/v1/orders/${o.id}/payments`, {
        method: "POST",
        json: { gateway: "cards", simulate: "decline" },
      }),
    );
    expect(declined.status).toBe("failed");
    const paid = await svc.call(`/api/v1/orders/${o.id}/payments`, {
      method: "POST",
      json: { gateway: "cards" },
    });
    expect(paid.status).toBe(201);
    expect(await body(paid)).toMatchObject({
      status: "succeeded",
      amountMinor: o.totalMinor,
      provider: "test",
      mode: "Test",
    });
    expect((await events("payment.received")).at(-1).data).toMatchObject({
      orderId: o.id,
      amountMinor: o.totalMinor,
    });

    const bad = await svc.call(`/api/v1/orders/${o.id}/transitions`, {
      method: "POST",
      json: { to: "delivered" },
    });
    expect(bad.status).toBe(409);
    expect((await body(bad)).detail).toMatch(
      /paid cannot become delivered \(allowed: fulfilled, cancelled, refunded\)/,
    );
    const step = (to: string, extra: object = {}, ifMatch?: string) =>
      svc.call(`/api/v1/orders/${o.id}/transitions`, {
        method: "POST",
        json: { to, ...extra },
        headers: ifMatch ? { "if-match": ifMatch } : {},
      });
    expect((await step("fulfilled", {}, '"v1"')).status).toBe(412);
    expect((await step("fulfilled", {}, '"v2"')).status).toBe(200);
    const shipped = await body(await step("shipped", { trackingNumber: "1Z999" }));
    expect(shipped.trackingNumber).toBe("1Z999");
    const done = await body(await step("delivered"));
    expect(done.history.map((h: Json) => h.to)).toEqual([
      "pending",
      "paid",
      "fulfilled",
      "shipped",
      "delivered",
    ]);
    expect(
      (await events("order.updated")).filter((e) => e.data.id === o.id).map((e) => e.data.status),
    ).toEqual(["paid", "fulfilled", "shipped", "delivered"]);

    const c = await body(
      await svc.call("/api/v1/orders", { method: "POST", json: { lines: [{ sku: "TEE", quantity: 5 }] } }),
    );
    const before = (await body(await svc.call(`/api/v1/inventory/${tee.variants[0].id}`))).available;
    expect((await step.call(null, "cancelled")).status).toBe(409); // o is delivered
    const cancel = await svc.call(`/api/v1/orders/${c.id}/transitions`, {
      method: "POST",
      json: { to: "cancelled" },
    });
    expect((await body(cancel)).status).toBe("cancelled");
    expect((await body(await svc.call(`/api/v1/inventory/${tee.variants[0].id}`))).available).toBe(
      before + 5,
    );
  });

  it("emits inventory.low once per crossing of the threshold", async () => {
    const v = mug.variants[0].id;
    const adjust = (delta: number) =>
      svc.call(`/api/v1/inventory/${v}/adjustments`, { method: "POST", json: { delta, reason: "count" } });
    const lowFor = async () => (await events("inventory.low")).filter((e) => e.data.variantId === v).length;
    // 8 left, threshold 5.
    await adjust(-2); // 6
    expect(await lowFor()).toBe(0);
    const r = await body(await adjust(-2)); // 4: crossing
    expect(r).toMatchObject({ available: 4, low: true });
    await adjust(-1); // 3: still low, no new event
    expect(await lowFor()).toBe(1);
    await adjust(+10); // 13: back above
    await adjust(-9); // 4: crossing again
    expect(await lowFor()).toBe(2);
    const zero = await adjust(0);
    expect((await body(zero)).errors[0].pointer).toBe("#/delta");
    const under = await adjust(-100);
    expect(under.status).toBe(409);
    const low = await body(await svc.call("/api/v1/inventory?lowStock=true"));
    expect(low.data.map((l: Json) => l.sku)).toEqual(["MUG"]);
    const history = await body(await svc.call(`/api/v1/inventory/${v}/adjustments`));
    expect(history.data.length).toBeGreaterThanOrEqual(6);
  });

  it("computes analytics in SQL equal to sums over the orders, by day in the store timezone", async () => {
    await sql`delete from orders`.execute(svc.db);
    await sql`update inventory_levels set available = 100000, low = false`.execute(svc.db);
    const cust = await body(
      await svc.call("/api/v1/customers", { method: "POST", json: { email: "bo@example.test", name: "Bo" } }),
    );
    // Orders placed on chosen instants: 23:30 UTC on Mar 1 is Mar 2 in Berlin.
    const plan = [
      { at: "2026-03-01T10:00:00Z", lines: [{ sku: "MUG", quantity: 1 }], pay: true },
      { at: "2026-03-01T23:30:00Z", lines: [{ sku: "TEE", quantity: 2 }], pay: true },
      {
        at: "2026-03-02T12:00:00Z",
        lines: [
          { sku: "MUG", quantity: 3 },
          { sku: "TEE", quantity: 1 },
        ],
        pay: true,
      },
      { at: "2026-03-02T13:00:00Z", lines: [{ sku: "TEE", quantity: 7 }], pay: false },
      { at: "2026-03-04T09:00:00Z", lines: [{ sku: "MUG", quantity: 2 }], pay: true, refund: true },
    ];
    const made: Json[] = [];
    for (const p of plan) {
      const o = await body(
        await svc.call("/api/v1/orders", { method: "POST", json: { lines: p.lines, customerId: cust.id } }),
      );
      if (p.pay)
        await svc.call(`/api/v1/orders/${o.id}/payments`, { method: "POST", json: { gateway: "cards" } });
      if (p.refund)
        await svc.call(`/api/v1/orders/${o.id}/transitions`, { method: "POST", json: { to: "refunded" } });
      await sql`update orders set created_at = ${p.at} where id = ${o.id}`.execute(svc.db);
      made.push({ ...o, at: p.at, sold: p.pay && !p.refund });
    }
    await sql`update customers set created_at = '2026-03-03T08:00:00Z' where id = ${cust.id}`.execute(svc.db);

    const a = await body(await svc.call("/api/v1/analytics?from=2026-03-01&to=2026-03-04"));
    const sold = made.filter((o) => o.sold);
    const berlinDay = (iso: string) =>
      new Date(iso).toLocaleDateString("sv-SE", { timeZone: "Europe/Berlin" });
    const revenue = sold.reduce((s, o) => s + o.totalMinor, 0);
    expect(a.revenueMinor).toBe(revenue);
    expect(a.orders).toBe(sold.length);
    expect(a.averageOrderValueMinor).toBe(Math.round(revenue / sold.length));
    expect(a.newCustomers).toBe(1);
    const expectDay = (d: string) => sold.filter((o) => berlinDay(o.at) === d);
    expect(a.byDay).toEqual(
      ["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-04"].map((d) => ({
        date: d,
        revenueMinor: expectDay(d).reduce((s, o) => s + o.totalMinor, 0),
        orders: expectDay(d).length,
      })),
    );
    expect(a.byDay[1].orders).toBe(2);
    const qty = (sku: string) =>
      sold
        .flatMap((o) => o.lines)
        .filter((l: Json) => l.sku === sku)
        .reduce((s: number, l: Json) => s + l.quantity, 0);
    expect(a.topProducts.map((p: Json) => [p.title, p.quantity])).toEqual([
      ["Tee", qty("TEE")],
      ["Mug", qty("MUG")],
    ]);
    const badRange = await svc.call("/api/v1/analytics?from=2026-03-04&to=2026-03-01");
    expect((await body(badRange)).errors[0].pointer).toBe("#/to");
  });
});
