import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCidrs, refusal } from "../src/webhooks/destination.ts";
import { BACKOFF_SECONDS, nextDelaySeconds } from "../src/webhooks/worker.ts";
import {
  body,
  freshDatabase,
  type Json,
  productBody,
  type Service,
  startService,
} from "./support/harness.ts";
import { type Receiver, startReceiver } from "./support/receiver.ts";

const ALL = ["OrderCreated", "OrderUpdated", "PaymentReceived", "InventoryLow", "CustomerRegistered"];

describe("retry schedule and destinations", () => {
  it("retries with jitter over about three days, honouring Retry-After", () => {
    const total = BACKOFF_SECONDS.reduce((a, b) => a + b, 0);
    expect(total / 86_400).toBeGreaterThan(2.5);
    expect(total / 86_400).toBeLessThan(3.5);
    expect(nextDelaySeconds(1, undefined, () => 0)).toBe(4);
    expect(nextDelaySeconds(1, undefined, () => 1)).toBe(6);
    expect(nextDelaySeconds(3, 120)).toBe(120);
    expect(nextDelaySeconds(BACKOFF_SECONDS.length + 1)).toBeUndefined();
  });
  it("refuses loopback, private, link-local and unique-local destinations unless allowed", () => {
    for (const a of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "::1",
      "fd00::1",
      "fe80::1",
      "::ffff:10.0.0.1",
      "100.64.0.1",
      "0.0.0.0",
    ]) {
      expect(refusal(a, []), a).toBeDefined();
    }
    expect(refusal("93.184.216.34", [])).toBeUndefined();
    expect(refusal("2606:4700::1111", [])).toBeUndefined();
    expect(refusal("10.1.2.3", parseCidrs(["10.0.0.0/8"]))).toBeUndefined();
    expect(refusal("10.1.2.3", parseCidrs(["192.168.0.0/16"]))).toBeDefined();
  });
});

