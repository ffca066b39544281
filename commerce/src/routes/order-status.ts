import { z } from "zod";
import { ORDER_STATUSES, PAYMENT_STATUSES } from "../db/schema.ts";
import type { Api, Ctx } from "../http/context.ts";
import { ifMatchVersion, setEtag } from "../http/etag.ts";
import { capturePayment, markTransferReceived, orderPayments, payOrder } from "../orders/pay.ts";
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
  simulate: z
    .enum(["succeed", "decline"])
    .default("succeed")
    .describe("Provider test (the built-in simulator): the outcome to simulate."),
  paymentMethod: z
    .string()
    .regex(/^pm_[A-Za-z0-9_]+$/)
    .max(255)
    .optional()
    .describe(
      "Provider stripe: the PaymentMethod to confirm with (made client-side by Stripe.js, or a test one such as pm_card_visa).",
    ),
  returnUrl: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .optional()
    .describe("Provider stripe: where the customer returns after a 3-D Secure or wallet redirect."),
});
const paymentOut = z.object({
  id: z.string(),
  orderId: z.string(),
  gateway: z.string(),
  provider: z.string(),
  mode: z.string(),
  amountMinor: z.number(),
  currency: z.string(),
  status: z
    .enum(PAYMENT_STATUSES)
    .describe("pending: awaiting the provider's word or a bank transfer; authorized: to be captured."),
  failureReason: z.string().nullable(),
  providerRef: z.string().nullable().describe("The provider's id (a Stripe PaymentIntent)."),
  nextAction: z.unknown().nullable().describe("What the customer must do next (Stripe's next_action)."),
  instructions: z.unknown().nullable().describe("Bank transfer: reference, amount and account."),
  createdAt: timestamp,
});
const paymentParams = z.object({ id: z.string().max(100), paymentId: z.string().max(100) });

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

  api.post(
    "/orders/:id/payments/:paymentId/received",
    {
      config: { scope: "orders:write" },
      schema: {
        tags,
        summary: "Marks a pending bank transfer received: the order turns paid (payment.received).",
        params: paymentParams,
        response: { 200: paymentOut },
      },
    },
    async (req) => markTransferReceived({ db, outbox }, req.params.id, req.params.paymentId),
  );

  api.get(
    "/orders/:id/payments",
    {
      config: { scope: "orders:read" },
      schema: { tags, params: idParam, response: { 200: z.object({ data: z.array(paymentOut) }) } },
    },
    async (req) => ({ data: await orderPayments(db, req.params.id) }),
  );

  api.post(
    "/orders/:id/payments/:paymentId/capture",
    {
      config: { scope: "orders:write" },
      schema: {
        tags,
        summary: "Captures an authorized Stripe payment (manual capture).",
        params: paymentParams,
        response: { 200: paymentOut },
      },
    },
    async (req) => capturePayment({ db, config, outbox }, req.params.id, req.params.paymentId),
  );
}
