import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { body, type Service } from "./support/harness.ts";
import { StoreClient, text } from "./support/store-client.ts";
import { startStore } from "./support/store-fixture.ts";

// Store customer accounts over real HTTP: registration, sign-in and out, the order history, and
// what a guest or a stranger may not do with someone else's email.

let svc: Service;
let base = "";
let ids: Record<string, string> = {};

beforeAll(async () => {
  ({ svc, base, ids } = await startStore());
});
afterAll(() => svc?.close());

describe("customer accounts", () => {
  it("registers, signs out and in (rotating the session), orders and sees the order history", async () => {
    const c = new StoreClient(base);
    await c.get("/account/register");
    const weak = await c.post("/account/register", {
      name: "Ada",
      email: "ada@example.test",
      password: "short",
      next: "/account",
    });
    expect(text(weak.html)).toContain("Wählen Sie ein Passwort mit mindestens 10 Zeichen.");
    const reg = await c.post("/account/register", {
      name: "Ada",
      email: "ada@example.test",
      password: "correct horse battery",
      next: "/account",
    });
    expect(reg.location).toBe("/account");
    const acct = await c.get("/account");
    expect(text(acct.html)).toContain("Angemeldet als Ada");
    expect(text(acct.html)).toContain("Noch keine Bestellungen.");
    await c.post("/account/sign-out", {});
    expect((await c.get("/account")).location).toBe("/account/sign-in?next=/account");
    await c.get("/account/sign-in");
    const wrong = await c.post("/account/sign-in", {
      email: "ada@example.test",
      password: "wrong password",
      next: "/account",
    });
    expect(wrong.status).toBe(401);
    const before = c.cookies.get("store_sid");
    const evil = await c.post("/account/sign-in", {
      email: "ADA@example.test",
      password: "correct horse battery",
      next: "//evil.test/",
    });
    expect(evil.location).toBe("/account"); // no open redirect
    expect(c.cookies.get("store_sid")).not.toBe(before);
    // An order while signed in lands in the history.
    const prod = await c.get(`/products/${ids["Green Tea"]}`);
    const variantId = prod.html.match(/name="variantId" value="([^"]+)"/)?.[1] ?? "";
    await c.post("/cart/add", { variantId, quantity: "3" });
    const co = await c.get("/checkout");
    expect(text(co.html)).toContain("Sie bestellen als Ada");
    const done = await c.post("/checkout", {
      country: "AT",
      line1: "Ring 1",
      postalCode: "1010",
      city: "Wien",
      shippingMethod: "standard",
      gateway: "card",
    });
    expect(done.status).toBe(303);
    const hist = text((await c.get("/account")).html);
    expect(hist).toMatch(/\d\d\.\d\d\.\d{4}/); // the configured date format
    expect(hist).toContain("bezahlt"); // the status in the catalog's words
    expect(hist).toContain("18,40 €");
    // A guest cannot order as a registered customer, nor register a known email.
    const g = new StoreClient(base);
    await g.get(`/products/${ids["Green Tea"]}`);
    await g.post("/cart/add", { variantId, quantity: "1" });
    await g.get("/checkout");
    const as = await g.post("/checkout", {
      name: "X",
      email: "ada@example.test",
      country: "DE",
      line1: "Ring 1",
      postalCode: "10115",
      city: "Berlin",
      shippingMethod: "standard",
      gateway: "card",
    });
    expect(text(as.html)).toContain("Melden Sie sich an, um damit zu bestellen.");
    // A customer known from an earlier guest order (here: created through the API).
    await svc.call("/api/v1/customers", { method: "POST", json: { email: "eve@example.test", name: "Eve" } });
    await g.get("/account/register");
    const dup = await g.post("/account/register", {
      name: "X",
      email: "eve@example.test",
      password: "0123456789ab",
      next: "/account",
    });
    expect(text(dup.html)).toContain("ist dem Shop bereits bekannt");
    const customers = await body(await svc.call("/api/v1/customers?email=ada@example.test"));
    expect(customers.data).toHaveLength(1);
    // Password guessing is bounded per email and minute: of 11 quick guesses at least one is
    // refused, even if a minute window ends in between.
    const guesser = new StoreClient(base);
    await guesser.get("/account/sign-in");
    const pages = [];
    for (let i = 0; i < 11; i++)
      pages.push(
        await guesser.post("/account/sign-in", { email: "ada@example.test", password: `guess ${i}` }),
      );
    expect(pages.every((p) => p.status === 401 || p.status === 429)).toBe(true);
    const limited = pages.find((p) => p.status === 429);
    expect(limited?.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(text(limited?.html ?? "")).toMatch(/Zu viele Anmeldeversuche .* in \d+ Sekunden? erneut/);
  });
});
