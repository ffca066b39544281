import { sql } from "kysely";
import { z } from "zod";
import { ORDER_STATUSES } from "../db/schema.ts";
import { ifMatchVersion, setEtag, versionMismatch } from "../http/etag.ts";
import { notFound, Problem } from "../http/problem.ts";
import { payOrder } from "../orders/pay.ts";
import { orderEventData } from "../orders/place.ts";
import { TRANSITIONS } from "../orders/pricing.ts";
import { idParam, ifMatchHeader, timestamp } from "./common.ts";
import type { Api, Ctx } from "./index.ts";
import { adjustLevel } from "./inventory.ts";
import { getOrder, orderOut } from "./orders.ts";

// Order status changes (with tracking) and payments. Each change appends to the status history
// and emits OrderUpdated (a successful payment also PaymentReceived) in the same transaction.

const tags = ["orders"];
const transitionIn = z.object({
  to: z.enum(ORDER_STATUSES),
  note: z.string().max(500).optional(),
  trackingNumber: z.string().min(1).max(100).optional().describe("Carrier tracking number (when shipping)."),
});
const paymentIn = z.object({
  gateway: z.string().max(63).describe("Name of a configured payment gateway."),
  simulate: z.enum(["succeed", "decline"]).default("succeed").describe("Test mode: the outcome to simulate."),
});
const paymentOut = z.object({
  id: z.string(),
  orderId: z.string(),
  gateway: z.string(),
  provider: z.string(),
  mode: z.string(),
  amountMinor: z.number(),
  currency: z.string(),
  status: z.enum(["succeeded", "failed"]),
  failureReason: z.string().nullable(),
  createdAt: timestamp,
});

export async function orderStatusRoutes(api: Api, { db, config, outbox }: Ctx): Promise<void> {
  api.post(
    "/orders/:id/transitions",
    {
      config: { scope: "orders:write" },
      schema: {
        tags,
        params: idParam,
        headers: ifMatchHeader,
        body: transitionIn,
        response: { 200: orderOut },
      },
    },
    async (req, reply) => {
      const want = ifMatchVersion(req);
      const { id } = req.params;
      const { to, note, trackingNumber } = req.body;
      await db.transaction().execute(async (trx) => {
        const o = await trx
          .selectFrom("orders")
          .selectAll()
          .where("id", "=", id)
          .forUpdate()
          .executeTakeFirst();
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
        const updated = await trx
          .updateTable("orders")
          .set({
            status: to,
            trackingNumber: trackingNumber ?? o.trackingNumber,
            version: sql`version + 1`,
            updatedAt: new Date(),
          })
          .where("id", "=", id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await trx
          .insertInto("orderStatusHistory")
          .values({ orderId: id, fromStatus: o.status, toStatus: to, note: note ?? null, at: new Date() })
          .execute();
        if (to === "shipped") await outbox.mail?.(trx, "ShippingConfirmation", id);
        await outbox.emit(trx, "OrderUpdated", {
          ...orderEventData(updated),
          previousStatus: o.status,
          trackingNumber: updated.trackingNumber,
        });
      });
      const o = await getOrder(db, id);
      setEtag(reply, o.version);
      return o;
    },
  );

  api.post(
    "/orders/:id/payments",
    {
      config: { scope: "orders:write" },
      schema: { tags, params: idParam, body: paymentIn, response: { 201: paymentOut } },
    },
    async (req, reply) => {
      const payment = await payOrder({ db, config, outbox }, req.params.id, req.body);
      return reply.code(201).send(payment);
    },
  );
}
