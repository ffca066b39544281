import { randomUUID } from "node:crypto";
import { type Selectable, sql } from "kysely";
import type { Config } from "../config.ts";
import type { DB } from "../db/database.ts";
import type { OrderStatus, PaymentsTable } from "../db/schema.ts";
import { notFound, Problem } from "../http/problem.ts";
import type { Outbox } from "../webhooks/outbox.ts";
import { providerFor } from "./payments.ts";
import { orderEventData } from "./place.ts";

// Paying a pending order through a configured gateway, shared by the REST API and the store
// frontend: the payment row, and on success the status change, its history, PaymentReceived and
// OrderUpdated, in one transaction.

/** Charges order `id`; a declined charge is recorded (status `failed`) and the order stays pending. */
export async function payOrder(
  { db, config, outbox }: { db: DB; config: Config; outbox: Outbox },
  id: string,
  req: { gateway: string; simulate: "succeed" | "decline" },
): Promise<Selectable<PaymentsTable>> {
  const { provider, credentials } = providerFor(config, req.gateway);
  return db.transaction().execute(async (trx) => {
    const o = await trx.selectFrom("orders").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();
    if (!o) throw notFound("order", id);
    if (o.status !== "pending") {
      throw new Problem(
        409,
        "invalid-transition",
        "Order not payable",
        `order ${id} is ${o.status}; only pending orders take payments`,
      );
    }
    const r = await provider.charge(
      {
        gateway: req.gateway,
        amountMinor: o.totalMinor,
        currency: o.currency,
        orderId: id,
        simulate: req.simulate,
      },
      credentials,
    );
    const p = await trx
      .insertInto("payments")
      .values({
        id: `pay_${randomUUID()}`,
        orderId: id,
        gateway: req.gateway,
        amountMinor: o.totalMinor,
        currency: o.currency,
        ...r,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (r.status === "succeeded") {
      const to: OrderStatus = "paid";
      const updated = await trx
        .updateTable("orders")
        .set({ status: to, version: sql`version + 1`, updatedAt: new Date() })
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await trx
        .insertInto("orderStatusHistory")
        .values({
          orderId: id,
          fromStatus: o.status,
          toStatus: to,
          note: `payment ${p.id}`,
          at: new Date(),
        })
        .execute();
      await outbox.emit(trx, "PaymentReceived", {
        paymentId: p.id,
        orderId: id,
        gateway: p.gateway,
        amountMinor: p.amountMinor,
        currency: p.currency,
      });
      await outbox.emit(trx, "OrderUpdated", {
        ...orderEventData(updated),
        previousStatus: o.status,
        trackingNumber: updated.trackingNumber,
      });
    }
    return p;
  });
}
