import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { type StripeMock, startStripeMock } from "./setup/stripe-mock.ts";
import { ADMIN_ENV, signedInClient } from "./support/admin.ts";
import {
  body,
  freshDatabase,
  type Json,
  productBody,
  type Service,
  startService,
} from "./support/harness.ts";
import { type Receiver, startReceiver } from "./support/receiver.ts";

// Money that moves: cards through Stripe's protocol (the official SDK against stripe-mock, which
// the test setup builds and starts on loopback), bank transfers marked received by the admin.
// stripe-mock sends no webhooks and keeps no state (every PaymentIntent it answers is
// requires_payment_method): the tests sign Stripe's events themselves with the endpoint's secret
// (stripe.webhooks.generateTestHeaderString) and post them, as Stripe would.

const WHSEC = "whsec_test_cronscale_payments";
const SIGNING = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const stripe = new Stripe("sk_test_123");

const gateways = JSON.stringify([
  { name: "cards", type: "Card", provider: "stripe", mode: "Test" },
  { name: "held", type: "Card", provider: "stripe", mode: "Test", settings: { captureMethod: "manual" } },
  {
    name: "bank",
    type: "BankTransfer",
    provider: "manual",
    settings: { accountHolder: "Shop GmbH", iban: "DE89370400440532013000", bic: "COBADEFFXXX" },
  },
]);
const stripeCreds = {
  PAYMENT_CARDS_secretKey: "sk_test_123",
  PAYMENT_CARDS_webhookSecret: WHSEC,
  PAYMENT_HELD_secretKey: "sk_test_123",
  PAYMENT_HELD_webhookSecret: WHSEC,
};

/** A Stripe event as Stripe would post it, signed with `secret`. */
function signedEvent(type: string, object: Record<string, unknown>, secret = WHSEC) {
  const payload = JSON.stringify({
    id: `evt_${Math.random().toString(36).slice(2)}`,
    object: "event",
    type,
    api_version: "2025-01-01",
    created: Math.floor(Date.now() / 1000),
    data: { object },
  });
  return { payload, header: stripe.webhooks.generateTestHeaderString({ payload, secret }) };
}

const postEvent = (svc: Service, gateway: string, e: { payload: string; header: string }) =>
  fetch(`${svc.url}/payments/stripe/${gateway}/events`, {
    method: "POST",
    headers: { "content-type": "application/json", "stripe-signature": e.header },
    body: e.payload,
  });

async function placeOrder(svc: Service): Promise<Json> {
  return body(
    await svc.call("/api/v1/orders", { method: "POST", json: { lines: [{ sku: "MUG", quantity: 2 }] } }),
  );
}
const orderStatus = async (svc: Service, id: string) =>
  (await body(await svc.call(`/api/v1/orders/${id}`))).status;

