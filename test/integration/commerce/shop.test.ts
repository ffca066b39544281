import { randomBytes } from "node:crypto";
import AxeBuilder from "@axe-core/playwright";
import { TOTP } from "otpauth";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterEnv, kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import {
  type HttpSink,
  type SmtpSink,
  startHttpSink,
  startSmtpSink,
} from "../../support/notification-sinks.ts";
import { skipReason } from "../addons/support.ts";
import { apiKey, applyPlatform, waitPhase } from "../scaleplatform/helpers.ts";
import { usePlatformOperator } from "../scaleplatform/operator.ts";
import { getFrom, launchThroughIngress, shopScreenshots } from "./shop-browser.ts";
import { api } from "./support.ts";

// The store and the admin of a ScalePlatform in Debian's Chromium, through Traefik over TLS with
// the platform's real host names: a customer's purchase seen by the admin, the API, a webhook
// receiver and an SMTP sink on the host; the admin's first sign-in, TOTP, CSRF and IP allow-list.

const reason = await skipReason("dns", "storage", "ingress", "cert-manager");
const NAME = "shop";
const HOST = "shop.commerce.test";
const ADMIN = `admin.${HOST}`;
const API = `api.${HOST}`;
const NEW_PASSWORD = "correct horse battery staple 7";

/** The platform: SMTP and webhook on the host, the admin open to loopback clients only. */
function spec(smtpPort: number, hookUrl: string): Record<string, unknown> {
  return {
    plan: "Standard",
    domains: { platform: HOST },
    database: { pvcRetention: "Delete" },
    store: { name: "Harbour Provisions", contactEmail: "hello@harbour.test", supportPhone: "+1 555 0142" },
    localization: { defaultLanguage: "en-US", currency: "USD", dateFormat: "MM/DD/YYYY" },
    shippingMethods: [
      { name: "ground", carrier: "manual", zones: ["US"], rate: { calculation: "Flat", amount: "5.00" } },
    ],
    paymentGateways: [{ name: "test-card", type: "Card", provider: "test", mode: "Test" }],
    email: {
      smtp: { host: clusterEnv().HOST_IP, port: smtpPort, security: "None" },
      fromAddress: "orders@harbour.test",
    },
    webhooks: [
      {
        name: "orders",
        url: hookUrl,
        events: ["OrderCreated"],
        signingSecretRef: { name: "hooks", key: "signing" },
      },
    ],
    security: { adminAllowedCIDRs: ["127.0.0.1/32"] },
  };
}

/** The TOTP code of a base32 secret, `offsetSteps` periods from now (RFC 6238 as the admin uses it). */
const totpCode = (secret: string, offsetSteps = 0) =>
  new TOTP({ secret, digits: 6, period: 30, algorithm: "SHA1" }).generate({
    timestamp: Date.now() + offsetSteps * 30_000,
  });

