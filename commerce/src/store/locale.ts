import { z } from "zod";
import type { Config } from "../config.ts";
import { canonicalLanguage, type Messages, messagesFor, textLang } from "../i18n/index.ts";
import { countryNames } from "../orders/address.ts";

// The platform's localization and store settings as the store shows them: prices and dates in
// the configured language, currency, timezone and date format, with the tax display the settings
// ask for. The configuration groups are loose JSON (config.ts); the fields only the store reads
// are parsed here, tolerantly (a bad optional field is left out, never fatal for a page).

const storeInfo = z.object({
  name: z.string().catch("Store"),
  contactEmail: z.string().optional().catch(undefined),
  supportPhone: z.string().optional().catch(undefined),
  address: z
    .object({
      line1: z.string(),
      line2: z.string().optional(),
      city: z.string(),
      region: z.string().optional(),
      postalCode: z.string().optional(),
      country: z.string(),
    })
    .optional()
    .catch(undefined),
});
export type StoreInfo = z.infer<typeof storeInfo>;

const DATE_FORMATS = ["YYYY-MM-DD", "DD/MM/YYYY", "MM/DD/YYYY", "DD.MM.YYYY"] as const;

export interface Locale {
  /** The configured language (BCP 47), for every Intl format. */
  lang: string;
  /** The page's `lang`: the language its texts are in (see i18n/index.ts). */
  htmlLang: string;
  /** The texts in the configured language (or its fallback). */
  t: Messages;
  currency: string;
  timeZone: string;
  dateFormat: (typeof DATE_FORMATS)[number];
  pricesIncludeTax: boolean;
  taxRatePercent: string | undefined;
  store: StoreInfo;
  money(minor: number): string;
  date(d: Date): string;
  country(code: string): string;
}

/** The store's locale from the configuration (read once at start). */
export function localeOf(config: Config): Locale {
  const l = config.CONFIG_LOCALIZATION;
  const lang = canonicalLanguage(l?.defaultLanguage);
  const currency = l?.currency ?? "USD";
  let timeZone = l?.timezone ?? "UTC";
  try {
    new Intl.DateTimeFormat("en", { timeZone });
  } catch {
    timeZone = "UTC";
  }
  const df = (l as { dateFormat?: unknown } | undefined)?.dateFormat;
  const dateFormat = DATE_FORMATS.find((f) => f === df) ?? "YYYY-MM-DD";
  const store = storeInfo.parse({
    ...(config.CONFIG_STORE ?? {}),
    name: config.CONFIG_STORE?.name ?? config.PLATFORM_INSTANCE,
  });
  // Minor units are hundredths throughout the service (pricing.ts, the mailer).
  const nf = new Intl.NumberFormat(lang, { style: "currency", currency });
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  });
  const t = messagesFor(lang);
  return {
    lang,
    htmlLang: textLang(lang, t),
    t,
    currency,
    timeZone,
    dateFormat,
    pricesIncludeTax: l?.tax?.pricesIncludeTax ?? false,
    taxRatePercent: l?.tax?.defaultRatePercent,
    store,
    money: (minor) => nf.format(minor / 100),
    date: (d) => {
      const p = Object.fromEntries(parts.formatToParts(d).map((x) => [x.type, x.value]));
      return dateFormat
        .replace("YYYY", p.year ?? "")
        .replace("MM", p.month ?? "")
        .replace("DD", p.day ?? "");
    },
    country: countryNames(lang),
  };
}

/** "Prices incl. tax." / "Prices plus tax." as the settings say prices are shown ("" without tax). */
export function taxNote(loc: Locale): string {
  if (!loc.taxRatePercent || Number(loc.taxRatePercent) === 0) return "";
  const rate = taxRate(loc);
  return loc.t.pricesNote(loc.pricesIncludeTax ? loc.t.taxIncluded(rate) : loc.t.taxExcluded(rate));
}

/** The tax rate as a number of the language ("19", "7,5"). */
export function taxRate(loc: Locale): string {
  return new Intl.NumberFormat(loc.lang, { maximumFractionDigits: 3 }).format(
    Number(loc.taxRatePercent ?? 0),
  );
}

/**
 * A form's validation issues as the shopper reads them: one message per field, from the catalog
 * (the schemas' own messages are the API's English ones), each field once.
 */
export function formErrors(t: Messages, issues: readonly { path: readonly PropertyKey[] }[]): string {
  const fields = [...new Set(issues.map((i) => String(i.path[0] ?? "")))];
  return fields.map((f) => (t.invalid as Record<string, string>)[f] ?? t.invalid.other).join(" ");
}

/**
 * A refusal of the order code (an API problem, whose detail is English for API clients) as the
 * shopper reads it: by the field it names, or the stock it lacks.
 */
export function orderRefusal(
  loc: Locale,
  p: { type: string; message: string; extra: Record<string, unknown> },
  form: { shippingMethod?: string; country?: string },
): string {
  const { t } = loc;
  const pointer = (p.extra.errors as { pointer?: string }[] | undefined)?.[0]?.pointer ?? "";
  if (p.type.endsWith("/validation") && !pointer) return p.message; // the store's own (customers.ts)
  if (pointer === "#/shippingCountry")
    return t.notShippedTo(form.shippingMethod ?? "", loc.country(form.country ?? ""));
  if (pointer === "#/shippingMethod") return t.invalid.shippingMethod;
  if (pointer.startsWith("#/lines/") || p.type.endsWith("/insufficient-stock")) return t.cartChanged;
  return t.orderRefused;
}