describe("card payments through Stripe (stripe-mock)", () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({
      CONFIG_PAYMENT_GATEWAYS: gateways,
      ...stripeCreds,
      COMMERCE_STRIPE_API_URL: inject("stripeMockUrl"),
    });
    await svc.call("/api/v1/products", { method: "POST", json: productBody("Mug", ["MUG"], 1000, 50) });
  });
  afterAll(() => svc.close());

  it("turns the order paid only after Stripe's verified payment_intent.succeeded", async () => {
    const o = await placeOrder(svc);
    const r = await svc.call(`/api/v1/orders/${o.id}/payments`, {
      method: "POST",
      json: { gateway: "cards", paymentMethod: "pm_card_visa", returnUrl: "https://shop.test/return" },
    });
    expect(r.status).toBe(201);
    const p = await body(r);
    expect(p).toMatchObject({
      provider: "stripe",
      mode: "Test",
      status: "pending",
      amountMinor: o.totalMinor,
    });
    expect(p.providerRef).toMatch(/^pi_/);
    // The browser's return proves nothing: the order still awaits payment.
    expect(await orderStatus(svc, o.id)).toBe("pending");

    const pi = {
      id: p.providerRef,
      object: "payment_intent",
      status: "succeeded",
      amount: o.totalMinor,
      amount_received: o.totalMinor,
      currency: o.currency.toLowerCase(),
      metadata: { orderId: o.id },
    };
    const ok = signedEvent("payment_intent.succeeded", pi);
    const res = await postEvent(svc, "cards", ok);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ outcome: "applied" });
    expect(await orderStatus(svc, o.id)).toBe("paid");
    const history = await svc.db
      .selectFrom("orderStatusHistory")
      .selectAll()
      .where("orderId", "=", o.id)
      .execute();
    expect(history.at(-1)).toMatchObject({
      fromStatus: "pending",
      toStatus: "paid",
      note: `payment ${p.id}`,
    });
    // Stripe redelivers events: the same event changes nothing more.
    expect(await (await postEvent(svc, "cards", ok)).json()).toMatchObject({ outcome: "duplicate" });
    const payments = await svc.db.selectFrom("payments").selectAll().where("orderId", "=", o.id).execute();
    expect(payments.map((x) => x.status)).toEqual(["succeeded"]);
  });

  it("refuses an event whose signature does not verify, and the order stays awaiting payment", async () => {
    const o = await placeOrder(svc);
    const p = await body(
      await svc.call(`/api/v1/orders/${o.id}/payments`, {
        method: "POST",
        json: { gateway: "cards", paymentMethod: "pm_card_visa" },
      }),
    );
    const pi = {
      id: p.providerRef,
      object: "payment_intent",
      status: "succeeded",
      amount: o.totalMinor,
      currency: o.currency.toLowerCase(),
    };
    const forged = signedEvent("payment_intent.succeeded", pi, "whsec_someone_else");
    const r = await postEvent(svc, "cards", forged);
    expect(r.status).toBe(400);
    expect((await r.json()).type).toMatch(/invalid-signature/);
    // A body changed after signing fails too.
    const good = signedEvent("payment_intent.succeeded", pi);
    const tampered = { ...good, payload: good.payload.replace(String(o.totalMinor), "1") };
    expect((await postEvent(svc, "cards", tampered)).status).toBe(400);
    expect(await orderStatus(svc, o.id)).toBe("pending");
  });

  it("records payment_intent.payment_failed and keeps the order payable", async () => {
    const o = await placeOrder(svc);
    const p = await body(
      await svc.call(`/api/v1/orders/${o.id}/payments`, {
        method: "POST",
        json: { gateway: "cards", paymentMethod: "pm_card_visa" },
      }),
    );
    const pi = {
      id: p.providerRef,
      object: "payment_intent",
      status: "requires_payment_method",
      amount: o.totalMinor,
      currency: o.currency.toLowerCase(),
      last_payment_error: { message: "Your card was declined." },
    };
    expect((await postEvent(svc, "cards", signedEvent("payment_intent.payment_failed", pi))).status).toBe(
      200,
    );
    const row = await svc.db
      .selectFrom("payments")
      .selectAll()
      .where("id", "=", p.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: "failed", failureReason: "Your card was declined." });
    expect(await orderStatus(svc, o.id)).toBe("pending");
  });

  it("does not mark an order paid for an amount it was not charged", async () => {
    const o = await placeOrder(svc);
    const p = await body(
      await svc.call(`/api/v1/orders/${o.id}/payments`, { method: "POST", json: { gateway: "cards" } }),
    );
    const pi = {
      id: p.providerRef,
      object: "payment_intent",
      status: "succeeded",
      amount: 1,
      amount_received: 1,
      currency: o.currency.toLowerCase(),
    };
    expect((await postEvent(svc, "cards", signedEvent("payment_intent.succeeded", pi))).status).toBe(409);
    expect(await orderStatus(svc, o.id)).toBe("pending");
  });

  it("marks a fully refunded charge (charge.refunded) and the order refunded", async () => {
    const o = await placeOrder(svc);
    const p = await body(
      await svc.call(`/api/v1/orders/${o.id}/payments`, {
        method: "POST",
        json: { gateway: "held", paymentMethod: "pm_card_visa" },
      }),
    );
    const pi = {
      id: p.providerRef,
      object: "payment_intent",
      status: "succeeded",
      amount: o.totalMinor,
      amount_received: o.totalMinor,
      currency: o.currency.toLowerCase(),
    };
    await postEvent(svc, "held", signedEvent("payment_intent.succeeded", pi));
    expect(await orderStatus(svc, o.id)).toBe("paid");
    const charge = {
      id: "ch_1",
      object: "charge",
      payment_intent: p.providerRef,
      amount: o.totalMinor,
      amount_refunded: o.totalMinor,
      refunded: true,
    };
    expect((await postEvent(svc, "held", signedEvent("charge.refunded", charge))).status).toBe(200);
    expect(await orderStatus(svc, o.id)).toBe("refunded");
  });
});