/** axe-core violations of impact serious or critical (WCAG 2.x A/AA). */
async function seriousViolations(page: Page): Promise<string[]> {
  const r = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return r.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/** axe, screenshots at 1280 and 390 px, and no sideways scrolling on either. */
async function check(page: Page, name: string): Promise<void> {
  expect(await seriousViolations(page), `axe on ${name}`).toEqual([]);
  expect(await shopScreenshots(page, name), `sideways scrolling on ${name}`).toEqual({
    desktop: 0,
    phone: 0,
  });
}

describe.skipIf(reason)(
  "the store and admin of a ScalePlatform in Chromium, through Traefik over TLS",
  () => {
    const ns = useNamespace("shop", { "pod-security.kubernetes.io/enforce": "restricted" });
    usePlatformOperator(ns);
    const signingKey = `whsec_${randomBytes(24).toString("base64")}`;
    let smtp: SmtpSink;
    let hooks: HttpSink;
    let browser: Browser;
    let key = "";
    let orderId = "";

    beforeAll(async () => {
      // Both sinks listen on the host's end of the node link, which pods reach.
      smtp = await startSmtpSink(clusterEnv().HOST_IP);
      hooks = await startHttpSink(signingKey, clusterEnv().HOST_IP);
      await kubectl(["create", "secret", "generic", "hooks", `--from-literal=signing=${signingKey}`], {
        namespace: ns.name,
      });
      // Traefik runs on the host's loopback: the client address it reports for the browser is
      // 127.0.0.1, while its own connections to the pods come from the node link's host address.
      const r = await applyPlatform(ns.name, NAME, spec(smtp.port, `${hooks.url}/hooks`));
      if (r.code !== 0) throw new Error(r.stderr);
      await waitPhase(ns.name, NAME, "Running", 300_000);
      key = await apiKey(ns.name, NAME);
      // Running says the pods are ready; the Ingress controller learns their endpoints a moment
      // later (until then it has no route and answers 404).
      await waitFor(
        async () =>
          (await api(API, "/api/v1/products", key).catch(() => undefined))?.status === 200 || undefined,
        { timeoutMs: 60_000, intervalMs: 500, what: "the API served through the Ingress controller" },
      );
      for (const [title, sku, price] of [
        ["Enamel Camp Mug", "MUG-ENAMEL", 1800],
        ["Stoneware Mug", "MUG-STONE", 2400],
        ["Linen Apron", "APRON-LINEN", 3900],
      ] as const) {
        const body = {
          title,
          description: `${title} for everyday use.`,
          variants: [
            { sku, title: sku, priceMinor: price, inventory: { available: 10, lowStockThreshold: 2 } },
          ],
        };
        expect((await api(API, "/api/v1/products", key, { json: body })).status).toBe(201);
      }
      browser = await launchThroughIngress([HOST, ADMIN]);
    }, 420_000);

    afterAll(async () => {
      await browser?.close();
      await smtp?.close();
      await hooks?.close();
    });

    it("a customer browses, searches, checks out with the Test gateway; API, admin, webhook and email agree", async () => {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await ctx.newPage();
      page.setDefaultTimeout(15_000);
      const home = await page.goto(`https://${HOST}/`);
      expect(home?.status()).toBe(200);
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Harbour Provisions");
      expect(await page.locator("footer").textContent()).toContain("hello@harbour.test");
      await check(page, "store-home");

      await page.getByRole("searchbox", { name: "Search products" }).fill("mug");
      await page.keyboard.press("Enter");
      await page.waitForURL(/\/products\?q=mug/);
      expect((await page.locator(".card .title").allTextContents()).sort()).toEqual([
        "Enamel Camp Mug",
        "Stoneware Mug",
      ]);
      await check(page, "store-listing");

      await page.getByRole("link", { name: /Stoneware Mug/ }).click();
      await page.getByLabel("Quantity").fill("2");
      await check(page, "store-product");
      await page.getByRole("button", { name: "Add to cart" }).click();
      await page.waitForURL(/\/cart$/);
      expect(await page.locator(".count").textContent()).toBe("2");
      await check(page, "store-cart");

      await page.getByRole("link", { name: "Checkout" }).click();
      await page.getByLabel("Full name").fill("Mary Jackson");
      await page.getByLabel("Email (for the confirmation)").fill("mary@example.test");
      await page.getByLabel("Country").selectOption("US");
      await page.getByLabel("Street address").fill("4800 Oak Grove Dr");
      await page.getByLabel("Postal code").fill("91109");
      await page.getByLabel("City").fill("Pasadena");
      await page.getByLabel("State or region (optional)").fill("CA");
      await check(page, "store-checkout");
      await page.getByRole("button", { name: "Place order and pay" }).click();
      await page.waitForURL(/\/orders\/ord_/);
      orderId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");
      const confirmation = (await page.locator("main").textContent()) ?? "";
      expect(confirmation).toContain("Thank you, your order is confirmed");
      expect(confirmation).toContain(orderId);
      // 2 × $24.00 + $5.00 ground shipping, no tax configured.
      expect(confirmation).toContain("$53.00");
      await check(page, "store-confirmation");
      await ctx.close();

      const listed = (await (await api(API, "/api/v1/orders?limit=200", key)).json()) as {
        data: { id: string; status: string; totalMinor: number; shippingAddress: unknown }[];
      };
      expect(listed.data.find((o) => o.id === orderId)).toMatchObject({
        status: "paid",
        totalMinor: 5300,
        shippingAddress: {
          name: "Mary Jackson",
          line1: "4800 Oak Grove Dr",
          city: "Pasadena",
          region: "CA",
          postalCode: "91109",
          country: "US",
        },
      });

      const hook = await waitFor(
        () => hooks.posts.find((p) => (JSON.parse(p.body) as { data: { id: string } }).data.id === orderId),
        { timeoutMs: 60_000, what: "OrderCreated of the order at the receiver" },
      );
      expect(hook.verified).toBe(true);
      expect(JSON.parse(hook.body)).toMatchObject({
        type: "order.created",
        data: { id: orderId, totalMinor: 5300 },
      });

      const mail = await waitFor(() => smtp.mails.find((m) => m.subject.includes(orderId)), {
        timeoutMs: 60_000,
        what: "the confirmation email at the SMTP sink",
      });
      expect(mail.to).toEqual(["mary@example.test"]);
      expect(mail.subject).toBe(`Order ${orderId} confirmed`);
    }, 180_000);

    it("the admin signs in with the Secret's credentials, changes the password, enrols TOTP and finds the order", async () => {
      expect(orderId, "the order of the previous test").not.toBe("");
      const secret = await kubectl(["get", "secret", `${NAME}-credentials`, "-o", "json"], {
        namespace: ns.name,
      });
      const data = (JSON.parse(secret.stdout) as { data: Record<string, string> }).data;
      const [user, password] = ["admin-username", "admin-password"].map((k) =>
        Buffer.from(data[k] ?? "", "base64").toString("utf8"),
      ) as [string, string];
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      page.setDefaultTimeout(15_000);
      await page.goto(`https://${ADMIN}/`);
      await page.waitForURL(`https://${ADMIN}/admin/login`);
      await check(page, "admin-login");
      await page.getByLabel("Username").fill(user);
      await page.getByLabel("Password", { exact: true }).fill(password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "Choose a new password" }).waitFor();
      await page.getByLabel("New password", { exact: true }).fill(NEW_PASSWORD);
      await page.getByLabel("Repeat the new password").fill(NEW_PASSWORD);
      await page.getByRole("button", { name: "Save password" }).click();
      await page.getByRole("heading", { name: "Set up two-factor authentication" }).waitFor();
      await check(page, "admin-enrolment");
      const totp = (await page.locator("[data-totp-secret]").getAttribute("data-totp-secret")) ?? "";
      await page.getByLabel("Six-digit code").fill(totpCode(totp));
      await page.getByRole("button", { name: "Confirm" }).click();
      await page.getByRole("heading", { name: "Recovery codes" }).waitFor();
      expect(await page.locator("[data-recovery-code]").count()).toBe(10);

      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByLabel("Username").fill(user);
      await page.getByLabel("Password", { exact: true }).fill(NEW_PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "Two-factor authentication" }).waitFor();
      // A code ten periods away is outside the ±1-step window: refused.
      await page.getByLabel(/Code from your authenticator/).fill(totpCode(totp, 10));
      await page.getByRole("button", { name: "Verify" }).click();
      expect(await page.getByRole("alert").textContent()).toContain("not valid");
      // Enrolment used this period's code (each period is accepted once); the next one is in the window.
      await page.getByLabel(/Code from your authenticator/).fill(totpCode(totp, 1));
      await page.getByRole("button", { name: "Verify" }).click();
      await page.getByRole("heading", { name: /Overview/ }).waitFor();
      await check(page, "admin-overview");

      await page.getByRole("link", { name: "Orders", exact: true }).click();
      await check(page, "admin-orders");
      await page.getByRole("link", { name: orderId }).click();
      expect(await page.locator("[data-order-status]").textContent()).toBe("paid");
      const detail = (await page.locator("main").textContent()) ?? "";
      expect(detail).toContain("MUG-STONE");
      expect(detail).toContain("$53.00");
      expect(await page.locator("[data-shipping-address]").textContent()).toBe(
        "Mary Jackson4800 Oak Grove Dr91109 PasadenaCAUnited States",
      );
      await check(page, "admin-order-detail");

      // The same form posted without its CSRF token is refused and changes nothing.
      await page.getByRole("radio", { name: "fulfilled" }).check();
      await page
        .locator('form:has(button:text("Change status")) input[name="_csrf"]')
        .evaluate((e) => e.remove());
      const [refused] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === "POST"),
        page.getByRole("button", { name: "Change status" }).click(),
      ]);
      expect(refused.status()).toBe(403);
      const order = (await (await api(API, `/api/v1/orders/${orderId}`, key)).json()) as { status: string };
      expect(order.status).toBe("paid");
      await page.context().close();
    }, 180_000);

    it("outside spec.security.adminAllowedCIDRs the admin is refused, a forged X-Forwarded-For does not help", async () => {
      // The allow-list is 127.0.0.1/32 and the app's peer is Traefik (the node link's host
      // address), so the admin working at all shows the app checks the client Traefik reports.
      expect(await getFrom("127.0.0.1", ADMIN, "/admin/login")).toBe(200);
      // Another loopback address is outside: refused, whatever X-Forwarded-For it sends (Traefik
      // trusts no client's forwarding headers and writes its own; the app takes the leftmost).
      expect(await getFrom("127.0.0.2", ADMIN, "/admin/login")).toBe(403);
      expect(await getFrom("127.0.0.2", ADMIN, "/admin/login", { "x-forwarded-for": "127.0.0.1" })).toBe(403);
      // The store host is not affected.
      expect(await getFrom("127.0.0.2", HOST, "/")).toBe(200);
    });
  },
);
