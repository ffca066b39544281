import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { artifactsDir, launchChromium, screenshots, seriousA11yViolations } from "./support/browser.ts";
import { productBody } from "./support/harness.ts";
import { type Receiver, startReceiver } from "./support/receiver.ts";
import { startSmtpSink } from "./support/smtp-sink.ts";
import { type StoreTarget, storeTarget } from "./support/store-target.ts";

// A customer in Debian's Chromium against the real service process: browses, searches, adds to
// the cart, checks out with the Test gateway and sees the confirmation. The order is then the
// API's (GET /api/v1/orders), its OrderCreated webhook reaches a receiver verifying signatures
// with standardwebhooks, and the confirmation email reaches an SMTP sink. Every main page passes
// axe-core (no serious or critical violation), is screenshotted at 1280 and 390 px wide
// (tmp/artifacts/store/) and needs no sideways scrolling on the phone.

const SECRET = `whsec_${Buffer.from("store-browser-test-signing-key!!").toString("base64")}`;
let target: StoreTarget;
const ARTIFACTS = artifactsDir("store");
let browser: Browser;
let hooks: Receiver;
let smtp: Awaited<ReturnType<typeof startSmtpSink>>;

beforeAll(async () => {
  hooks = await startReceiver(SECRET);
  smtp = await startSmtpSink();
  [target, browser] = await Promise.all([
    storeTarget({
      CONFIG_STORE: JSON.stringify({
        name: "Northwind Goods",
        contactEmail: "help@northwind.test",
        supportPhone: "+1 555 0100",
      }),
      CONFIG_LOCALIZATION: JSON.stringify({
        defaultLanguage: "en-US",
        currency: "USD",
        dateFormat: "MM/DD/YYYY",
        tax: { pricesIncludeTax: false, defaultRatePercent: "8.25" },
      }),
      CONFIG_SHIPPING_METHODS: JSON.stringify([
        {
          name: "Ground",
          carrier: "USPS",
          zones: ["US", "CA"],
          rate: { calculation: "Flat", amount: "5.00" },
        },
        {
          name: "Priority",
          carrier: "UPS",
          zones: ["US"],
          rate: { calculation: "ByOrderTotal", amount: "10" },
        },
      ]),
      CONFIG_PAYMENT_GATEWAYS: JSON.stringify([
        { name: "Test card", type: "Card", provider: "test", mode: "Test" },
      ]),
      CONFIG_WEBHOOKS: JSON.stringify([
        { name: "shop", url: `${hooks.url}/hooks`, events: ["OrderCreated"] },
      ]),
      WEBHOOK_SHOP_SIGNING_KEY: SECRET,
      COMMERCE_WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8",
      CONFIG_EMAIL: JSON.stringify({
        smtp: { host: "127.0.0.1", port: smtp.port, security: "None" },
        fromAddress: "orders@northwind.test",
        fromName: "Northwind Goods",
      }),
    }),
    launchChromium(),
  ]);
  const api = (path: string, json?: unknown) =>
    fetch(target.apiUrl + path, {
      method: json ? "POST" : "GET",
      headers: { authorization: `Bearer ${target.apiKey}`, "content-type": "application/json" },
      body: json ? JSON.stringify(json) : undefined,
    });
  const seed = [
    productBody("Enamel Camp Mug", ["MUG-ENAMEL-WHITE", "MUG-ENAMEL-BLUE"], 1800, 12),
    productBody("Stoneware Mug", ["MUG-STONE"], 2400, 2),
    productBody("Linen Apron", ["APRON-LINEN"], 3900, 20),
    productBody("Cast Iron Skillet", ["SKILLET-10"], 4500, 0),
  ];
  for (const b of seed)
    expect(
      (await api("/api/v1/products", { ...b, description: `${b.title} for everyday use.` })).status,
    ).toBe(201);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await target?.stop();
  await hooks?.close();
  await smtp?.close();
});

async function check(page: Page, name: string): Promise<void> {
  const t0 = Date.now();
  expect(await seriousA11yViolations(page), `axe on ${name}`).toEqual([]);
  const overflow = await screenshots(page, ARTIFACTS, name);
  expect(overflow, `horizontal overflow on ${name}`).toEqual({ desktop: 0, phone: 0 });
  if (process.env.STORE_TEST_TIMING) console.log(name, Date.now() - t0, "ms");
}