describe("a provider outage", () => {
  let svc: Service;
  let mock: StripeMock;
  beforeAll(async () => {
    mock = await startStripeMock(inject("stripeMockBin"));
    svc = await startService({
      CONFIG_PAYMENT_GATEWAYS: gateways,
      ...stripeCreds,
      COMMERCE_STRIPE_API_URL: mock.url,
    });
    await svc.call("/api/v1/products", { method: "POST", json: productBody("Mug", ["MUG"], 1000, 50) });
  });
  afterAll(async () => {
    await svc.close();
    await mock.stop();
  });

  it("leaves the order awaiting payment, and the retry after recovery creates one PaymentIntent", async () => {
    const o = await placeOrder(svc);
    await mock.stop();
    const down = await svc.call(`/api/v1/orders/${o.id}/payments`, {
      method: "POST",
      json: { gateway: "cards", paymentMethod: "pm_card_visa" },
    });
    expect(down.status).toBe(503);
    expect((await body(down)).type).toMatch(/payment-provider-unavailable/);
    expect(down.headers.get("retry-after")).toBe("30");
    expect(await orderStatus(svc, o.id)).toBe("pending");
    expect(await svc.db.selectFrom("payments").select("id").where("orderId", "=", o.id).execute()).toEqual(
      [],
    );

    mock = await startStripeMock(inject("stripeMockBin"), mock.port);
    const retry = await svc.call(`/api/v1/orders/${o.id}/payments`, {
      method: "POST",
      json: { gateway: "cards", paymentMethod: "pm_card_visa" },
    });
    expect(retry.status).toBe(201);
    const p = await body(retry);
    expect(p.providerRef).toMatch(/^pi_/);
    // Another attempt reuses the order's PaymentIntent instead of creating a second one.
    await svc.call(`/api/v1/orders/${o.id}/payments`, {
      method: "POST",
      json: { gateway: "cards", paymentMethod: "pm_card_visa" },
    });
    expect(mock.requests.filter((r) => r === "POST /v1/payment_intents")).toHaveLength(1);
    const rows = await svc.db
      .selectFrom("payments")
      .select(["providerRef", "idempotencyKey"])
      .where("orderId", "=", o.id)
      .execute();
    expect(new Set(rows.map((r) => r.providerRef))).toEqual(new Set([p.providerRef]));
    expect(rows.every((r) => r.idempotencyKey === `cronscale-${o.id}-cards-intent`)).toBe(true);
    await postEvent(
      svc,
      "cards",
      signedEvent("payment_intent.succeeded", {
        id: p.providerRef,
        object: "payment_intent",
        status: "succeeded",
        amount: o.totalMinor,
        amount_received: o.totalMinor,
        currency: o.currency.toLowerCase(),
      }),
    );
    expect(await orderStatus(svc, o.id)).toBe("paid");
  });
});

