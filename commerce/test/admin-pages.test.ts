import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_ENV, type AdminClient, signedInClient } from "./support/admin.ts";
import { body, productBody, type Service, startService } from "./support/harness.ts";

// The admin's pages over HTTP, signed in: API keys and OAuth clients, products, orders,
// customers, webhooks and settings; every change checked through the API.

let svc: Service;
let a: AdminClient;

beforeAll(async () => {
  svc = await startService(ADMIN_ENV);
  a = await signedInClient(svc.url);
});
afterAll(async () => svc?.close());

describe("admin pages", () => {
  it("creates an API key that then works on /api/v1/products", async () => {
    const page = await a.get("/admin/credentials");
    expect(page.status).toBe(200);
    // Signed in, a form without its token (a cross-site post) still changes nothing.
    const forged = await a.post(
      "/admin/credentials/api-keys",
      { name: "forged", scopes: ["*"] },
      { csrf: false },
    );
    expect(forged.status).toBe(403);
    expect((await body(await svc.call("/api/v1/api-keys"))).data).toEqual([]);
    const r = await a.post("/admin/credentials/api-keys", { name: "reporting", scopes: ["products:read"] });
    expect(r.status).toBe(201);
    const key = /data-secret[^>]*>(csk_[A-Za-z0-9]+)</.exec(r.html)?.[1];
    expect(key).toBeTruthy();
    expect((await svc.call("/api/v1/products", { key })).status).toBe(200);
    expect((await svc.call("/api/v1/orders", { key })).status).toBe(403);
    // Shown once: the list shows the prefix only.
    expect((await a.get("/admin/credentials")).html).not.toContain(key);
    const id = /action="\/admin\/credentials\/api-keys\/([^/]+)\/revoke"/.exec(
      (await a.get("/admin/credentials")).html,
    )?.[1];
    expect((await a.post(`/admin/credentials/api-keys/${id}/revoke`, {})).status).toBe(303);
    expect((await svc.call("/api/v1/products", { key })).status).toBe(401);
  });

  it("creates, finds and restocks a product", async () => {
    await a.get("/admin/products");
    const r = await a.post("/admin/products", {
      title: "Blue Mug",
      sku: "MUG-BLUE",
      price: "12.50",
      stock: "3",
      lowStockThreshold: "5",
      status: "active",
    });
    expect(r.status).toBe(303);
    const id = /\/admin\/products\/([^?]+)/.exec(r.location ?? "")?.[1];
    const api = await body(await svc.call(`/api/v1/products/${id}`));
    expect(api.variants[0]).toMatchObject({ sku: "MUG-BLUE", priceMinor: 1250 });
    expect((await a.get("/admin/products?q=blue")).html).toContain("Blue Mug");
    expect((await a.get("/admin/products?q=nothing-like-it")).html).not.toContain("Blue Mug");
    expect((await a.get("/admin/")).html).toContain("MUG-BLUE"); // low stock
    const detail = await a.get(`/admin/products/${id}`);
    expect(detail.status).toBe(200);
    const adj = await a.post(`/admin/products/${id}/stock`, {
      variantId: api.variants[0].id,
      delta: "7",
      reason: "delivery",
    });
    expect(adj.status).toBe(303);
    const level = await body(await svc.call(`/api/v1/inventory/${api.variants[0].id}`));
    expect(level.available).toBe(10);
  });

  it("pages through products with the API's cursors", async () => {
    for (let i = 0; i < 26; i++) {
      await svc.call("/api/v1/products", {
        method: "POST",
        json: productBody(`Zebra ${String(i).padStart(2, "0")}`, [`ZEB-${i}`]),
      });
    }
    const first = await a.get("/admin/products?q=zebra");
    expect(first.html).toContain("Zebra 00");
    expect(first.html).not.toContain("Zebra 25");
    const next = /href="(\/admin\/products\?[^"]*cursor=[^"]+)">Next page/
      .exec(first.html)?.[1]
      ?.replace(/&amp;/g, "&");
    expect(next).toBeTruthy();
    const second = await a.get(next!);
    expect(second.html).toContain("Zebra 25");
    expect(second.html).not.toContain("Zebra 00");
    expect(second.html).not.toContain("Next page");
  });

  it("changes an order's status and refunds it", async () => {
    await svc.call("/api/v1/products", { method: "POST", json: productBody("Tea", ["TEA-1"], 800) });
    const order = await body(
      await svc.call("/api/v1/orders", {
        method: "POST",
        json: {
          lines: [{ sku: "TEA-1", quantity: 2 }],
          shippingAddress: {
            name: "Ada Lovelace",
            line1: "12 St James's Square",
            city: "London",
            postalCode: "SW1Y 4JH",
            country: "GB",
          },
        },
      }),
    );
    expect((await a.get("/admin/orders")).html).toContain(order.id);
    const page = await a.get(`/admin/orders/${order.id}`);
    // The shipping address, one line each.
    expect(page.html).toContain(
      `data-shipping-address="true">Ada Lovelace<br/>12 St James's Square<br/>SW1Y 4JH London<br/>United Kingdom</address>`,
    );
    expect(page.html).toContain('value="paid"');
    expect(
      (await a.post(`/admin/orders/${order.id}/status`, { to: "paid", note: "bank transfer" })).status,
    ).toBe(303);
    expect((await body(await svc.call(`/api/v1/orders/${order.id}`))).status).toBe("paid");
    expect((await a.post(`/admin/orders/${order.id}/status`, { to: "refunded" })).status).toBe(303);
    expect((await body(await svc.call(`/api/v1/orders/${order.id}`))).status).toBe("refunded");
    // A change the order does not allow is refused with the API's reason.
    expect((await a.post(`/admin/orders/${order.id}/status`, { to: "shipped" })).status).toBe(422);
    expect((await a.get("/admin/")).status).toBe(200);
  });

  it("shows customers, webhooks and read-only settings", async () => {
    await svc.call("/api/v1/customers", { method: "POST", json: { email: "ada@example.com", name: "Ada" } });
    expect((await a.get("/admin/customers?q=ada")).html).toContain("ada@example.com");
    expect((await a.get("/admin/webhooks")).status).toBe(200);
    const settings = await a.get("/admin/settings");
    expect(settings.html).toContain("GitOps");
    expect(settings.html).toContain("Test Shop");
  });

  it("creates and revokes an OAuth client whose secret works once shown", async () => {
    await a.get("/admin/credentials");
    const r = await a.post("/admin/credentials/oauth-clients", { name: "erp", scopes: ["orders:read"] });
    expect(r.status).toBe(201);
    const secret = /data-secret[^>]*>([A-Za-z0-9]+)</.exec(r.html)?.[1] ?? "";
    const clientId = /Client ID: <code>(cli_[A-Za-z0-9]+)</.exec(r.html)?.[1] ?? "";
    const token = await fetch(`${svc.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: clientId,
        client_secret: secret,
      }),
    });
    expect(token.status).toBe(200);
    expect((await a.post("/admin/credentials/oauth-clients", { name: "no scopes" })).html).toContain(
      "Choose at least one scope",
    );
  });
});
