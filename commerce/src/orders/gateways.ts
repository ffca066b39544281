// Which payment gateway setups this version serves. A setup it cannot serve is refused when the
// configuration is read (the process does not start), never accepted and then failed at checkout.
// The platform's CRD carries the same rules as CEL (src/api/v1alpha1/scaleplatform-config.ts).
//
//   provider `test`    any type, mode Test only: the built-in simulator (the caller picks the outcome)
//   provider `stripe`  Card and Wallet, Test or Live: Stripe PaymentIntents through the official SDK;
//                      credentials `secretKey` (sk_test_/rk_test_ in Test, sk_live_/rk_live_ in Live)
//                      and `webhookSecret` (whsec_…, the endpoint's signing secret)
//   provider `manual`  BankTransfer: the order waits with payment instructions until the admin
//                      marks the transfer received; settings `accountHolder` and `iban` or
//                      `accountNumber` (optional `bic`, `bankName`)

export const PAYMENT_PROVIDERS = ["test", "stripe", "manual"] as const;
export type PaymentProviderName = (typeof PAYMENT_PROVIDERS)[number];

export interface GatewaySetup {
  name: string;
  type: "Card" | "Wallet" | "MobileMoney" | "BankTransfer";
  provider: string;
  mode: "Test" | "Live";
  enabled: boolean;
  settings?: Record<string, unknown>;
}

/**
 * Problems of one gateway setup as [field, message]; empty when this version serves it. The
 * credentials of a disabled gateway are not checked: the operator mounts none for it.
 */
export function gatewayProblems(
  g: GatewaySetup,
  credentials: Record<string, string>,
  credentialEnv: (key: string) => string,
): [string, string][] {
  const out: [string, string][] = [];
  const setting = (k: string) => {
    const v = g.settings?.[k];
    return typeof v === "string" && v.trim() ? v : undefined;
  };
  switch (g.provider) {
    case "test":
      if (g.mode !== "Test")
        out.push(["mode", "provider test is the built-in simulator and serves only mode Test"]);
      break;
    case "stripe": {
      if (g.type !== "Card" && g.type !== "Wallet")
        out.push(["type", `provider stripe serves Card and Wallet, not ${g.type}`]);
      // A disabled gateway gets no credentials (the operator mounts no Secret for it).
      if (g.enabled) {
        const key = credentials.secretKey;
        const prefixes = g.mode === "Live" ? ["sk_live_", "rk_live_"] : ["sk_test_", "rk_test_"];
        if (!key)
          out.push([
            "provider",
            `provider stripe needs ${credentialEnv("secretKey")} (the Stripe secret key)`,
          ]);
        else if (!prefixes.some((p) => key.startsWith(p)))
          out.push(["mode", `mode ${g.mode} needs a Stripe key starting ${prefixes.join(" or ")}`]);
        if (!credentials.webhookSecret)
          out.push([
            "provider",
            `provider stripe needs ${credentialEnv("webhookSecret")} (the webhook endpoint's signing secret)`,
          ]);
      }
      const capture = setting("captureMethod");
      if (capture && capture !== "automatic" && capture !== "manual")
        out.push(["settings.captureMethod", "must be automatic or manual"]);
      break;
    }
    case "manual":
      if (g.type !== "BankTransfer") out.push(["type", `provider manual serves BankTransfer, not ${g.type}`]);
      if (!setting("accountHolder")) out.push(["settings.accountHolder", "required for a bank transfer"]);
      if (!setting("iban") && !setting("accountNumber"))
        out.push(["settings.iban", "required for a bank transfer (or settings.accountNumber)"]);
      break;
    default:
      out.push([
        "provider",
        `${g.provider} is not a provider this version serves (${PAYMENT_PROVIDERS.join(", ")})`,
      ]);
  }
  return out;
}