describe("bank transfer", () => {
  let svc: Service;
  let rx: Receiver;
  beforeAll(async () => {
    rx = await startReceiver(SIGNING);
    svc = await startService(
      {
        CONFIG_PAYMENT_GATEWAYS: gateways,
        ...stripeCreds,
        COMMERCE_STRIPE_API_URL: inject("stripeMockUrl"),
        CONFIG_WEBHOOKS: JSON.stringify([{ name: "erp", url: `${rx.url}/erp`, events: ["PaymentReceived"] }]),
        WEBHOOK_ERP_SIGNING_KEY: SIGNING,
        COMMERCE_WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8",
        ...ADMIN_ENV,
      },
      await freshDatabase(),
      { webhooks: true },
    );
    await svc.call("/api/v1/products", { method: "POST", json: productBody("Mug", ["MUG"], 1000, 50) });
  });
  afterAll(async () => {
    await svc.close();
    await rx.close();
  });

  it("waits with instructions until the admin marks it received, then sends payment.received", async () => {
    const o = await placeOrder(svc);
    const p = await body(
      await svc.call(`/api/v1/orders/${o.id}/payments`, { method: "POST", json: { gateway: "bank" } }),
    );
    expect(p).toMatchObject({
      provider: "manual",
      status: "pending",
      instructions: { accountHolder: "Shop GmbH", iban: "DE89370400440532013000", amountMinor: o.totalMinor },
    });
    expect(p.instructions.reference).toMatch(/^ORDER-[0-9A-F]{12}$/);
    // Asking again shows the same instructions (one reference per order).
    const again = await body(
      await svc.call(`/api/v1/orders/${o.id}/payments`, { method: "POST", json: { gateway: "bank" } }),
    );
    expect(again.id).toBe(p.id);
    expect(await orderStatus(svc, o.id)).toBe("pending");

    // The admin sees the reference on the order's page and marks the transfer received there.
    const admin = await signedInClient(svc.url);
    const page = await admin.get(`/admin/orders/${o.id}`);
    expect(page.html).toContain(p.instructions.reference);
    const marked = await admin.post(`/admin/orders/${o.id}/payments/${p.id}/received`, {});
    expect(marked.status).toBe(303);
    const row = await svc.db
      .selectFrom("payments")
      .selectAll()
      .where("id", "=", p.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe("succeeded");
    expect(await orderStatus(svc, o.id)).toBe("paid");
    await rx.waitFor((x) =>
      x.some((m) => m.body.type === "payment.received" && m.body.data.orderId === o.id),
    );
    const m = rx.received.find((x) => x.body.type === "payment.received");
    expect(m?.verified).toBe(true);
    expect(m?.body.data).toMatchObject({ paymentId: p.id, gateway: "bank", amountMinor: o.totalMinor });
    // Marking twice is refused.
    expect(
      (await svc.call(`/api/v1/orders/${o.id}/payments/${p.id}/received`, { method: "POST" })).status,
    ).toBe(409);
  });
});

describe("gateway setups the app cannot serve are refused at start", () => {
  const load =
    (g: object, extra: Record<string, string> = {}) =>
    () =>
      loadConfig({
        DATABASE_URL: "postgres://x@h/db",
        CONFIG_PAYMENT_GATEWAYS: JSON.stringify([g]),
        ...extra,
      });
  it.each([
    [
      { name: "pp", type: "Card", provider: "paypal" },
      {},
      /at 0\.provider\): gateway pp: paypal is not a provider this version serves/,
    ],
    [{ name: "c", type: "Card", provider: "test", mode: "Live" }, {}, /at 0\.mode\): .*only mode Test/],
    [{ name: "c", type: "Card", provider: "stripe" }, {}, /PAYMENT_C_secretKey/],
    [
      { name: "c", type: "Card", provider: "stripe", mode: "Live" },
      { PAYMENT_C_secretKey: "sk_test_1", PAYMENT_C_webhookSecret: "w" },
      /mode Live needs a Stripe key starting sk_live_/,
    ],
    [
      { name: "m", type: "MobileMoney", provider: "stripe" },
      { PAYMENT_M_secretKey: "sk_test_1", PAYMENT_M_webhookSecret: "w" },
      /at 0\.type\): .*Card and Wallet/,
    ],
    [{ name: "b", type: "BankTransfer", provider: "manual" }, {}, /at 0\.settings\.accountHolder\)/],
  ])("refuses %j", (g, extra, msg) => {
    expect(load(g, extra)).toThrow(msg);
  });
});