describe("webhook delivery", () => {
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  let rx: Receiver;
  let svc: Service;
  let dbUrl: string;
  const hooks = (url: string) =>
    JSON.stringify([
      { name: "all", url: `${url}/all`, events: ALL },
      { name: "flaky", url: `${url}/flaky`, events: ["CustomerRegistered"] },
      { name: "gone", url: `${url}/gone`, events: ["CustomerRegistered"] },
    ]);
  const envFor = (url: string) => ({
    CONFIG_WEBHOOKS: hooks(url),
    WEBHOOK_ALL_SIGNING_KEY: secret,
    WEBHOOK_FLAKY_SIGNING_KEY: secret,
    WEBHOOK_GONE_SIGNING_KEY: secret,
    COMMERCE_WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8",
    CONFIG_PAYMENT_GATEWAYS: JSON.stringify([{ name: "cards", type: "Card", provider: "test" }]),
  });
  /** Time travel for the retry schedule: due jobs now rather than in minutes. */
  const fastForward = () =>
    sql`update pgboss.job set start_after = now() where state in ('created', 'retry')`.execute(svc.db);

  beforeAll(async () => {
    rx = await startReceiver(secret);
    dbUrl = await freshDatabase();
    svc = await startService(envFor(rx.url), dbUrl, { webhooks: true });
  });
  afterAll(async () => {
    await svc.close();
    await rx.close();
  });

  it("delivers each of the five events, signed and verifiable with standardwebhooks", async () => {
    rx.script.set("/flaky", [{ status: 500 }, { status: 500 }]);
    rx.script.set("/gone", [{ status: 410 }]);
    const cus = await body(
      await svc.call("/api/v1/customers", { method: "POST", json: { email: "a@b.test", name: "A" } }),
    );
    await svc.call("/api/v1/products", { method: "POST", json: productBody("Lamp", ["LAMP"], 5000, 6) });
    const order = await body(
      await svc.call("/api/v1/orders", {
        method: "POST",
        json: { customerId: cus.id, lines: [{ sku: "LAMP", quantity: 2 }] },
      }),
    );
    await svc.call(`/api/v1/orders/${order.id}/payments`, { method: "POST", json: { gateway: "cards" } });
    const types = [
      "customer.registered",
      "order.created",
      "inventory.low",
      "payment.received",
      "order.updated",
    ];
    await rx.waitFor((r) => types.every((t) => r.some((x) => x.path === "/all" && x.body.type === t)));
    const all = rx.received.filter((r) => r.path === "/all");
    expect(all.every((r) => r.verified)).toBe(true);
    expect(all.find((r) => r.body.type === "order.created")?.body.data).toMatchObject({
      id: order.id,
      totalMinor: 10000,
    });
    expect(all.find((r) => r.body.type === "inventory.low")?.body.data).toMatchObject({
      sku: "LAMP",
      available: 4,
      lowStockThreshold: 5,
    });
  });

  it("a receiver failing twice gets the event on the third attempt, with the same webhook-id", async () => {
    await rx.waitFor((r) => r.filter((x) => x.path === "/flaky").length >= 1);
    for (let i = 0; i < 40 && rx.received.filter((x) => x.path === "/flaky").length < 3; i++) {
      await fastForward();
      await new Promise((r) => setTimeout(r, 250));
    }
    const flaky = rx.received.filter((r) => r.path === "/flaky");
    expect(flaky.map((r) => r.status)).toEqual([500, 500, 204]);
    expect(new Set(flaky.map((r) => r.id)).size).toBe(1);
    expect(flaky.every((r) => r.verified)).toBe(true);
    const list = await body(await svc.call("/api/v1/webhook-deliveries?webhook=flaky"));
    const d = await body(await svc.call(`/api/v1/webhook-deliveries/${list.data[0].id}`));
    expect(d).toMatchObject({ status: "succeeded", attempts: 3, eventId: flaky[0]!.id });
    expect(d.attemptLog.map((a: Json) => a.statusCode)).toEqual([500, 500, 204]);
  });

  it("410 disables the endpoint; later events for it are not sent until it is enabled", async () => {
    const gone = async () =>
      (await body(await svc.call("/api/v1/webhook-endpoints"))).data.find((e: Json) => e.name === "gone");
    for (let i = 0; i < 40 && !(await gone()).disabledAt; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await gone()).disabledReason).toMatch(/410/);
    await svc.call("/api/v1/customers", { method: "POST", json: { email: "c@b.test", name: "C" } });
    await rx.waitFor(
      (r) => r.filter((x) => x.path === "/all" && x.body.type === "customer.registered").length === 2,
    );
    const deliveries = await body(await svc.call("/api/v1/webhook-deliveries?webhook=gone&sort=createdAt"));
    for (let i = 0; i < 40; i++) {
      const d = await body(await svc.call("/api/v1/webhook-deliveries?webhook=gone&sort=createdAt"));
      if (d.data.every((x: Json) => x.status !== "pending")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const final = await body(await svc.call("/api/v1/webhook-deliveries?webhook=gone&sort=createdAt"));
    expect(final.data.map((x: Json) => x.status)).toEqual(["cancelled", "cancelled"]);
    expect(rx.received.filter((r) => r.path === "/gone")).toHaveLength(1);
    expect(deliveries.data).toHaveLength(2);
    expect((await svc.call("/api/v1/webhook-endpoints/gone/enable", { method: "POST" })).status).toBe(204);
    expect((await gone()).disabledAt).toBeNull();
  });

  it("honours Retry-After on 429", async () => {
    rx.script.set("/all", [{ status: 429, headers: { "retry-after": "120" } }]);
    await svc.call("/api/v1/customers", { method: "POST", json: { email: "d@b.test", name: "D" } });
    let d: Json;
    for (let i = 0; i < 100; i++) {
      d = (await body(await svc.call("/api/v1/webhook-deliveries?webhook=all&type=customer.registered")))
        .data[0];
      if (d.attempts === 1) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(d.lastStatusCode).toBe(429);
    const wait = (Date.parse(d.nextAttemptAt) - Date.parse(d.updatedAt)) / 1000;
    expect(wait).toBeGreaterThan(118);
    expect(wait).toBeLessThan(122);
  });

  it("replays a delivery with the same webhook-id", async () => {
    const list = await body(
      await svc.call("/api/v1/webhook-deliveries?webhook=all&type=order.created&status=succeeded"),
    );
    const d = list.data[0];
    const before = rx.received.filter((r) => r.id === d.eventId).length;
    const r = await svc.call(`/api/v1/webhook-deliveries/${d.id}/replay`, { method: "POST" });
    expect(r.status).toBe(202);
    await rx.waitFor((x) => x.filter((y) => y.id === d.eventId).length === before + 1);
  });

  it("writes no event for a change that rolls back", async () => {
    const before = (await sql<{ n: number }>`select count(*)::int as n from webhook_events`.execute(svc.db))
      .rows[0]?.n;
    await svc.call("/api/v1/products", { method: "POST", json: productBody("Vase", ["VASE"], 100, 6) });
    // Line 1 crosses VASE's threshold (an inventory.low inside the transaction), line 2 cannot be sold.
    const r = await svc.call("/api/v1/orders", {
      method: "POST",
      json: {
        lines: [
          { sku: "VASE", quantity: 2 },
          { sku: "LAMP", quantity: 999 },
        ],
      },
    });
    expect(r.status).toBe(409);
    const after = (await sql<{ n: number }>`select count(*)::int as n from webhook_events`.execute(svc.db))
      .rows[0]?.n;
    expect(after).toBe(before);
  });

  it("an event committed while no worker runs is delivered when one starts (nothing lost)", async () => {
    await svc.app.webhooks.stop();
    const o = await body(
      await svc.call("/api/v1/orders", { method: "POST", json: { lines: [{ sku: "LAMP", quantity: 1 }] } }),
    );
    await new Promise((r) => setTimeout(r, 700));
    expect(rx.received.some((r) => r.body.data.id === o.id)).toBe(false);
    const second = await startService(envFor(rx.url), dbUrl, { webhooks: true });
    try {
      await rx.waitFor((r) => r.some((x) => x.body.type === "order.created" && x.body.data.id === o.id));
    } finally {
      await second.close();
    }
  });
});

describe("private destinations", () => {
  it("are refused unless an allowed CIDR contains them", async () => {
    const rx = await startReceiver(`whsec_${randomBytes(24).toString("base64")}`);
    const svc = await startService(
      {
        CONFIG_WEBHOOKS: JSON.stringify([
          { name: "local", url: `${rx.url}/x`, events: ["CustomerRegistered"] },
        ]),
      },
      undefined,
      { webhooks: true },
    );
    try {
      await svc.call("/api/v1/customers", { method: "POST", json: { email: "p@b.test", name: "P" } });
      let d: Json;
      for (let i = 0; i < 100; i++) {
        d = (await body(await svc.call("/api/v1/webhook-deliveries"))).data[0];
        if (d?.status === "failed") break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(d.status).toBe("failed");
      expect(d.lastError).toMatch(/loopback address/);
      expect(rx.received).toHaveLength(0);
    } finally {
      await svc.close();
      await rx.close();
    }
  });
});
