import type { Config } from "../config.ts";
import type { DB } from "../db/database.ts";
import { Problem } from "../http/problem.ts";
import type { Outbox } from "../webhooks/outbox.ts";
import { settlePayment } from "./pay.ts";
import { gatewayFor } from "./payments.ts";
import { type Stripe, verifyStripeEvent } from "./stripe.ts";

// Stripe's events about our PaymentIntents, verified with the SDK's signature check against the
// gateway's webhookSecret: payment_intent.succeeded turns the order paid, payment_intent.
// payment_failed records the failure (the order keeps awaiting payment), charge.refunded marks a
// full refund. Each event id is applied once (Stripe delivers at least once).

export type EventOutcome = "applied" | "duplicate" | "ignored";

/** Verifies and applies one Stripe webhook request for gateway `name`; 400 when unverified. */
export async function receiveStripeEvent(
  { db, config, outbox }: { db: DB; config: Config; outbox: Outbox },
  name: string,
  raw: string,
  signature: string | undefined,
): Promise<EventOutcome> {
  const g = (config.CONFIG_PAYMENT_GATEWAYS ?? []).find((x) => x.name === name && x.provider === "stripe");
  if (!g) gatewayFor(config, `${name} (stripe)`);
  const secret = config.paymentCredentials.get(name)?.webhookSecret ?? "";
  let event: Stripe.Event;
  try {
    event = verifyStripeEvent(raw, signature ?? "", secret);
  } catch (err) {
    throw new Problem(
      400,
      "invalid-signature",
      "Invalid signature",
      `Stripe-Signature: ${(err as Error).message}`,
    );
  }
  return db.transaction().execute(async (trx) => {
    const fresh = await trx
      .insertInto("paymentProviderEvents")
      .values({ id: event.id, gateway: name, type: event.type })
      .onConflict((oc) => oc.column("id").doNothing())
      .returning("id")
      .executeTakeFirst();
    if (!fresh) return "duplicate";
    const byRef = async (ref: string | null | undefined) =>
      ref
        ? trx
            .selectFrom("payments")
            .select("id")
            .where("providerRef", "=", ref)
            .where("gateway", "=", name)
            .orderBy("createdAt", "desc")
            .executeTakeFirst()
        : undefined;
    switch (event.type) {
      case "payment_intent.succeeded":
      case "payment_intent.payment_failed": {
        const pi = event.data.object;
        const p = await byRef(pi.id);
        if (!p) return "ignored";
        await settlePayment(trx, outbox, p.id, {
          status: event.type === "payment_intent.succeeded" ? "succeeded" : "failed",
          amountMinor: pi.amount_received || pi.amount,
          currency: pi.currency,
          failureReason: pi.last_payment_error?.message ?? null,
        });
        return "applied";
      }
      case "charge.refunded": {
        const charge = event.data.object;
        const ref =
          typeof charge.payment_intent === "string" ? charge.payment_intent : charge.payment_intent?.id;
        const p = await byRef(ref);
        // A partial refund leaves the order as it is (refunds of lines are recorded apart).
        if (!p || !charge.refunded) return "ignored";
        await settlePayment(trx, outbox, p.id, { status: "refunded" });
        return "applied";
      }
      default:
        return "ignored";
    }
  });
}
