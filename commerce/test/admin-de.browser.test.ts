import { randomBytes } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_ENV, NEW_PASSWORD, totpCode } from "./support/admin.ts";
import { artifactsDir, launchChromium, screenshots, seriousA11yViolations } from "./support/browser.ts";
import { freshDatabase, OPERATOR_KEY, productBody } from "./support/harness.ts";
import { type ServiceProcess, startProcess } from "./support/process.ts";
import { type Receiver, startReceiver } from "./support/receiver.ts";

// The admin in German (defaultLanguage "de-DE") in Debian's Chromium against the real process:
// the first sign-in and every main page found by their German accessible names, the page's lang,
// dates in the configured format and timezone, amounts and the shipping country as German
// readers expect them, axe-core clean and no sideways scrolling at 390 px. Screenshots go to
// tmp/artifacts/admin-de/.

const ARTIFACTS = artifactsDir("admin-de");
let svc: ServiceProcess;
let rx: Receiver;
let browser: Browser;
let page: Page;
let adminUrl = "";
let apiUrl = "";
let orderId = "";

const api = async (path: string, json?: unknown) => {
  const r = await fetch(apiUrl + path, {
    method: json ? "POST" : "GET",
    headers: {
      authorization: `Bearer ${OPERATOR_KEY}`,
      ...(json ? { "content-type": "application/json" } : {}),
    },
    body: json ? JSON.stringify(json) : undefined,
  });
  return { status: r.status, body: await r.json() };
};

async function check(name: string) {
  expect(await page.locator("html").getAttribute("lang"), name).toBe("de-DE");
  expect(await seriousA11yViolations(page), `axe on ${name}`).toEqual([]);
  expect(await screenshots(page, ARTIFACTS, name), `horizontal overflow on ${name}`).toEqual({
    desktop: 0,
    phone: 0,
  });
}

const main = async () => (await page.locator("main").textContent()) ?? "";

beforeAll(async () => {
  const signingKey = `whsec_${randomBytes(24).toString("base64")}`;
  rx = await startReceiver(signingKey);
  const dbUrl = await freshDatabase();
  svc = await startProcess((port) => ({
    ...ADMIN_ENV,
    CONFIG_STORE: JSON.stringify({ name: "Kaffeerösterei Berg" }),
    CONFIG_LOCALIZATION: JSON.stringify({
      defaultLanguage: "de-DE",
      currency: "EUR",
      timezone: "Europe/Berlin",
      dateFormat: "DD.MM.YYYY",
      tax: { pricesIncludeTax: true, defaultRatePercent: "19" },
    }),
    CONFIG_SHIPPING_METHODS: JSON.stringify([
      { name: "Post", carrier: "Post", zones: ["DE", "CH"], rate: { calculation: "Flat", amount: "5.00" } },
    ]),
    DATABASE_URL: dbUrl,
    API_KEY: OPERATOR_KEY,
    COMMERCE_LOG_LEVEL: "warn",
    ADMIN_URL: `http://localhost:${port}`,
    COMMERCE_ADMIN_ALLOWED_CIDRS: "127.0.0.0/8,::1/128",
    COMMERCE_WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8",
    CONFIG_WEBHOOKS: JSON.stringify([{ name: "erp", url: `${rx.url}/hook`, events: ["OrderCreated"] }]),
    WEBHOOK_ERP_SIGNING_KEY: signingKey,
  }));
  adminUrl = `http://localhost:${svc.port}`;
  apiUrl = `http://127.0.0.1:${svc.port}`;
  await api("/api/v1/products", productBody("Espressotasse", ["TASSE-1"], 1450, 40));
  await api("/api/v1/products", productBody("Grüner Tee 100 g", ["TEE-G"], 890, 4));
  const customer = await api("/api/v1/customers", { email: "grete@example.com", name: "Grete Hermann" });
  const o = await api("/api/v1/orders", {
    customerId: customer.body.id,
    lines: [{ sku: "TASSE-1", quantity: 3 }],
    shippingMethod: "Post",
    shippingAddress: {
      name: "Grete Hermann",
      line1: "Bahnhofstrasse 1",
      city: "Zürich",
      postalCode: "8001",
      country: "CH",
    },
  });
  expect(o.status).toBe(201);
  orderId = o.body.id;
  expect((await api(`/api/v1/orders/${orderId}/transitions`, { to: "paid" })).status).toBe(200);
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.setDefaultTimeout(10_000);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  await rx?.close();
});

