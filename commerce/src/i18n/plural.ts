// Plural forms by CLDR category (Intl.PluralRules): a language's catalog names the forms it has
// ("one", "other" for English and German; "few", "many" … for others) and the rules pick one.

export type PluralForms = Partial<Record<Intl.LDMLPluralRule, string>> & { other: string };

/** `(n, forms)` picking the form of `n` in `lang`, with `#` replaced by the number. */
export function plurals(lang: string): (n: number, forms: PluralForms) => string {
  const rules = new Intl.PluralRules(lang);
  const nf = new Intl.NumberFormat(lang);
  return (n, forms) => (forms[rules.select(n)] ?? forms.other).replaceAll("#", nf.format(n));
}
