import { de } from "./de.ts";
import { en, type Messages } from "./en.ts";

// Message catalogs of the store's texts, one TypeScript object per language typed by the English
// one. Written by hand rather than with i18next or @formatjs/intl: the texts are a few hundred
// fixed strings rendered server-side from code, and a typed object makes a missing or misspelled
// key (or a wrong argument) a compile error, which string-keyed JSON resources only catch at run
// time; the one thing such libraries add here, plural selection, is Intl.PluralRules (plural.ts).
//
// To add a language: copy de.ts to <tag>.ts, translate it, and list it in CATALOGS.

export type { Messages };

export const CATALOGS: Readonly<Record<string, Messages>> = { en, de };

/**
 * The catalog for a BCP 47 tag: the exact tag, then its primary language subtag ("de-AT" → "de"),
 * then English.
 */
export function messagesFor(tag: string): Messages {
  const lower = tag.toLowerCase();
  return CATALOGS[lower] ?? CATALOGS[lower.split("-")[0] ?? ""] ?? en;
}

/**
 * The `lang` of a page written from `t` for the configured tag: the tag itself when the catalog
 * speaks its language (a regional "de-CH" stays "de-CH"), else the catalog's own language, so
 * English fallback text is never announced as another language.
 */
export function textLang(tag: string, t: Messages): string {
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