describe("the admin in German", { timeout: 120_000 }, () => {
  it("signs in, enrols TOTP and shows every main page in German", async () => {
    await page.goto(`${adminUrl}/admin/login`);
    await page.getByRole("heading", { name: "Anmelden" }).waitFor();
    await check("login");
    await page.getByLabel("Benutzername").fill(ADMIN_ENV.ADMIN_USERNAME);
    await page.getByLabel("Passwort", { exact: true }).fill("falsch-falsch");
    await page.getByRole("button", { name: "Anmelden" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toBe(
      "Benutzername oder Passwort ist falsch.",
    );
    await page.getByLabel("Benutzername").fill(ADMIN_ENV.ADMIN_USERNAME);
    await page.getByLabel("Passwort", { exact: true }).fill(ADMIN_ENV.ADMIN_PASSWORD);
    await page.getByRole("button", { name: "Anmelden" }).click();
    await page.getByRole("heading", { name: "Neues Passwort wählen" }).waitFor();
    await page.getByLabel("Neues Passwort", { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel("Neues Passwort wiederholen").fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Passwort speichern" }).click();
    await page.getByRole("heading", { name: "Zwei-Faktor-Authentifizierung einrichten" }).waitFor();
    await check("enrolment");
    const secret = (await page.locator("[data-totp-secret]").getAttribute("data-totp-secret")) ?? "";
    await page.getByLabel("Sechsstelliger Code").fill(totpCode(secret));
    await page.getByRole("button", { name: "Bestätigen" }).click();
    await page.getByRole("heading", { name: "Wiederherstellungscodes" }).waitFor();
    await check("recovery-codes");
    await page.getByRole("link", { name: "Weiter zur Übersicht" }).click();

    await page.getByRole("heading", { name: /Übersicht/ }).waitFor();
    await check("overview");
    // 3 × 14,50 € + 5,00 € shipping, tax included in the prices: 48,50 € (German format).
    expect(await main()).toMatch(/Umsatz\s*48,50\s€/);
    await expect(page.locator("#low-h + table").textContent()).resolves.toContain("TEE-G");

    await page.getByRole("navigation", { name: "Hauptmenü" }).getByRole("link", { name: "Produkte" }).click();
    await page.getByLabel("Titel durchsuchen").fill("tee");
    await page.getByRole("button", { name: "Suchen" }).click();
    await expect(page.locator("main table").textContent()).resolves.toContain("Grüner Tee");
    expect(await main()).toMatch(/8,90\s€/);
    await page.getByLabel("Preis (EUR, inkl. 19 % MwSt.)").waitFor();
    await check("products");

    await page.getByRole("link", { name: "Bestellungen", exact: true }).click();
    expect(await main()).toMatch(/\d{2}\.\d{2}\.\d{4} \d{2}:\d{2} MEZ|\d{2}\.\d{2}\.\d{4} \d{2}:\d{2} MESZ/);
    expect(await main()).toContain("bezahlt");
    await check("orders");
    await page.getByRole("link", { name: orderId }).click();
    expect(await page.locator("[data-shipping-address]").textContent()).toContain("Schweiz");
    await page.getByRole("radio", { name: "versandbereit" }).check();
    await page.getByLabel("Notiz").fill("verpackt");
    await page.getByRole("button", { name: "Status ändern" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toBe("Status geändert.");
    await expect(page.locator("[data-order-status]").textContent()).resolves.toBe("versandbereit");
    expect((await api(`/api/v1/orders/${orderId}`)).body.status).toBe("fulfilled");
    await check("order-detail");

    await page.getByRole("link", { name: "Kunden" }).click();
    await expect(page.getByRole("link", { name: "Bestellungen von Grete Hermann" }).count()).resolves.toBe(1);
    await check("customers");

    await page.getByRole("link", { name: "API-Schlüssel" }).click();
    await page.getByText("Neuer API-Schlüssel").click();
    await page.getByLabel("Name").first().fill("Warenwirtschaft");
    await page.getByRole("checkbox", { name: "products:read" }).first().check();
    await page.getByRole("button", { name: "API-Schlüssel anlegen" }).click();
    await expect(page.locator("[data-secret]").textContent()).resolves.toMatch(/^csk_/);
    await check("api-keys");

    await rx.waitFor((r) => r.length >= 1);
    await page.getByRole("link", { name: "Webhooks" }).click();
    await expect(page.locator("main table").textContent()).resolves.toContain("zugestellt");
    await page.locator("main table a").first().click();
    await page.getByRole("button", { name: "Erneut senden" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toBe("Erneutes Senden eingeplant.");
    await check("delivery");
    await page.getByRole("link", { name: "← Webhooks" }).click();
    await check("webhooks");

    await page.getByRole("link", { name: "Einstellungen" }).click();
    await expect(page.getByRole("heading", { name: "Einstellungen", level: 1 }).count()).resolves.toBe(1);
    expect(await main()).toContain("GitOps");
    await check("settings");

    await page.getByRole("button", { name: "Abmelden" }).click();
    await page.getByRole("heading", { name: "Anmelden" }).waitFor();
  });
});
