import type { PlatformInputs } from "./common.ts";

// The user's Secrets the spec references, and the env var each becomes in the app container
// (`valueFrom.secretKeyRef`: the value never passes through the operator or the ConfigMap). Pure.

/** Env var of the SMTP password (spec.email.smtp.passwordSecretRef). */
export const SMTP_PASSWORD_ENV = "SMTP_PASSWORD";

/** One referenced Secret key and where it comes from. */
export interface SecretRefUse {
  /** Spec field path, e.g. `spec.webhooks[0].signingSecretRef`. */
  field: string;
  /** Env var of the app container that carries the value. */
  env: string;
  /** Secret name (same namespace as the platform). */
  name: string;
  /** Key inside the Secret. */
  key: string;
}

/**
 * A whole referenced Secret whose keys all become env vars (`envFrom` with a prefix): payment
 * gateway credentials, whose keys are provider-specific.
 */
export interface SecretFromUse {
  /** Spec field path, e.g. `spec.paymentGateways[0].credentialsSecretRef`. */
  field: string;
  /** Prefix of every env var made from the Secret's keys. */
  prefix: string;
  name: string;
}

/**
 * Env var of a webhook's signing key: `WEBHOOK_<NAME>_SIGNING_KEY`, the name upper-cased with
 * every non-alphanumeric character as `_`. Webhook names are DNS labels (no `_`), so distinct
 * names give distinct variables.
 */
export function webhookSigningKeyEnv(webhook: string): string {
  return `WEBHOOK_${envPart(webhook)}_SIGNING_KEY`;
}

const envPart = (name: string) => name.toUpperCase().replace(/[^A-Z0-9]/g, "_");

/**
 * Env prefix of a payment gateway's credentials: `PAYMENT_<NAME>_`, so key `secretKey` of
 * gateway `cards` becomes `PAYMENT_CARDS_secretKey` (keys keep their spelling).
 */
export function paymentCredentialsPrefix(gateway: string): string {
  return `PAYMENT_${envPart(gateway)}_`;
}

/** Every whole Secret the app reads through envFrom; a disabled gateway needs none. */
export function secretFromUses(inp: PlatformInputs): SecretFromUse[] {
  const out: SecretFromUse[] = [];
  (inp.spec.paymentGateways ?? []).forEach((g, i) => {
    if (!g.credentialsSecretRef || g.enabled === false) return;
    out.push({
      field: `spec.paymentGateways[${i}].credentialsSecretRef`,
      prefix: paymentCredentialsPrefix(g.name),
      name: g.credentialsSecretRef.name,
    });
  });
  return out;
}

/**
 * Every Secret key the app needs. A disabled webhook delivers nothing, so its signing key is
 * neither passed nor required (a Secret deleted along with disabling it does not block rollouts).
 */
export function secretRefUses(inp: PlatformInputs): SecretRefUse[] {
  const out: SecretRefUse[] = [];
  const smtp = inp.spec.email?.smtp?.passwordSecretRef;
  if (smtp) out.push({ field: "spec.email.smtp.passwordSecretRef", env: SMTP_PASSWORD_ENV, ...smtp });
  (inp.spec.webhooks ?? []).forEach((w, i) => {
    if (!w.signingSecretRef || w.enabled === false) return;
    out.push({
      field: `spec.webhooks[${i}].signingSecretRef`,
      env: webhookSigningKeyEnv(w.name),
      ...w.signingSecretRef,
    });
  });
  return out;
}
