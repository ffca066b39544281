import { z } from "zod";

// Schema pieces shared by the resource groups.

/** A timestamp: a Date in the handlers, RFC 3339 on the wire. */
export const timestamp = z.codec(z.iso.datetime({ offset: true }), z.date(), {
  decode: (s) => new Date(s),
  encode: (d) => d.toISOString(),
});

export const currencyCode = z
  .string()
  .regex(/^[A-Z]{3}$/, "must be an ISO 4217 code such as EUR")
  .describe("ISO 4217 currency code.");

export const minorUnits = z
  .number()
  .int()
  .min(0)
  .max(Number.MAX_SAFE_INTEGER)
  .describe("Amount in minor units of the currency (cents for EUR/USD).");

export const idParam = z.object({ id: z.string().min(1).max(100) });

export const ifMatchHeader = z.object({
  "if-match": z.string().optional().describe("ETag of the version this update applies to (else 412)."),
});
