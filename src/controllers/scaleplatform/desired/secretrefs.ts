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
 * Env var of a webhook's signing key: `WEBHOOK_<NAME>_SIGNING_KEY`, the name upper-cased with
 * every non-alphanumeric character as `_`. Webhook names are DNS labels (no `_`), so distinct
 * names give distinct variables.
 */
export function webhookSigningKeyEnv(webhook: string): string {
  return `WEBHOOK_${webhook.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_SIGNING_KEY`;
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
