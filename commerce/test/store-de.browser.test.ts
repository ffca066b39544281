import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { artifactsDir, launchChromium, screenshots, seriousA11yViolations } from "./support/browser.ts";
import { productBody } from "./support/harness.ts";
import { type StoreTarget, storeTarget } from "./support/store-target.ts";

// The store in German (defaultLanguage "de-AT": the German catalog by its primary subtag) in
// Chromium: the page's lang, accessible names from the catalog, and axe-core clean on the main
// pages in that language too. Only against the local service process (a deployment under test
// through COMMERCE_STORE_URL has its own language).

const external = Boolean(process.env.COMMERCE_STORE_URL);
const ARTIFACTS = artifactsDir("store-de");
let target: StoreTarget;
let browser: Browser;

beforeAll(async () => {
  if (external) return;
  [target, browser] = await Promise.all([
    storeTarget({
      CONFIG_STORE: JSON.stringify({ name: "Wiener Kaffee", contactEmail: "servus@kaffee.test" }),
      CONFIG_LOCALIZATION: JSON.stringify({
        defaultLanguage: "de-AT",
        currency: "EUR",
        dateFormat: "DD.MM.YYYY",
        tax: { pricesIncludeTax: true, defaultRatePercent: "20" },
      }),
      CONFIG_SHIPPING_METHODS: JSON.stringify([
        { name: "Post", carrier: "Post", zones: ["AT", "DE"], rate: { calculation: "Flat", amount: "5.00" } },
      ]),
      CONFIG_PAYMENT_GATEWAYS: JSON.stringify([
        { name: "Karte", type: "Card", provider: "test", mode: "Test" },
      ]),
    }),
    launchChromium(),
  ]);
  const r = await fetch(`${target.apiUrl}/api/v1/products`, {
    method: "POST",
    headers: { authorization: `Bearer ${target.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(productBody("Melange Tasse", ["TASSE-1"], 1450, 10)),
  });
  expect(r.status).toBe(201);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await target?.stop();
});

async function check(page: Page, name: string): Promise<void> {
  expect(await page.locator("html").getAttribute("lang"), name).toBe("de-AT");
  expect(await seriousA11yViolations(page), `axe on ${name}`).toEqual([]);
  expect(await screenshots(page, ARTIFACTS, name), `horizontal overflow on ${name}`).toEqual({
    desktop: 0,
    phone: 0,
  });
}

describe("the store in German", () => {
  it.skipIf(external)(
    "home, product, cart, checkout and confirmation speak German",
    async () => {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await ctx.newPage();
      await page.goto(`${target.storeUrl}/`);
      expect(await page.getByRole("link", { name: "Zum Inhalt springen" }).count()).toBe(1);
      await check(page, "home");
      await page.getByRole("searchbox", { name: "Produkte suchen" }).fill("tasse");
      await page.getByRole("button", { name: "Suchen" }).click();
      await page.getByRole("link", { name: /Melange Tasse/ }).click();
      expect(await page.locator("main").textContent()).toContain("Preise inkl. 20 % MwSt.");
      await page.getByLabel("Menge").fill("2");
      await check(page, "product");
      await page.getByRole("button", { name: "In den Warenkorb" }).click();
      await page.waitForURL(/\/cart$/);
      expect(await page.locator(".count").getAttribute("aria-label")).toBe("2 Artikel");
      await check(page, "cart");
      await page.getByRole("link", { name: "Kasse" }).click();
      await page.getByLabel("Vollständiger Name").fill("Franz Huber");
      await page.getByLabel("E-Mail (für die Bestätigung)").fill("franz@example.test");
      await page.getByLabel("Land", { exact: true }).selectOption("AT");
      await page.getByLabel("Straße und Hausnummer").fill("Ring 1");
      await page.getByLabel("Postleitzahl").fill("1010");
      await page.getByLabel("Ort", { exact: true }).fill("Wien");
      await check(page, "checkout");
      await page.getByRole("button", { name: "Zahlungspflichtig bestellen" }).click();
      await page.waitForURL(/\/orders\/ord_/);
      const main = (await page.locator("main").textContent()) ?? "";
      expect(main).toContain("Vielen Dank, Ihre Bestellung ist bestätigt");
      expect(main).toContain("Status bezahlt");
      expect(main).toMatch(/aufgegeben am \d\d\.\d\d\.\d{4}/);
      await check(page, "confirmation");
      await ctx.close();
    },
    90_000,
  );
});
