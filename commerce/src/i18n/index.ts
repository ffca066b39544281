import { adminDe } from "./admin-de.ts";
import { type AdminMessages, adminEn } from "./admin-en.ts";
import { de } from "./de.ts";
import { en, type Messages } from "./en.ts";

// Message catalogs of the store's texts, one TypeScript object per language typed by the English
// one. Written by hand rather than with i18next or @formatjs/intl: the texts are a few hundred
// fixed strings rendered server-side from code, and a typed object makes a missing or misspelled
// key (or a wrong argument) a compile error, which string-keyed JSON resources only catch at run
// time; the one thing such libraries add here, plural selection, is Intl.PluralRules (plural.ts).
//
// To add a language: copy de.ts to <tag>.ts and admin-de.ts to admin-<tag>.ts, translate them,
// and list them in CATALOGS and ADMIN_CATALOGS.

export type { AdminMessages, Messages };

export const CATALOGS: Readonly<Record<string, Messages>> = { en, de };
/** The admin interface's catalogs (admin-en.ts, admin-de.ts), chosen the same way. */
export const ADMIN_CATALOGS: Readonly<Record<string, AdminMessages>> = { en: adminEn, de: adminDe };

/**
 * The catalog for a BCP 47 tag: the exact tag, then its primary language subtag ("de-AT" → "de"),
 * then English.
 */
export function messagesFor(tag: string): Messages {
  return pick(CATALOGS, tag) ?? en;
}

/** The admin interface's catalog for a tag, by the same rule as `messagesFor`. */
export function adminMessagesFor(tag: string): AdminMessages {
  return pick(ADMIN_CATALOGS, tag) ?? adminEn;
}

function pick<T>(catalogs: Readonly<Record<string, T>>, tag: string): T | undefined {
  const lower = tag.toLowerCase();
  return catalogs[lower] ?? catalogs[lower.split("-")[0] ?? ""];
}

/**
 * The `lang` of a page written from `t` for the configured tag: the tag itself when the catalog
 * speaks its language (a regional "de-CH" stays "de-CH"), else the catalog's own language, so
 * English fallback text is never announced as another language.
 */
export function textLang(tag: string, t: { lang: string }): string {
  return tag.toLowerCase().split("-")[0] === t.lang.split("-")[0] ? tag : t.lang;
}

/** The configured `defaultLanguage` as a canonical BCP 47 tag ("en" when unset or malformed). */
export function canonicalLanguage(tag: string | undefined): string {
  try {
    return Intl.getCanonicalLocales(tag ?? "en")[0] ?? "en";
  } catch {
    return "en";
  }
}
