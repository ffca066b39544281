import { describe, expect, it } from "vitest";
import { adminLocaleOf } from "../src/admin/locale.ts";
import { loadConfig } from "../src/config.ts";
import { composeMail } from "../src/email/mailer.ts";
import {
  ADMIN_CATALOGS,
  type AdminMessages,
  adminMessagesFor,
  CATALOGS,
  messagesFor,
  textLang,
} from "../src/i18n/index.ts";
import { localeOf, taxNote } from "../src/store/locale.ts";

// The message catalogs: every language has every key of the English one (the types check the
// top level and argument shapes; this also covers the nested tables such as order statuses), the
// choice by the configured language tag, plural forms, and the confirmation mail's texts.

/** Every key path of a catalog, with the kind of its value. */
function shape(o: Record<string, unknown>, prefix = ""): string[] {
  return Object.entries(o).flatMap(([k, v]) =>
    v && typeof v === "object"
      ? shape(v as Record<string, unknown>, `${prefix}${k}.`)
      : [`${prefix}${k}:${typeof v}`],
  );
}

const config = (localization: object) =>
  loadConfig({ DATABASE_URL: "postgres://u@h/d", CONFIG_LOCALIZATION: JSON.stringify(localization) });

describe("message catalogs", () => {
  it("have every key of the English catalog, non-empty", () => {
    const en = shape(CATALOGS.en as unknown as Record<string, unknown>).sort();
    expect(Object.keys(CATALOGS).sort()).toEqual(["de", "en"]);
    for (const [lang, t] of Object.entries(CATALOGS)) {
      expect(shape(t as unknown as Record<string, unknown>).sort(), lang).toEqual(en);
      const empty = Object.entries(t).filter(([, v]) => v === "");
      expect(empty, lang).toEqual([]);
    }
  });

  it("of the admin have every key of the English admin catalog, non-empty", () => {
    const en = shape(ADMIN_CATALOGS.en as unknown as Record<string, unknown>).sort();
    expect(Object.keys(ADMIN_CATALOGS).sort()).toEqual(Object.keys(CATALOGS).sort());
    for (const [lang, t] of Object.entries(ADMIN_CATALOGS)) {
      expect(shape(t as unknown as Record<string, unknown>).sort(), lang).toEqual(en);
      const empty = (o: object, at = ""): string[] =>
        Object.entries(o).flatMap(([k, v]) =>
          v && typeof v === "object" ? empty(v, `${at}${k}.`) : v === "" ? [`${at}${k}`] : [],
        );
      expect(empty(t), lang).toEqual([]);
    }
    // A catalog lacking a key is not an AdminMessages: typecheck fails without the directive.
    const { signIn: _, ...partial } = adminMessagesFor("de");
    // @ts-expect-error the key signIn is missing
    const incomplete: AdminMessages = partial;
    expect(incomplete.signIn).toBeUndefined();
  });

  it("give the admin the platform's language, date format, timezone, currency and tax display", () => {
    const de = adminLocaleOf(
      config({
        defaultLanguage: "de-AT",
        currency: "EUR",
        timezone: "Europe/Vienna",
        dateFormat: "DD.MM.YYYY",
        tax: { pricesIncludeTax: true, defaultRatePercent: "20" },
      }),
    );
    expect(de.htmlLang).toBe("de-AT");
    expect(de.t.signIn).toBe("Anmelden");
    expect(de.money(123456, "EUR")).toMatch(/^€\s1\.234,56$/);
    expect(de.number(1234567)).toMatch(/^1\s?234\s?567$/);
    expect(de.dateTime("2026-11-23T23:30:00Z")).toMatch(/^24\.11\.2026 00:30/);
    expect(de.day("2026-03-07")).toBe("07.03.2026");
    expect(de.country("CH")).toBe("Schweiz");
    expect(de.taxNote).toBe("inkl. 20 % MwSt.");
    const en = adminLocaleOf(
      config({ currency: "USD", dateFormat: "MM/DD/YYYY", tax: { defaultRatePercent: "0" } }),
    );
    expect(en.htmlLang).toBe("en");
    expect(en.money(150, "USD")).toBe("$1.50");
    expect(en.dateTime("2026-11-23T23:30:00Z")).toMatch(/^11\/23\/2026 11:30\sPM UTC$/);
    expect(en.taxNote).toBe("");
    expect(adminLocaleOf(config({ defaultLanguage: "fr" })).htmlLang).toBe("en");
  });

  it("are chosen by the exact tag, then the primary subtag, then English", () => {
    expect(messagesFor("de").lang).toBe("de");
    expect(messagesFor("de-AT").lang).toBe("de");
    expect(messagesFor("DE-ch").lang).toBe("de");
    expect(messagesFor("en-GB").lang).toBe("en");
    expect(messagesFor("fr-FR").lang).toBe("en");
    // A page in the fallback language says so; a regional tag of the catalog's language stays.
    expect(textLang("de-AT", messagesFor("de-AT"))).toBe("de-AT");
    expect(textLang("fr-FR", messagesFor("fr-FR"))).toBe("en");
  });

  it("pick plural forms with Intl.PluralRules and format the count in the language", () => {
    expect(CATALOGS.en?.tooManySignIns(1)).toContain("in 1 second.");
    expect(CATALOGS.en?.tooManySignIns(30)).toContain("in 30 seconds.");
    expect(CATALOGS.de?.tooManySignIns(1)).toContain("in 1 Sekunde erneut");
    expect(CATALOGS.de?.tooManySignIns(1500)).toContain("in 1.500 Sekunden erneut");
    expect(CATALOGS.en?.cartItems(1)).toBe("1 item");
    expect(CATALOGS.en?.cartItems(0)).toBe("0 items");
  });

  it("follow the configured defaultLanguage in the store's locale", () => {
    const de = localeOf(
      config({ defaultLanguage: "de-AT", tax: { pricesIncludeTax: true, defaultRatePercent: "7.5" } }),
    );
    expect(de.htmlLang).toBe("de-AT");
    expect(de.t.addToCart).toBe("In den Warenkorb");
    expect(taxNote(de)).toBe("Preise inkl. 7,5 % MwSt.");
    const fr = localeOf(config({ defaultLanguage: "fr" }));
    expect(fr.htmlLang).toBe("en");
    expect(fr.lang).toBe("fr"); // numbers and dates still French
    expect(fr.t.addToCart).toBe("Add to cart");
    expect(localeOf(config({})).htmlLang).toBe("en");
  });

  it("write the order confirmation mail in the platform's language", () => {
    const order = { id: "ord_1", name: "Eve", currency: "EUR", totalMinor: 1990, trackingNumber: null };
    const lines = [{ quantity: 2, title: "Becher", sku: "MUG", totalMinor: 1990 }];
    const de = composeMail(messagesFor("de"), "de", "OrderConfirmation", order, lines);
    expect(de.subject).toBe("Bestellung ord_1 bestätigt");
    expect(de.text).toContain("Hallo Eve,");
    expect(de.text).toContain("vielen Dank für Ihre Bestellung:");
    expect(de.text).toMatch(/Gesamt: 19,90\s€/); // German format (a no-break space)
    expect(de.text).not.toContain("Lieferadresse"); // none given
    const shipped = composeMail(
      messagesFor("de"),
      "de",
      "OrderConfirmation",
      {
        ...order,
        shippingAddress: {
          name: "Eve",
          line1: "Hauptstr. 1",
          city: "Köln",
          postalCode: "50667",
          country: "AT",
        },
      },
      lines,
    );
    expect(shipped.text).toContain("Lieferadresse:\n  Eve\n  Hauptstr. 1\n  50667 Köln\n  Österreich");
    const en = composeMail(
      messagesFor("en"),
      "en",
      "ShippingConfirmation",
      { ...order, trackingNumber: "T1" },
      lines,
    );
    expect(en.subject).toBe("Order ord_1 shipped");
    expect(en.text).toContain("your order is on its way (tracking T1):");
  });
});
