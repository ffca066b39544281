import { randomUUID } from "node:crypto";
import type { Selectable, Transaction } from "kysely";
import type { Config } from "../config.ts";
import type { DB } from "../db/database.ts";
import type { Database, OrdersTable, PaymentStatus, PaymentsTable } from "../db/schema.ts";
import { notFound, Problem } from "../http/problem.ts";
import type { Outbox } from "../webhooks/outbox.ts";
import { captureIntent, providerFor } from "./payments.ts";
import { recordMove } from "./status.ts";

// Paying a pending order through a configured gateway, shared by the REST API and the store
// frontend. Each attempt is a payment row; the order turns paid only on the provider's word —
// its server-side answer, a verified provider event (payment-events.ts) or the admin's mark of a
// received transfer — with PaymentReceived and OrderUpdated in the same transaction.

type Payment = Selectable<PaymentsTable>;
type Trx = Transaction<Database>;

const notPayable = (id: string, status: string) =>
  new Problem(
    409,
    "invalid-transition",
    "Order not payable",
    `order ${id} is ${status}; only pending orders take payments`,
  );

/** Pays order `id` (see payments.ts for the providers); a declined attempt is recorded as failed. */
export async function payOrder(
  { db, config, outbox }: { db: DB; config: Config; outbox: Outbox },
  id: string,
  req: { gateway: string; simulate?: "succeed" | "decline"; paymentMethod?: string; returnUrl?: string },
): Promise<Payment> {
  const { gateway, provider } = providerFor(config, req.gateway);
  return db.transaction().execute(async (trx) => {
    // The order's row lock serializes attempts at one order (the provider's idempotency keys
    // cover what the lock cannot: a retry after a lost answer).
    const o = await trx.selectFrom("orders").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();
    if (!o) throw notFound("order", id);
    if (o.status !== "pending") throw notPayable(id, o.status);
    const earlier = await trx
      .selectFrom("payments")
      .selectAll()
      .where("orderId", "=", id)
      .where("gateway", "=", req.gateway)
      .orderBy("createdAt", "desc")
      .execute();
    // A bank transfer already waiting keeps its instructions: one reference per order.
    const waiting = earlier.find((p) => p.status === "pending" && p.instructions);
    if (gateway.provider === "manual" && waiting) return waiting;
    const r = await provider.charge({
      gateway: req.gateway,
      amountMinor: o.totalMinor,
      currency: o.currency,
      orderId: id,
      failedBefore: earlier.filter((p) => p.status === "failed").length,
      providerRef: earlier.find((p) => p.providerRef)?.providerRef ?? null,
      simulate: req.simulate ?? "succeed",
      paymentMethod: req.paymentMethod,
      returnUrl: req.returnUrl,
    });
    const p = await trx
      .insertInto("payments")
      .values({
        id: `pay_${randomUUID()}`,
        orderId: id,
        gateway: req.gateway,
        amountMinor: o.totalMinor,
        currency: o.currency,
        provider: r.provider,
        mode: r.mode,
        status: r.status,
        failureReason: r.failureReason,
        providerRef: r.providerRef ?? null,
        idempotencyKey: r.idempotencyKey ?? null,
        nextAction: r.nextAction ? JSON.stringify(r.nextAction) : null,
        instructions: r.instructions ? JSON.stringify(r.instructions) : null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (r.status === "succeeded") await markPaid(trx, outbox, o, p);
    return p;
  });
}

/** The order turns paid by payment `p`: status, history, PaymentReceived and OrderUpdated. */
async function markPaid(trx: Trx, outbox: Outbox, o: Selectable<OrdersTable>, p: Payment): Promise<void> {
  await outbox.emit(trx, "PaymentReceived", {
    paymentId: p.id,
    orderId: o.id,
    gateway: p.gateway,
    amountMinor: p.amountMinor,
    currency: p.currency,
  });
  await recordMove(trx, outbox, o, { to: "paid", note: `payment ${p.id}` });
}

/**
 * Applies the provider's word on payment `paymentId`: its new status and, when it succeeded and
 * the order still awaits payment, the order turns paid. Returns false when nothing changed.
 */
export async function settlePayment(
  trx: Trx,
  outbox: Outbox,
  paymentId: string,
  word: { status: PaymentStatus; amountMinor?: number; currency?: string; failureReason?: string | null },
): Promise<boolean> {
  const p = await trx
    .selectFrom("payments")
    .selectAll()
    .where("id", "=", paymentId)
    .forUpdate()
    .executeTakeFirst();
  if (!p || p.status === word.status || p.status === "refunded") return false;
  if (
    word.status === "succeeded" &&
    ((word.amountMinor !== undefined && word.amountMinor !== p.amountMinor) ||
      (word.currency !== undefined && word.currency.toUpperCase() !== p.currency))
  ) {
    // Never mark an order paid for another amount than it was charged for.
    throw new Problem(
      409,
      "payment-amount-mismatch",
      "Payment amount mismatch",
      `payment ${p.id}: provider reports ${word.amountMinor} ${word.currency}, expected ${p.amountMinor} ${p.currency}`,
    );
  }
  await trx
    .updateTable("payments")
    .set({
      status: word.status,
      failureReason: word.failureReason ?? (word.status === "failed" ? p.failureReason : null),
      nextAction: null,
      updatedAt: new Date(),
    })
    .where("id", "=", p.id)
    .execute();
  const o = await trx
    .selectFrom("orders")
    .selectAll()
    .where("id", "=", p.orderId)
    .forUpdate()
    .executeTakeFirstOrThrow();
  if (word.status === "succeeded" && o.status === "pending") await markPaid(trx, outbox, o, p);
  if (word.status === "refunded" && ["paid", "fulfilled", "shipped", "delivered"].includes(o.status)) {
    await recordMove(trx, outbox, o, { to: "refunded", note: `payment ${p.id} refunded by the provider` });
  }
  return true;
}

/** The admin's word that bank transfer `paymentId` of order `orderId` arrived: the order turns paid. */
export async function markTransferReceived(
  { db, outbox }: { db: DB; outbox: Outbox },
  orderId: string,
  paymentId: string,
): Promise<Payment> {
  return db.transaction().execute(async (trx) => {
    const p = await trx
      .selectFrom("payments")
      .selectAll()
      .where("id", "=", paymentId)
      .where("orderId", "=", orderId)
      .executeTakeFirst();
    if (!p) throw notFound("payment", paymentId);
    if (p.provider !== "manual" || p.status !== "pending") {
      throw new Problem(
        409,
        "not-awaiting-transfer",
        "Payment not awaiting a transfer",
        `payment ${p.id} is a ${p.provider} payment, ${p.status}; only pending bank transfers are marked received`,
      );
    }
    const o = await trx
      .selectFrom("orders")
      .select("status")
      .where("id", "=", orderId)
      .executeTakeFirstOrThrow();
    if (o.status !== "pending") throw notPayable(orderId, o.status);
    await settlePayment(trx, outbox, p.id, { status: "succeeded" });
    return trx.selectFrom("payments").selectAll().where("id", "=", p.id).executeTakeFirstOrThrow();
  });
}

/** The payments of order `id`, oldest first. */
export async function orderPayments(db: DB, id: string): Promise<Payment[]> {
  const o = await db.selectFrom("orders").select("id").where("id", "=", id).executeTakeFirst();
  if (!o) throw notFound("order", id);
  return db.selectFrom("payments").selectAll().where("orderId", "=", id).orderBy("createdAt").execute();
}

/**
 * Captures authorized payment `paymentId` (manual capture). The order turns paid when Stripe
 * answers succeeded, else on its payment_intent.succeeded event.
 */
export async function capturePayment(
  { db, config, outbox }: { db: DB; config: Config; outbox: Outbox },
  orderId: string,
  paymentId: string,
): Promise<Payment> {
  const p = await db
    .selectFrom("payments")
    .selectAll()
    .where("id", "=", paymentId)
    .where("orderId", "=", orderId)
    .executeTakeFirst();
  if (!p) throw notFound("payment", paymentId);
  if (p.provider !== "stripe" || p.status !== "authorized" || !p.providerRef) {
    throw new Problem(
      409,
      "not-authorized",
      "Payment not awaiting capture",
      `payment ${p.id} is a ${p.provider} payment, ${p.status}; only authorized Stripe payments are captured`,
    );
  }
  const word = await captureIntent(config, p.gateway, p.providerRef, p.id);
  if (word.status === "succeeded") {
    await db.transaction().execute((trx) => settlePayment(trx, outbox, p.id, word));
  }
  return db.selectFrom("payments").selectAll().where("id", "=", p.id).executeTakeFirstOrThrow();
}
