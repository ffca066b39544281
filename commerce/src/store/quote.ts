import type { Config } from "../config.ts";
import { decimalToMinor, shippingOf, totals } from "../orders/pricing.ts";
import type { Locale } from "./locale.ts";

// What the cart and checkout show, from the same arithmetic the order uses (orders/pricing.ts),
// so the total shown is the total charged.

export interface Quote {
  subtotalMinor: number;
  taxMinor: number;
  /** Undefined until a shipping method is chosen. */
  shippingMinor?: number;
  totalMinor: number;
}

export interface ShippingOption {
  name: string;
  carrier: string;
  zones: string[];
  rateText: string;
}

/** Enabled methods the store can price (Flat, ByOrderTotal) in the store's currency. */
export function shippingOptions(config: Config, loc: Locale, subtotal: number): ShippingOption[] {
  return (config.CONFIG_SHIPPING_METHODS ?? [])
    .filter(
      (m) =>
        m.enabled &&
        (m.rate.calculation === "Flat" || m.rate.calculation === "ByOrderTotal") &&
        (!m.rate.currency || m.rate.currency === loc.currency),
    )
    .map((m) => ({
      name: m.name,
      carrier: m.carrier,
      zones: m.zones,
      rateText:
        m.rate.calculation === "Flat"
          ? loc.money(decimalToMinor(m.rate.amount ?? "0"))
          : loc.t.percentOfSubtotal(
              new Intl.NumberFormat(loc.lang, { maximumFractionDigits: 3 }).format(
                Number(m.rate.amount ?? "0"),
              ),
              loc.money(shippingOf([m], m.name, undefined, subtotal, loc.currency)),
            ),
    }));
}

/** Countries the methods ship to, when every method names its zones (else any country). */
export function shippingCountries(options: ShippingOption[]): string[] | undefined {
  if (!options.length || options.some((o) => o.zones.length === 0)) return undefined;
  return [...new Set(options.flatMap((o) => o.zones))].sort();
}

export function quote(config: Config, subtotal: number, shipping?: number): Quote {
  const t = totals(config, subtotal, shipping ?? 0);
  return { ...t, shippingMinor: shipping };
}
