import type { Config } from "../config.ts";
import { Problem } from "../http/problem.ts";

// The seam to payment providers. Test mode simulates the outcome the caller asks for (as a
// provider's sandbox does with its test cards); Live mode needs a provider integration, which
// this version does not ship, so a Live gateway refuses payments with a clear problem.

export interface PaymentRequest {
  gateway: string;
  amountMinor: number;
  currency: string;
  orderId: string;
  /** Test mode only: the outcome to simulate. */
  simulate: "succeed" | "decline";
}

export interface PaymentResult {
  provider: string;
  mode: "Test" | "Live";
  status: "succeeded" | "failed";
  failureReason: string | null;
}

export interface PaymentProvider {
  charge(req: PaymentRequest, credentials: Record<string, string>): Promise<PaymentResult>;
}

const testProvider = (provider: string): PaymentProvider => ({
  charge: async (req) =>
    req.simulate === "succeed"
      ? { provider, mode: "Test", status: "succeeded", failureReason: null }
      : { provider, mode: "Test", status: "failed", failureReason: "card_declined (simulated)" },
});

/** The provider of a configured, enabled gateway; a problem naming `gateway` otherwise. */
export function providerFor(
  config: Config,
  gateway: string,
): { provider: PaymentProvider; credentials: Record<string, string> } {
  const g = (config.CONFIG_PAYMENT_GATEWAYS ?? []).find((x) => x.name === gateway && x.enabled);
  if (!g) {
    const offered = (config.CONFIG_PAYMENT_GATEWAYS ?? []).filter((x) => x.enabled).map((x) => x.name);
    throw new Problem(
      422,
      "validation",
      "Invalid request",
      `gateway: no enabled payment gateway ${gateway} (offered: ${offered.join(", ") || "none"})`,
      {
        errors: [{ pointer: "#/gateway", in: "body", detail: "not an enabled gateway" }],
      },
    );
  }
  if (g.mode === "Live") {
    throw new Problem(
      501,
      "live-payments-unavailable",
      "Live payments unavailable",
      `gateway ${gateway}: Live mode needs the ${g.provider} integration, which this version does not include`,
    );
  }
  return { provider: testProvider(g.provider), credentials: config.paymentCredentials.get(g.name) ?? {} };
}
