import type { Config } from "../config.ts";
import { type AdminMessages, adminMessagesFor, textLang } from "../i18n/index.ts";
import { localeOf, taxRate } from "../store/locale.ts";

// The admin's language and formats: the platform's localization settings as the store reads them
// (store/locale.ts: defaultLanguage, timezone, dateFormat, tax), with the admin's own texts.
// Amounts keep each record's currency (an order placed before a currency change stays in its own).

export interface AdminLocale {
  /** The configured language (BCP 47), for every Intl format. */
  lang: string;
  /** The page's `lang`: the language of its texts. */
  htmlLang: string;
  t: AdminMessages;
  /** The currency of new prices. */
  currency: string;
  /** "incl. 19 % tax" / "plus 19 % tax" as the settings say prices are entered; "" without tax. */
  taxNote: string;
  money(minor: number, currency: string): string;
  number(n: number): string;
  /** A duration in milliseconds ("120 ms"). */
  milliseconds(n: number): string;
  /** An instant as a date in the configured format and a time, in the store's timezone. */
  dateTime(s: string | Date | null | undefined): string;
  /** An instant's calendar day in the store's timezone, in the configured format. */
  date(s: string | Date): string;
  /** A calendar day (YYYY-MM-DD, already in the store's timezone) in the configured format. */
  day(s: string): string;
  country(code: string): string;
}

export function adminLocaleOf(config: Config): AdminLocale {
  const store = localeOf(config);
  const { lang, timeZone } = store;
  const t = adminMessagesFor(lang);
  const moneyFormats = new Map<string, Intl.NumberFormat>();
  const nf = new Intl.NumberFormat(lang);
  const ms = new Intl.NumberFormat(lang, { style: "unit", unit: "millisecond" });
  const time = new Intl.DateTimeFormat(lang, {
    timeZone,
    hour: "2-digit",
    minute: "2-digit",
    timeZoneName: "short",
  });
  const rate = store.taxRatePercent && Number(store.taxRatePercent) !== 0 ? taxRate(store) : "";
  return {
    lang,
    htmlLang: textLang(lang, t),
    t,
    currency: store.currency,
    taxNote: rate ? (store.pricesIncludeTax ? t.taxIncluded(rate) : t.taxExcluded(rate)) : "",
    money: (minor, currency) => {
      let f = moneyFormats.get(currency);
      if (!f) {
        f = new Intl.NumberFormat(lang, { style: "currency", currency });
        moneyFormats.set(currency, f);
      }
      return f.format(minor / 100);
    },
    number: (n) => nf.format(n),
    milliseconds: (n) => ms.format(n),
    dateTime: (s) => {
      if (!s) return "—";
      const d = new Date(s);
      return `${store.date(d)} ${time.format(d)}`;
    },
    date: (s) => store.date(new Date(s)),
    day: (s) => {
      const [y = "", m = "", d = ""] = s.split("-");
      return store.dateFormat.replace("YYYY", y).replace("MM", m).replace("DD", d);
    },
    country: store.country,
  };
}
