import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { body, type Service } from "./support/harness.ts";
import { StoreClient, text } from "./support/store-client.ts";
import { startStore } from "./support/store-fixture.ts";

// The store frontend over real HTTP, as a browser without JavaScript uses it: pages, search and
// pages of the listing, cart, checkout with the Test gateway (accounts: store-accounts.test.ts). The store answers on the
// platform host (localhost here), the API on the API host (127.0.0.1).

let svc: Service;
let base = "";
let ids: Record<string, string> = {};

beforeAll(async () => {
  ({ svc, base, ids } = await startStore());
});
afterAll(() => svc?.close());

describe("store pages", () => {
  it("home shows the store's name and contact details, localized, under a strict CSP", async () => {
    const c = new StoreClient(base);
    const p = await c.get("/");
    expect(p.status).toBe(200);
    expect(p.html).toMatch(/^<!doctype html><html lang="de">/);
    const t = text(p.html);
    expect(t).toContain("Kaffee Haus");
    expect(t).toContain("hallo@kaffee.test");
    expect(t).toContain("+49 30 1234567");
    expect(t).toContain("Hauptstr. 1, 10115 Berlin, Deutschland");
    expect(t).toContain("12,50 €"); // German number format, euro
    // The texts come from the German catalog (defaultLanguage "de").
    expect(p.html).toContain("<title>Kaffee Haus</title>");
    expect(t).toContain("Zum Inhalt springen");
    expect(t).toContain("Alle Produkte ansehen");
    expect(t).toContain("E-Mail: hallo@kaffee.test");
    expect(p.html).toContain('placeholder="Produkte suchen"');
    expect(t).not.toMatch(/Skip to content|Shop all products|Sign in/);
    const csp = p.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(p.html).not.toMatch(/<script|style=/);
    const css = p.html.match(/href="(\/assets\/store-[0-9a-f]+\.css)"/)?.[1];
    const r = await fetch(base + css);
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toContain("immutable");
  });

  it("is served on the platform host only; the API is not", async () => {
    expect((await fetch(`${svc.url}/products`)).status).toBe(404); // API host
    expect((await fetch(`${base}/api/v1/products`, { headers: { authorization: "Bearer x" } })).status).toBe(
      404,
    );
  });

  it("searches through the full-text index and pages the listing", async () => {
    const c = new StoreClient(base);
    const t = text((await c.get("/products?q=mug")).html);
    expect(t).toContain("Blue Mug");
    expect(t).toContain("Red Mug");
    expect(t).not.toContain("Green Tea");
    expect(text((await c.get("/products?q=gre%20te")).html)).toContain("Green Tea"); // word prefixes
    expect(text((await c.get("/products?q=nothing-like-it")).html)).toContain(
      "Keine Produkte passen zu Ihrer Suche.",
    );
    const p1 = await c.get("/products");
    expect((p1.html.match(/class="card"/g) ?? []).length).toBe(24);
    expect(p1.html).not.toContain('rel="prev"');
    const nextLink = p1.html.match(/href="([^"]+)" rel="next"/)?.[1]?.replaceAll("&amp;", "&") ?? "";
    const p2 = await c.get(nextLink);
    expect(text(p2.html)).toContain("Zz Item 24");
    expect(text(p2.html)).not.toContain("Blue Mug");
    expect(p2.html).not.toContain('rel="next"');
    const prevLink = p2.html.match(/href="([^"]+)" rel="prev"/)?.[1]?.replaceAll("&amp;", "&") ?? "";
    const back = await c.get(prevLink);
    expect(text(back.html)).toContain("Blue Mug");
    expect((back.html.match(/class="card"/g) ?? []).length).toBe(24);
    expect(back.html).not.toContain('rel="prev"');
    expect((await c.get("/products?after=garbage")).status).toBe(200);
    // The search predicate is answered from the GIN index (sequential scans off: the table is tiny).
    const plan = await svc.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const r = await sql<{ "QUERY PLAN": string }>`explain select id from products
        where to_tsvector('simple', products.title || ' ' || coalesce(products.description, '')) @@ to_tsquery('simple', 'mug:*')`.execute(
        trx,
      );
      return r.rows.map((x) => x["QUERY PLAN"]).join("\n");
    });
    expect(plan).toContain("products_search");
  });

  it("shows a product's variants with price and stock; sold-out variants cannot be chosen", async () => {
    const c = new StoreClient(base);
    const p = await c.get(`/products/${ids["Blue Mug"]}`);
    const t = text(p.html);
    expect(t).toContain("MUG-BLUE-S");
    expect(t).toContain("Nur noch 3 verfügbar");
    expect(t).toContain("Preise inkl. 19 % MwSt.");
    const red = await c.get(`/products/${ids["Red Mug"]}`);
    expect(text(red.html)).toContain("Ausverkauft");
    expect(red.html).toMatch(/<input[^>]*disabled[^>]*>|<button[^>]*disabled/);
    expect((await c.get("/products/prd_nope")).status).toBe(404);
  });

  it("refuses a form without its CSRF token", async () => {
    const c = new StoreClient(base);
    await c.get(`/products/${ids["Green Tea"]}`);
    const r = await c.post("/cart/add", { _csrf: null, variantId: "x", quantity: "1" });
    expect(r.status).toBe(403);
    const forged = await c.post("/cart/add", { _csrf: "forged", variantId: "x", quantity: "1" });
    expect(forged.status).toBe(403);
  });
});

/** The street, postal code and city of the checkout form. */
const ADDRESS = { line1: "Hauptstr. 5", postalCode: "10115", city: "Berlin" };