describe("the store in a browser", () => {
  it("browse, search, cart, checkout with the Test gateway, confirmation; API, webhook and email agree", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await ctx.newPage();
    await page.goto(`${target.storeUrl}/`);
    await expect(page.getByRole("heading", { level: 1 })).toBeDefined();
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Northwind Goods");
    expect(await page.locator("footer").textContent()).toContain("help@northwind.test");
    await check(page, "home");

    await page.getByRole("searchbox", { name: "Search products" }).fill("mug");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/products\?q=mug/);
    const titles = await page.locator(".card .title").allTextContents();
    expect(titles.sort()).toEqual(["Enamel Camp Mug", "Stoneware Mug"]);
    await check(page, "listing");

    await page.getByRole("link", { name: /Enamel Camp Mug/ }).click();
    await page.getByRole("radio", { name: /MUG-ENAMEL-BLUE/ }).check();
    await page.getByLabel("Quantity").fill("2");
    expect(await page.locator("main").textContent()).toContain("$18.00");
    await check(page, "product");
    await page.getByRole("button", { name: "Add to cart" }).click();
    await page.waitForURL(/\/cart$/);
    expect(await page.locator(".count").textContent()).toBe("2");
    await check(page, "cart");

    await page.getByRole("link", { name: "Checkout" }).click();
    await page.getByLabel("Full name").fill("Grace Hopper");
    await page.getByLabel("Email (for the confirmation)").fill("grace@example.test");
    await page.getByLabel("Country").selectOption("US");
    await page.getByLabel("Street address").fill("1 Navy Yard Way");
    await page.getByLabel("Postal code").fill("20374");
    await page.getByLabel("City").fill("Washington");
    await page.getByLabel("State or region (optional)").fill("DC");
    await page.getByRole("radio", { name: /Priority/ }).check();
    await page.getByRole("button", { name: "Update total" }).click();
    const summary = (await page.locator("aside").textContent()) ?? "";
    expect(summary).toContain("Shipping (Priority)$3.60");
    expect(summary).toContain("$42.57");
    expect(await page.getByLabel("Full name").inputValue()).toBe("Grace Hopper"); // kept
    expect(await page.getByRole("radio", { name: /Priority/ }).isChecked()).toBe(true);
    await check(page, "checkout");
    await page.getByRole("button", { name: "Place order and pay" }).click();
    await page.waitForURL(/\/orders\/ord_/);
    const orderId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");
    const confirmation = (await page.locator("main").textContent()) ?? "";
    expect(confirmation).toContain("Thank you, your order is confirmed");
    expect(confirmation).toContain(orderId);
    // 2 × $18.00 = $36.00, shipping 10 % = $3.60, tax 8.25 % of $36.00 = $2.97: $42.57.
    expect(confirmation).toContain("$42.57");
    expect(confirmation).toMatch(/\d\d\/\d\d\/\d{4}/);
    // biome-ignore lint/performance/useDomNodeTextContent: the address's line breaks are checked too
    expect(await page.locator("[data-shipping-address]").innerText()).toBe(
      "Grace Hopper\n1 Navy Yard Way\n20374 Washington\nDC\nUnited States",
    );
    await check(page, "confirmation");

    const orders = (await (
      await fetch(`${target.apiUrl}/api/v1/orders?limit=200`, {
        headers: { authorization: `Bearer ${target.apiKey}` },
      })
    ).json()) as { data: { id: string; status: string; totalMinor: number; lines: { sku: string }[] }[] };
    const o = orders.data.find((x) => x.id === orderId);
    expect(o).toMatchObject({
      status: "paid",
      totalMinor: 4257,
      lines: [{ sku: "MUG-ENAMEL-BLUE" }],
      shippingAddress: { name: "Grace Hopper", line1: "1 Navy Yard Way", region: "DC", country: "US" },
    });

    await hooks.waitFor((r) => r.some((x) => x.body.type === "order.created" && x.body.data.id === orderId));
    const hook = hooks.received.find((x) => x.body.data.id === orderId);
    expect(hook?.verified).toBe(true);
    expect(hook?.body.data).toMatchObject({ totalMinor: 4257, currency: "USD" });

    for (let i = 0; i < 150 && !smtp.mails.some((m) => m.raw.includes(orderId)); i++)
      await new Promise((r) => setTimeout(r, 100));
    const mail = smtp.mails.find((m) => m.raw.includes(orderId));
    expect(mail?.to).toEqual(["grace@example.test"]);
    expect(mail?.raw).toContain(`Subject: Order ${orderId} confirmed`);
    expect(mail?.raw).toMatch(/Ship to:\r?\n {2}Grace Hopper\r?\n {2}1 Navy Yard Way/);
    await ctx.close();
  }, 90_000);

  it("a customer registers and sees the account page with the order history", async () => {
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await ctx.newPage();
    await page.goto(`${target.storeUrl}/account`);
    await page.waitForURL(/sign-in/);
    await page.getByRole("link", { name: "Create an account" }).click();
    await page.getByLabel("Full name").fill("Alan Turing");
    await page.getByLabel("Email").fill("alan@example.test");
    await page.getByLabel(/Password/).fill("enigma machine 1940");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL(/\/account$/);
    await page.goto(`${target.storeUrl}/products?q=apron`);
    await page.getByRole("link", { name: /Linen Apron/ }).click();
    await page.getByRole("button", { name: "Add to cart" }).click();
    await page.getByRole("link", { name: "Checkout" }).click();
    await page.getByLabel("Country").selectOption("CA");
    await page.getByLabel("Street address").fill("2 King's College Rd");
    await page.getByLabel("Postal code").fill("M5S 3G4");
    await page.getByLabel("City").fill("Toronto");
    await page.getByRole("button", { name: "Place order and pay" }).click();
    await page.waitForURL(/\/orders\/ord_/);
    await page.getByRole("link", { name: "Account" }).click();
    const history = (await page.locator("main").textContent()) ?? "";
    expect(history).toContain("Alan Turing");
    expect(history).toContain("paid");
    expect(history).toContain("$47.22"); // 39.00 + 5.00 + 8.25 % tax (3.22)
    await check(page, "account");
    await ctx.close();
  }, 90_000);
});
