import { z } from "zod";
import type { PlanBudget, PlatformPlan } from "./plans.ts";

// The price table of platforms (an installation's own, set in the operator's and the dashboard's
// settings) and the monthly price of a plan from it: the operator's estimate in status and the
// dashboard's summary before launch compute it the same way, here.

// Settings from the environment arrive lower-cased and camel-cased at underscores
// (CRONSCALE_..._PRICES__STANDARD → "standard", ..._PER_GIB_MEMORY → "perGibMemory"): those
// spellings of the keys are taken too.
const PLAN_KEYS: Record<string, string> = {
  standard: "Standard",
  professional: "Professional",
  enterprise: "Enterprise",
  perGibMemory: "perGiBMemory",
  perGibStorage: "perGiBStorage",
};
const planKeysCased = (v: unknown) =>
  v && typeof v === "object" && !Array.isArray(v)
    ? Object.fromEntries(Object.entries(v).map(([k, x]) => [PLAN_KEYS[k] ?? k, x]))
    : v;

/** Monthly list price per plan (the monthly cost estimate of the deployment summary); Custom is priced per unit. */
const PriceTable = z
  .strictObject({
    currency: z.string().length(3).default("USD").describe("ISO 4217 currency of every price"),
    Standard: z.coerce.number().min(0).default(199).describe("Monthly price of Standard"),
    Professional: z.coerce.number().min(0).default(449).describe("Monthly price of Professional"),
    Enterprise: z.coerce.number().min(0).default(999).describe("Monthly price of Enterprise"),
    perVcpu: z.coerce.number().min(0).default(30).describe("Custom plans: price per vCPU and month"),
    perGiBMemory: z.coerce
      .number()
      .min(0)
      .default(10)
      .describe("Custom plans: price per GiB of memory and month"),
    perGiBStorage: z.coerce
      .number()
      .min(0)
      .default(0.2)
      .describe("Custom plans: price per GiB of storage and month"),
  })
  .describe(
    "Price table of the cost estimate. The defaults are list prices of this project's reference offer; an installation sets its own.",
  );

/** The price table, its plans' keys in either case. */
export const PlatformPricesSchema = z.preprocess(planKeysCased, PriceTable);

/** A price table. */
export type PlatformPrices = z.output<typeof PriceTable>;

/** The project's list prices (what an installation that sets none charges). */
export const DEFAULT_PLATFORM_PRICES: PlatformPrices = PlatformPricesSchema.parse({});

/** Monthly price of a plan whose budget is `budget`, two decimals. */
export function monthlyPrice(
  plan: PlatformPlan,
  budget: PlanBudget,
  prices: PlatformPrices,
): { amount: string; currency: string } {
  const t = budget.total;
  const amount =
    plan === "Custom"
      ? (t.cpuMillis / 1000) * prices.perVcpu +
        (t.memoryMiB / 1024) * prices.perGiBMemory +
        t.storageGiB * prices.perGiBStorage
      : prices[plan];
  return { amount: amount.toFixed(2), currency: prices.currency };
}