describe("cart and checkout", () => {
  it("a guest adds to the cart, checks out with the Test gateway and gets the same order the API sees", async () => {
    const c = new StoreClient(base);
    const prod = await c.get(`/products/${ids["Blue Mug"]}`);
    const variantId = prod.html.match(/name="variantId" value="([^"]+)"/)?.[1] ?? "";
    expect((await c.post("/cart/add", { variantId, quantity: "2" })).location).toBe("/cart");
    const cookie = c.cookies.get("store_sid");
    expect(cookie).toBeTruthy();
    const cart = await c.get("/cart");
    expect(text(cart.html)).toContain("25,00 €");
    expect(text(cart.html)).toMatch(/Warenkorb 2/);
    const co = await c.get("/checkout");
    expect(text(co.html)).toContain("4,90 €");
    expect(text(co.html)).toContain("Österreich"); // zones as country names in the store's language
    const bad = await c.post("/checkout", {
      name: "Eve",
      email: "not-an-email",
      country: "DE",
      ...ADDRESS,
      shippingMethod: "standard",
      gateway: "card",
    });
    expect(bad.status).toBe(422);
    expect(text(bad.html)).toContain("Geben Sie eine gültige E-Mail-Adresse ein.");
    const far = await c.post("/checkout", {
      name: "Eve",
      email: "eve@example.test",
      country: "FR",
      ...ADDRESS,
      shippingMethod: "standard",
      gateway: "card",
    });
    expect(text(far.html)).toContain("standard liefert nicht nach Frankreich.");
    const noStreet = await c.post("/checkout", {
      name: "Eve",
      email: "eve@example.test",
      country: "DE",
      ...ADDRESS,
      line1: " ",
      shippingMethod: "standard",
      gateway: "card",
    });
    expect(noStreet.status).toBe(422);
    expect(text(noStreet.html)).toContain("Geben Sie Straße und Hausnummer ein.");
    expect(noStreet.html).toContain('value="10115"'); // the form keeps what was typed
    const done = await c.post("/checkout", {
      name: "Eve",
      email: "eve@example.test",
      country: "DE",
      ...ADDRESS,
      line2: "3. OG",
      shippingMethod: "standard",
      gateway: "card",
      simulate: "succeed",
    });
    expect(done.status).toBe(303);
    const orderId = decodeURIComponent(done.location?.replace("/orders/", "") ?? "");
    const conf = await c.get(`/orders/${encodeURIComponent(orderId)}`);
    expect(text(conf.html)).toContain("Ihre Bestellung ist bestätigt");
    expect(text(conf.html)).toContain("29,90 €");
    expect(text(conf.html)).toContain("Lieferadresse Eve Hauptstr. 5 3. OG 10115 Berlin Deutschland");
    expect(text((await c.get("/cart")).html)).toContain("Ihr Warenkorb ist leer");
    const api = await body(await svc.call("/api/v1/orders?limit=200"));
    const o = api.data.find((x: { id: string }) => x.id === orderId);
    expect(o).toMatchObject({
      status: "paid",
      totalMinor: 2990,
      shippingMinor: 490,
      taxMinor: 399,
      currency: "EUR",
    });
    expect(o.lines).toMatchObject([{ sku: "MUG-BLUE-S", quantity: 2 }]);
    expect(o.shippingAddress).toEqual({
      name: "Eve",
      line1: "Hauptstr. 5",
      line2: "3. OG",
      city: "Berlin",
      postalCode: "10115",
      country: "DE",
    });
    const ev = await svc.db
      .selectFrom("orderStatusHistory")
      .select("toStatus")
      .where("orderId", "=", orderId)
      .execute();
    expect(ev.map((e) => e.toStatus)).toEqual(["pending", "paid"]);
    // Another session does not see this order.
    expect((await new StoreClient(base).get(`/orders/${encodeURIComponent(orderId)}`)).status).toBe(404);
  });

  it("refuses more than the stock in the shopper's language", async () => {
    const c = new StoreClient(base);
    const prod = await c.get(`/products/${ids["Blue Mug"]}`);
    const large =
      [...prod.html.matchAll(/name="variantId" value="([^"]+)"/g)].map((m) => m[1] ?? "")[1] ?? "";
    await c.post("/cart/add", { variantId: large, quantity: "5" });
    expect(text((await c.get("/cart")).html)).toContain("Nur 3 verfügbar");
    await c.get("/checkout");
    const r = await c.post("/checkout", {
      name: "Max",
      email: "max@example.test",
      country: "DE",
      ...ADDRESS,
      shippingMethod: "standard",
      gateway: "card",
    });
    expect(r.status).toBe(422);
    expect(text(r.html)).toContain("Ihr Warenkorb hat sich geändert");
  });

  it("a declined payment leaves the order pending and payable again", async () => {
    const c = new StoreClient(base);
    const prod = await c.get(`/products/${ids["Green Tea"]}`);
    const variantId = prod.html.match(/name="variantId" value="([^"]+)"/)?.[1] ?? "";
    await c.post("/cart/add", { variantId, quantity: "1" });
    await c.get("/checkout");
    const done = await c.post("/checkout", {
      name: "Dan",
      email: "dan@example.test",
      country: "DE",
      ...ADDRESS,
      shippingMethod: "express",
      gateway: "card",
      simulate: "decline",
    });
    expect(done.location).toMatch(/\?payment=declined$/);
    const page = await c.get(done.location ?? "");
    expect(text(page.html)).toContain("Die Zahlung wurde abgelehnt");
    const retry = await c.post(`${done.location?.split("?")[0]}/pay`, {
      gateway: "card",
      simulate: "succeed",
    });
    expect(retry.status).toBe(303);
    expect(text((await c.get(retry.location ?? "")).html)).toContain("Ihre Bestellung ist bestätigt");
  });
});
