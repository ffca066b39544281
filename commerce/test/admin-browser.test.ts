import { randomBytes } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_ENV, NEW_PASSWORD, totpCode } from "./support/admin.ts";
import { artifactsDir, launchChromium, screenshots, seriousA11yViolations } from "./support/browser.ts";
import { freshDatabase, OPERATOR_KEY, productBody } from "./support/harness.ts";
import { type ServiceProcess, startProcess } from "./support/process.ts";
import { type Receiver, startReceiver } from "./support/receiver.ts";

// The admin interface in Debian's Chromium against the real service process: first sign-in with
// the initial credentials, forced password change, TOTP enrolment, sign-out and sign-in with a
// code computed here, then the pages used as an owner would. Every main page is checked with
// axe-core and photographed at desktop and phone widths (tmp/artifacts/admin/).

const ARTIFACTS = artifactsDir("admin");
let svc: ServiceProcess;
let rx: Receiver;
let browser: Browser;
let page: Page;
/** Where the admin is (its host is `localhost`: a secure context, where Chromium keeps Secure cookies). */
let adminUrl = "";
/** The API, on another name of the same process (on the admin host the API does not exist). */
let apiUrl = "";
let orderId = "";

const api = async (path: string, init: { method?: string; json?: unknown; key?: string } = {}) => {
  const r = await fetch(apiUrl + path, {
    method: init.method ?? "GET",
    headers: {
      authorization: `Bearer ${init.key ?? OPERATOR_KEY}`,
      ...(init.json ? { "content-type": "application/json" } : {}),
    },
    body: init.json ? JSON.stringify(init.json) : undefined,
  });
  return { status: r.status, body: r.status === 204 ? null : await r.json() };
};

async function check(name: string) {
  expect(await seriousA11yViolations(page), `axe on ${name}`).toEqual([]);
  expect(await screenshots(page, ARTIFACTS, name), `horizontal overflow on ${name}`).toEqual({
    desktop: 0,
    phone: 0,
  });
}

beforeAll(async () => {
  const signingKey = `whsec_${randomBytes(24).toString("base64")}`;
  rx = await startReceiver(signingKey);
  const dbUrl = await freshDatabase();
  svc = await startProcess((port) => ({
    ...ADMIN_ENV,
    DATABASE_URL: dbUrl,
    API_KEY: OPERATOR_KEY,
    COMMERCE_LOG_LEVEL: "warn",
    ADMIN_URL: `http://localhost:${port}`,
    COMMERCE_ADMIN_ALLOWED_CIDRS: "127.0.0.0/8,::1/128",
    COMMERCE_WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8",
    CONFIG_WEBHOOKS: JSON.stringify([
      { name: "erp", url: `${rx.url}/hook`, events: ["OrderCreated", "OrderUpdated"] },
    ]),
    WEBHOOK_ERP_SIGNING_KEY: signingKey,
  }));
  adminUrl = `http://localhost:${svc.port}`;
  apiUrl = `http://127.0.0.1:${svc.port}`;
  // A shop with something to manage: products (one low on stock), a customer, orders.
  await api("/api/v1/products", { method: "POST", json: productBody("Ceramic Mug", ["MUG-1"], 1450, 40) });
  await api("/api/v1/products", { method: "POST", json: productBody("Green Tea 100 g", ["TEA-G"], 890, 4) });
  const customer = await api("/api/v1/customers", {
    method: "POST",
    json: { email: "ada@example.com", name: "Ada Lovelace" },
  });
  for (const qty of [1, 3]) {
    const o = await api("/api/v1/orders", {
      method: "POST",
      json: { customerId: customer.body.id, lines: [{ sku: "MUG-1", quantity: qty }] },
    });
    orderId = o.body.id;
  }
  await api(`/api/v1/orders/${orderId}/transitions`, { method: "POST", json: { to: "paid" } });
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.setDefaultTimeout(10_000);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  await rx?.close();
});

