import type { Config, ShippingMethod } from "../config.ts";
import type { OrderStatus } from "../db/schema.ts";
import { invalidField } from "../http/problem.ts";

// Order arithmetic, pure: tax from the localization settings and shipping from the configured
// methods, all in integer minor units (rounded half up once per order, never per line).

/** A decimal string of major units ("4.90") in minor units (490), exactly. */
export function decimalToMinor(d: string): number {
  const [whole = "0", frac = ""] = d.split(".");
  const cents = `${frac}00`.slice(0, 2);
  const rest = frac.slice(2);
  let v = Number(whole) * 100 + Number(cents);
  if (rest && Number(rest[0]) >= 5) v += 1;
  return v;
}

/** Tax of a subtotal at `ratePercent` (a decimal string); included tax is extracted from it. */
export function taxOf(subtotal: number, ratePercent: string | undefined, included: boolean): number {
  if (!ratePercent) return 0;
  // Rate in ten-thousandths of a percent, so "7.25" is exact: 72500.
  const [w = "0", f = ""] = ratePercent.split(".");
  const rate = Number(w) * 10_000 + Number(`${f}0000`.slice(0, 4));
  if (rate === 0) return 0;
  const scale = 1_000_000; // 100 % in ten-thousandths of a percent
  const num = subtotal * rate;
  const den = included ? scale + rate : scale;
  return Math.floor((num * 2 + den) / (den * 2)); // round half up
}

export interface Totals {
  subtotalMinor: number;
  taxMinor: number;
  shippingMinor: number;
  totalMinor: number;
}

/** Shipping cost of a method for an order; throws a problem naming the field when it cannot ship. */
export function shippingOf(
  methods: ShippingMethod[],
  name: string | undefined,
  country: string | undefined,
  subtotal: number,
  currency: string,
): number {
  if (name === undefined) return 0;
  const m = methods.find((x) => x.name === name && x.enabled);
  if (!m) {
    const offered = methods.filter((x) => x.enabled).map((x) => x.name);
    throw invalidField(
      "#/shippingMethod",
      `no enabled shipping method ${name} (offered: ${offered.join(", ") || "none"})`,
    );
  }
  if (country && m.zones.length && !m.zones.includes(country)) {
    throw invalidField("#/shippingCountry", `${name} does not ship to ${country}`);
  }
  if (m.rate.currency && m.rate.currency !== currency) {
    throw invalidField(
      "#/shippingMethod",
      `${name} is priced in ${m.rate.currency}, the order in ${currency}`,
    );
  }
  const amount = decimalToMinor(m.rate.amount ?? "0");
  switch (m.rate.calculation) {
    case "Flat":
      return amount;
    case "ByOrderTotal":
      // amount is a percentage of the order subtotal.
      return taxOf(subtotal, m.rate.amount, false);
    default:
      throw invalidField(
        "#/shippingMethod",
        `${name} uses ${m.rate.calculation} rates, which need a carrier integration`,
      );
  }
}

export function totals(config: Config, subtotal: number, shipping: number): Totals {
  const tax = config.CONFIG_LOCALIZATION?.tax;
  const included = tax?.pricesIncludeTax ?? false;
  const taxMinor = taxOf(subtotal, tax?.defaultRatePercent, included);
  return {
    subtotalMinor: subtotal,
    taxMinor,
    shippingMinor: shipping,
    totalMinor: subtotal + shipping + (included ? 0 : taxMinor),
  };
}

/** Allowed status changes: pending → paid → fulfilled → shipped → delivered; cancel; refund. */
export const TRANSITIONS: Record<OrderStatus, OrderStatus[]> = {
  pending: ["paid", "cancelled"],
  paid: ["fulfilled", "cancelled", "refunded"],
  fulfilled: ["shipped", "refunded"],
  shipped: ["delivered", "refunded"],
  delivered: ["refunded"],
  cancelled: [],
  refunded: [],
};

/** Statuses whose orders count as sales (analytics). */
export const SOLD: OrderStatus[] = ["paid", "fulfilled", "shipped", "delivered"];
