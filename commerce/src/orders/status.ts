import { type Selectable, sql, type Transaction } from "kysely";
import type { DB } from "../db/database.ts";
import type { Database, OrderStatus, OrdersTable } from "../db/schema.ts";
import { versionMismatch } from "../http/etag.ts";
import { notFound, Problem } from "../http/problem.ts";
import { adjustLevel } from "../inventory/levels.ts";
import type { Outbox } from "../webhooks/outbox.ts";
import { orderEventData } from "./place.ts";
import { TRANSITIONS } from "./pricing.ts";

// Order status changes (with tracking): each change appends to the status history and emits
// OrderUpdated in the same transaction; a cancelled order's stock comes back.

/** Moves order `id` to `to` (at version `want` when given); refuses a change TRANSITIONS lacks. */
export async function transitionOrder(
  { db, outbox }: { db: DB; outbox: Outbox },
  id: string,
  t: { to: OrderStatus; note?: string; trackingNumber?: string; want?: number },
): Promise<void> {
  const { to, note, trackingNumber, want } = t;
  await db.transaction().execute(async (trx) => {
    const o = await trx.selectFrom("orders").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();
    if (!o) throw notFound("order", id);
    if (want !== undefined && want !== o.version) throw versionMismatch(o.version);
    if (!TRANSITIONS[o.status].includes(to)) {
      const allowed = TRANSITIONS[o.status];
      throw new Problem(
        409,
        "invalid-transition",
        "Invalid status change",
        `to: an order ${o.status} cannot become ${to} (allowed: ${allowed.join(", ") || "none"})`,
        {
          errors: [{ pointer: "#/to", in: "body", detail: `not allowed from ${o.status}` }],
        },
      );
    }
    if (to === "cancelled") {
      // Stock comes back when an unshipped order is cancelled.
      const lines = await trx
        .selectFrom("orderLines")
        .select(["variantId", "quantity"])
        .where("orderId", "=", id)
        .orderBy("variantId")
        .execute();
      for (const l of lines) {
        await adjustLevel(trx, outbox, {
          variantId: l.variantId,
          storeId: o.storeId,
          delta: l.quantity,
          reason: `order ${id} cancelled`,
          pointer: "#/to",
        });
      }
    }
    await recordMove(trx, outbox, o, { to, note, trackingNumber });
    if (to === "shipped") await outbox.mail?.(trx, "ShippingConfirmation", id);
  });
}

/**
 * Writes order `o`'s move to `to` inside the caller's transaction (the order row locked, the move
 * already decided): status and version, one status-history row, and OrderUpdated. Every status
 * change goes through here — the API's and the admin's transitions and the payment provider's word.
 */
export async function recordMove(
  trx: Transaction<Database>,
  outbox: Outbox,
  o: Selectable<OrdersTable>,
  m: { to: OrderStatus; note?: string | null; trackingNumber?: string },
): Promise<void> {
  const updated = await trx
    .updateTable("orders")
    .set({
      status: m.to,
      trackingNumber: m.trackingNumber ?? o.trackingNumber,
      version: sql`version + 1`,
      updatedAt: new Date(),
    })
    .where("id", "=", o.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await trx
    .insertInto("orderStatusHistory")
    .values({ orderId: o.id, fromStatus: o.status, toStatus: m.to, note: m.note ?? null, at: new Date() })
    .execute();
  await outbox.emit(trx, "OrderUpdated", {
    ...orderEventData(updated),
    previousStatus: o.status,
    trackingNumber: updated.trackingNumber,
  });
}
