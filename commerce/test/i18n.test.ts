import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { composeMail } from "../src/email/mailer.ts";
import { CATALOGS, messagesFor, textLang } from "../src/i18n/index.ts";
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
