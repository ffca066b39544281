import type { Config, PaymentGateway } from "../config.ts";
import type { PaymentStatus } from "../db/schema.ts";
import { Problem } from "../http/problem.ts";
import { isCardError, paymentStatusOf, providerProblem, stripeClient } from "./stripe.ts";

// The payment providers (which setups are served: gateways.ts). A provider answers one attempt
// to pay an order; pay.ts records it and moves the order only on the provider's word.

export interface PaymentRequest {
  gateway: string;
  amountMinor: number;
  currency: string;
  orderId: string;
  /** Attempts at this order and gateway that failed before (part of the confirm key). */
  failedBefore: number;
  /** The provider's object of an earlier attempt at this order and gateway, to reuse. */
  providerRef: string | null;
  /** provider test: the outcome to simulate. */
  simulate: "succeed" | "decline";
  /** provider stripe: a PaymentMethod id (pm_…) to confirm with, e.g. made by Stripe.js. */
  paymentMethod?: string;
  /** provider stripe: where the customer returns after a 3-D Secure or wallet redirect. */
  returnUrl?: string;
}

export interface PaymentResult {
  provider: string;
  mode: "Test" | "Live";
  status: PaymentStatus;
  failureReason: string | null;
  providerRef?: string | null;
  idempotencyKey?: string | null;
  nextAction?: unknown;
  instructions?: unknown;
}

export interface PaymentProvider {
  charge(req: PaymentRequest): Promise<PaymentResult>;
}

const testProvider = (g: PaymentGateway): PaymentProvider => ({
  charge: async (req) =>
    req.simulate === "succeed"
      ? { provider: g.provider, mode: "Test", status: "succeeded", failureReason: null }
      : { provider: g.provider, mode: "Test", status: "failed", failureReason: "card_declined (simulated)" },
});

/** The bank reference a transfer must carry: short, unambiguous, derived from the order. */
export const transferReference = (orderId: string) =>
  `ORDER-${orderId.replace(/^ord_/, "").replace(/-/g, "").slice(0, 12).toUpperCase()}`;

const manualProvider = (g: PaymentGateway): PaymentProvider => ({
  charge: async (req) => {
    const s = g.settings ?? {};
    return {
      provider: g.provider,
      mode: g.mode,
      status: "pending",
      failureReason: null,
      instructions: {
        reference: transferReference(req.orderId),
        amountMinor: req.amountMinor,
        currency: req.currency,
        accountHolder: s.accountHolder,
        iban: s.iban ?? null,
        accountNumber: s.accountNumber ?? null,
        bic: s.bic ?? null,
        bankName: s.bankName ?? null,
      },
    };
  },
});

/** Idempotency keys derived from the order: a retry sends the same keys, so it charges once. */
export const stripeKeys = (orderId: string, gateway: string, failedBefore: number) => ({
  create: `cronscale-${orderId}-${gateway}-intent`,
  confirm: `cronscale-${orderId}-${gateway}-confirm-${failedBefore}`,
});

const stripeProvider = (
  g: PaymentGateway,
  creds: Record<string, string>,
  apiUrl?: string,
): PaymentProvider => ({
  charge: async (req) => {
    const stripe = stripeClient(creds.secretKey ?? "", apiUrl);
    const keys = stripeKeys(req.orderId, req.gateway, req.failedBefore);
    const base = { provider: g.provider, mode: g.mode, idempotencyKey: keys.create };
    try {
      // One PaymentIntent per order and gateway: created once (the key makes a retried create
      // return the same intent), confirmed with each payment method the customer offers.
      let pi = req.providerRef
        ? await stripe.paymentIntents.retrieve(req.providerRef)
        : await stripe.paymentIntents.create(
            {
              amount: req.amountMinor,
              currency: req.currency.toLowerCase(),
              capture_method: g.settings?.captureMethod === "manual" ? "manual" : "automatic",
              metadata: { orderId: req.orderId, gateway: req.gateway },
            },
            { idempotencyKey: keys.create },
          );
      if (req.paymentMethod) {
        pi = await stripe.paymentIntents.confirm(
          pi.id,
          { payment_method: req.paymentMethod, ...(req.returnUrl && { return_url: req.returnUrl }) },
          { idempotencyKey: keys.confirm },
        );
      }
      return {
        ...base,
        status: paymentStatusOf(pi),
        failureReason: pi.last_payment_error?.message ?? null,
        providerRef: pi.id,
        nextAction: pi.status === "requires_action" ? pi.next_action : null,
      };
    } catch (err) {
      if (isCardError(err)) {
        const ref = err.payment_intent?.id ?? req.providerRef;
        return {
          ...base,
          status: "failed",
          failureReason: err.decline_code ?? err.code ?? err.message,
          providerRef: ref,
        };
      }
      throw providerProblem(req.gateway, err) ?? err;
    }
  },
});

/** The configured, enabled gateway `name`; a problem naming `gateway` otherwise. */
export function gatewayFor(config: Config, name: string): PaymentGateway {
  const g = (config.CONFIG_PAYMENT_GATEWAYS ?? []).find((x) => x.name === name && x.enabled);
  if (g) return g;
  const offered = (config.CONFIG_PAYMENT_GATEWAYS ?? []).filter((x) => x.enabled).map((x) => x.name);
  throw new Problem(
    422,
    "validation",
    "Invalid request",
    `gateway: no enabled payment gateway ${name} (offered: ${offered.join(", ") || "none"})`,
    { errors: [{ pointer: "#/gateway", in: "body", detail: "not an enabled gateway" }] },
  );
}

/** The provider of a configured, enabled gateway (config.ts refused setups no provider serves). */
export function providerFor(
  config: Config,
  gateway: string,
): { gateway: PaymentGateway; provider: PaymentProvider } {
  const g = gatewayFor(config, gateway);
  const creds = config.paymentCredentials.get(g.name) ?? {};
  const provider =
    g.provider === "stripe"
      ? stripeProvider(g, creds, config.COMMERCE_STRIPE_API_URL)
      : g.provider === "manual"
        ? manualProvider(g)
        : testProvider(g);
  return { gateway: g, provider };
}

/**
 * Captures an authorized Stripe payment (manual capture) under a key derived from the payment,
 * so a retried capture captures once. Returns the intent's amount and our status for it.
 */
export async function captureIntent(
  config: Config,
  gateway: string,
  ref: string,
  paymentId: string,
): Promise<{ status: PaymentStatus; amountMinor: number; currency: string }> {
  const g = gatewayFor(config, gateway);
  const creds = config.paymentCredentials.get(g.name) ?? {};
  try {
    const pi = await stripeClient(
      creds.secretKey ?? "",
      config.COMMERCE_STRIPE_API_URL,
    ).paymentIntents.capture(ref, {}, { idempotencyKey: `cronscale-${paymentId}-capture` });
    return {
      status: paymentStatusOf(pi),
      amountMinor: pi.amount_received || pi.amount,
      currency: pi.currency,
    };
  } catch (err) {
    throw providerProblem(gateway, err) ?? err;
  }
}
