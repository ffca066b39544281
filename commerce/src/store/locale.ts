import { z } from "zod";
import type { Config } from "../config.ts";

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
  lang: string;
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
  let lang = l?.defaultLanguage ?? "en";
  try {
    lang = Intl.getCanonicalLocales(lang)[0] ?? "en";
  } catch {
    lang = "en";
  }
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
  const regions = new Intl.DisplayNames([lang], { type: "region", fallback: "code" });
  return {
    lang,
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
    country: (code) => {
      try {
        return regions.of(code) ?? code;
      } catch {
        return code;
      }
    },
  };
}

/** "incl. tax" / "plus tax" as the settings say prices are shown. */
export function taxNote(loc: Locale): string {
  if (!loc.taxRatePercent || Number(loc.taxRatePercent) === 0) return "";
  return loc.pricesIncludeTax ? `incl. ${loc.taxRatePercent} % tax` : `plus ${loc.taxRatePercent} % tax`;
}
