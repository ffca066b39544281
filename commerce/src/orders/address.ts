import { z } from "zod";
import type { ShippingAddress } from "../db/schema.ts";

// The shipping address of an order: one schema for the API's order body and the store's checkout
// form, and one way to print it (store confirmation, confirmation mail, admin order page).

const text = (max: number, what: string) =>
  z.string().trim().min(1, `Enter the ${what}.`).max(max, `The ${what} is longer than ${max} characters.`);
const optionalText = (max: number) =>
  z
    .string()
    .trim()
    .max(max)
    .optional()
    .transform((v) => (v ? v : undefined));

export const shippingAddressSchema = z
  .object({
    name: text(200, "recipient's name").describe("Recipient."),
    line1: text(200, "street address").describe("Street and number."),
    line2: optionalText(200).describe("Apartment, suite, c/o (optional)."),
    city: text(100, "city").describe("City or town."),
    region: optionalText(100).describe("State, province or region (optional)."),
    postalCode: text(20, "postal code").describe("Postal or ZIP code."),
    country: z
      .string()
      .trim()
      .regex(/^[A-Za-z]{2}$/, "Enter a two-letter country code.")
      .transform((c) => c.toUpperCase())
      .describe("ISO 3166-1 alpha-2 country code."),
  })
  .describe("Where the order ships to.");

/** A country's name in `lang` (its code when the runtime does not know it). */
export function countryNames(lang: string): (code: string) => string {
  const regions = new Intl.DisplayNames([lang], { type: "region", fallback: "code" });
  return (code) => {
    try {
      return regions.of(code) ?? code;
    } catch {
      return code;
    }
  };
}

/** The address as printed lines (the country as `countryName` names it). */
export function addressLines(a: ShippingAddress, countryName: (code: string) => string = (c) => c): string[] {
  return [
    a.name,
    a.line1,
    a.line2,
    [a.postalCode, a.city].join(" "),
    a.region,
    countryName(a.country),
  ].filter((l): l is string => !!l);
}
