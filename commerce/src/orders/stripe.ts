import Stripe from "stripe";
import type { PaymentStatus } from "../db/schema.ts";
import { Problem } from "../http/problem.ts";

// Stripe through its official SDK: PaymentIntents created and confirmed server-side with
// idempotency keys derived from the order, and webhook events verified with the SDK's signature
// check. COMMERCE_STRIPE_API_URL points the SDK elsewhere (the tests' stripe-mock).

const clients = new Map<string, Stripe>();

/** One SDK client per secret key and API address. */
export function stripeClient(secretKey: string, apiUrl?: string): Stripe {
  const id = `${apiUrl ?? ""} ${secretKey}`;
  let c = clients.get(id);
  if (!c) {
    const u = apiUrl ? new URL(apiUrl) : undefined;
    c = new Stripe(secretKey, {
      // The SDK retries network failures itself, with the same idempotency key.
      maxNetworkRetries: 2,
      timeout: 20_000,
      telemetry: false,
      ...(u && {
        host: u.hostname,
        port: u.port || (u.protocol === "https:" ? 443 : 80),
        protocol: u.protocol === "https:" ? "https" : "http",
      }),
    });
    clients.set(id, c);
  }
  return c;
}

/** Our payment status for a PaymentIntent's status. */
export function paymentStatusOf(pi: Stripe.PaymentIntent): PaymentStatus {
  switch (pi.status) {
    case "succeeded":
      return "succeeded";
    case "requires_capture":
      return "authorized";
    case "requires_action":
      return "requires_action";
    case "canceled":
      return "failed";
    default:
      // requires_payment_method included: Stripe answers a declined confirmation with a card
      // error (recorded as failed); the event payment_intent.payment_failed says so as well.
      return "pending";
  }
}

/**
 * A provider failure as a problem: an outage (connection, 5xx, rate limit) is 503 and leaves
 * the order awaiting payment; a retry sends the same idempotency keys, so it charges once.
 */
export function providerProblem(gateway: string, err: unknown): Problem | undefined {
  if (!(err instanceof Stripe.errors.StripeError)) return undefined;
  if (
    err instanceof Stripe.errors.StripeConnectionError ||
    err instanceof Stripe.errors.StripeAPIError ||
    err instanceof Stripe.errors.StripeRateLimitError ||
    (err.statusCode ?? 0) >= 500
  ) {
    return new Problem(
      503,
      "payment-provider-unavailable",
      "Payment provider unavailable",
      `gateway ${gateway}: Stripe could not be reached (${err.type}); the order awaits payment, retry later`,
      {},
      { "retry-after": "30" },
    );
  }
  return new Problem(
    502,
    "payment-provider-refused",
    "Payment provider refused the request",
    `gateway ${gateway}: ${err.type}: ${err.message}`,
  );
}

/** A card refusal (decline, expired card): recorded as a failed payment, not an error. */
export function isCardError(err: unknown): err is Stripe.errors.StripeCardError {
  return err instanceof Stripe.errors.StripeCardError;
}

/** Verifies a webhook request with the SDK (signature, tolerance 5 min); throws when it fails. */
export function verifyStripeEvent(raw: string, signature: string, webhookSecret: string): Stripe.Event {
  return Stripe.webhooks.constructEvent(raw, signature, webhookSecret);
}

export type { Stripe };
