import type { FastifyInstance } from "fastify";
import type { Ctx } from "../http/context.ts";
import { receiveStripeEvent } from "../orders/payment-events.ts";

// POST /payments/stripe/{gateway}/events (API host, no bearer credential: Stripe signs the body
// with the endpoint's secret instead). The body is verified as received, byte for byte.

export async function paymentEventRoutes(app: FastifyInstance, ctx: Pick<Ctx, "db" | "config" | "outbox">) {
  app.addContentTypeParser(
    "application/json",
    { parseAs: "string", bodyLimit: 1 << 20 },
    (_req, body, done) => done(null, body),
  );
  app.post<{ Params: { gateway: string } }>("/payments/stripe/:gateway/events", async (req, reply) => {
    const sig = req.headers["stripe-signature"];
    const outcome = await receiveStripeEvent(
      ctx,
      req.params.gateway,
      typeof req.body === "string" ? req.body : "",
      typeof sig === "string" ? sig : undefined,
    );
    return reply.code(200).send({ received: true, outcome });
  });
}
