import { z } from "zod";
import { ORDER_STATUSES } from "../db/schema.ts";
import type { Api, Ctx } from "../http/context.ts";
import { ifMatchVersion, setEtag } from "../http/etag.ts";
import { payOrder } from "../orders/pay.ts";
import { getOrder } from "../orders/read.ts";
import { transitionOrder } from "../orders/status.ts";
import { idParam, ifMatchHeader, timestamp } from "./common.ts";
import { orderOut } from "./orders.ts";

// Order status changes (orders/status.ts) and payments (orders/pay.ts).

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
      await transitionOrder({ db, outbox }, req.params.id, { ...req.body, want: ifMatchVersion(req) });
      const o = await getOrder(db, req.params.id);
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