describe("the admin in Chromium", { timeout: 120_000 }, () => {
  it("signs in with the initial credentials, changes the password and enrols TOTP", async () => {
    await page.goto(`${adminUrl}/`);
    await expect.poll(() => page.url()).toBe(`${adminUrl}/admin/login`);
    await check("login");
    await page.getByLabel("Username").fill(ADMIN_ENV.ADMIN_USERNAME);
    await page.getByLabel("Password", { exact: true }).fill(ADMIN_ENV.ADMIN_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Choose a new password" }).waitFor();
    await page.getByLabel("New password", { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel("Repeat the new password").fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Save password" }).click();
    await page.getByRole("heading", { name: "Set up two-factor authentication" }).waitFor();
    await check("enrolment");
    const secret = (await page.locator("[data-totp-secret]").getAttribute("data-totp-secret")) ?? "";
    await page.getByLabel("Six-digit code").fill("000000");
    await page.getByRole("button", { name: "Confirm" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("does not match");
    await page.getByLabel("Six-digit code").fill(totpCode(secret));
    await page.getByRole("button", { name: "Confirm" }).click();
    await page.getByRole("heading", { name: "Recovery codes" }).waitFor();
    expect(await page.locator("[data-recovery-code]").count()).toBe(10);
    await screenshots(page, ARTIFACTS, "recovery-codes");

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Username").fill(ADMIN_ENV.ADMIN_USERNAME);
    await page.getByLabel("Password", { exact: true }).fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Two-factor authentication" }).waitFor();
    await page.getByLabel(/Code from your authenticator/).fill("999999");
    await page.getByRole("button", { name: "Verify" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("not valid");
    // The enrolment used this period's code; the next period's is accepted (clock drift window).
    await page.getByLabel(/Code from your authenticator/).fill(totpCode(secret, 1));
    await page.getByRole("button", { name: "Verify" }).click();
    await page.getByRole("heading", { name: /Overview/ }).waitFor();
    await check("overview");
    expect(await page.locator(".chart svg rect").count()).toBe(30);
    await expect(page.locator("#low-h + table").textContent()).resolves.toContain("TEA-G");
  });

  it("searches products and changes an order's status", async () => {
    await page.getByRole("link", { name: "Products" }).click();
    await page.getByLabel("Search titles").fill("tea");
    await page.getByRole("button", { name: "Search" }).click();
    await expect(page.locator("main table").textContent()).resolves.toContain("Green Tea");
    await expect(page.locator("main table").textContent()).resolves.not.toContain("Ceramic Mug");
    await page.goto(`${adminUrl}/admin/products`);
    await check("products");
    await page.getByRole("link", { name: "Ceramic Mug" }).click();
    await check("product");

    await page.getByRole("link", { name: "Orders", exact: true }).click();
    await check("orders");
    await page.getByRole("link", { name: orderId }).click();
    await page.getByRole("radio", { name: "fulfilled" }).check();
    await page.getByLabel("Note").fill("packed");
    await page.getByRole("button", { name: "Change status" }).click();
    await expect(page.locator("[data-order-status]").textContent()).resolves.toBe("fulfilled");
    expect((await api(`/api/v1/orders/${orderId}`)).body.status).toBe("fulfilled");
    await check("order-detail");
  });

  it("creates an API key that works on the API, and shows customers, webhooks and settings", async () => {
    await page.getByRole("link", { name: "Customers" }).click();
    await expect(page.locator("main").textContent()).resolves.toContain("ada@example.com");
    await check("customers");

    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByText("New API key").click();
    await page.getByLabel("Name").first().fill("catalog sync");
    await page.getByRole("checkbox", { name: "products:read" }).first().check();
    await page.getByRole("button", { name: "Create API key" }).click();
    const key = (await page.locator("[data-secret]").textContent())?.trim() ?? "";
    expect(key).toMatch(/^csk_/);
    expect((await api("/api/v1/products", { key })).status).toBe(200);
    expect((await api("/api/v1/orders", { key })).status).toBe(403);
    await check("api-keys");

    await rx.waitFor((r) => r.length >= 3);
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.locator("main table a").first().click();
    await expect(page.locator("main table").textContent()).resolves.toContain("204");
    await page.getByRole("button", { name: "Replay" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toContain("Replay queued");
    await page.getByRole("link", { name: "← Webhooks" }).click();
    await check("webhooks");

    await page.getByRole("link", { name: "Settings" }).click();
    await expect(page.locator("main").textContent()).resolves.toContain("GitOps");
    await check("settings");
  });

  it("refuses a browser outside the allow-list", async () => {
    const ctx = await browser.newContext({ extraHTTPHeaders: { "x-forwarded-for": "198.51.100.9" } });
    const p = await ctx.newPage();
    const r = await p.goto(`${adminUrl}/admin/login`);
    expect(r?.status()).toBe(403);
    await ctx.close();
  });
});
