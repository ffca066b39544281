import http from "node:http";
import https from "node:https";
import { Webhook } from "standardwebhooks";
import { type Cidr, DestinationRefused, guardedLookup, refusal } from "./destination.ts";

// One delivery attempt: a POST of the event JSON with the Standard Webhooks headers (webhook-id,
// webhook-timestamp, webhook-signature `v1,<base64 HMAC-SHA256 of id.timestamp.body>`), signed by
// the `standardwebhooks` library so receivers verify with the same.

export const ATTEMPT_TIMEOUT_MS = 10_000;

/**
 * The signer of a webhook's key. A key `whsec_<base64>` is the Standard Webhooks form (the secret
 * is the decoded bytes); any other value is used as raw bytes (`new Webhook(key, { format: "raw" })`
 * on the receiving side).
 */
export function signerFor(key: string): Webhook {
  return key.startsWith("whsec_") ? new Webhook(key) : new Webhook(key, { format: "raw" });
}

export interface AttemptResult {
  statusCode?: number;
  retryAfterSeconds?: number;
  error?: string;
  /** The destination is not allowed: no retry will change that. */
  refused?: boolean;
  durationMs: number;
}

export async function sendOnce(
  url: string,
  msgId: string,
  payload: string,
  signer: Webhook | undefined,
  allowed: Cidr[],
): Promise<AttemptResult> {
  const t0 = Date.now();
  const u = new URL(url);
  // A literal IP skips DNS, so check it here too.
  const literal = u.hostname.replace(/^\[|\]$/g, "");
  if (/^[0-9.]+$|:/.test(literal)) {
    const why = refusal(literal, allowed);
    if (why) return { error: why, refused: true, durationMs: 0 };
  }
  const now = new Date();
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "cronscale-commerce-webhooks/1",
    "webhook-id": msgId,
    "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
  };
  if (signer) headers["webhook-signature"] = signer.sign(msgId, now, payload);
  const mod = u.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    const req = mod.request(
      u,
      { method: "POST", headers, lookup: guardedLookup(allowed), timeout: ATTEMPT_TIMEOUT_MS },
      (res) => {
        res.resume();
        res.on("end", () => {
          const ra = res.headers["retry-after"];
          resolve({
            statusCode: res.statusCode,
            retryAfterSeconds: retryAfter(ra),
            durationMs: Date.now() - t0,
          });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no response within ${ATTEMPT_TIMEOUT_MS} ms`)));
    req.on("error", (err) =>
      resolve({
        error: err.message,
        refused: err instanceof DestinationRefused,
        durationMs: Date.now() - t0,
      }),
    );
    req.end(payload);
  });
}

/** Retry-After as seconds (delta-seconds or an HTTP date). */
function retryAfter(v: string | undefined): number | undefined {
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim());
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, Math.ceil((t - Date.now()) / 1000));
}
