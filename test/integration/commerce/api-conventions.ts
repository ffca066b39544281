import { expect, it } from "vitest";
import type { Order, Page, Product } from "./api-resources.ts";
import { API, type CommercePlatform } from "./platform.ts";
import { api, apiJson, gql } from "./support.ts";

// The API's conventions (problem details naming the field, keyset pages under inserts,
// Idempotency-Key replay), and analytics checked against sums the test computes itself from the
// orders it reads back.

const SOLD = new Set(["paid", "fulfilled", "shipped", "delivered"]);
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

export function conventionTests(p: CommercePlatform): void {
  const rest = <T>(path: string, status: number, opts: Parameters<typeof apiJson>[4] = {}) =>
    apiJson<T>(API, path, p.key, status, opts);
  /** Every item of a list, page after page. */
  const all = async <T>(path: string): Promise<T[]> => {
    const out: T[] = [];
    let cursor: string | null = null;
    do {
      const sep = path.includes("?") ? "&" : "?";
      const c = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
      const pg: Page<T> = await rest<Page<T>>(`${path}${sep}limit=200${c}`, 200);
      out.push(...pg.data);
      cursor = pg.nextCursor;
    } while (cursor);
    return out;
  };

  it("bad input is an RFC 9457 problem naming the field (REST), the same problem inside the GraphQL error", async () => {
    const bad = {
      title: "Lamp",
      variants: [
        { sku: "LAMP-OK", title: "ok", priceMinor: 100 },
        { sku: "not a sku!", title: "bad", priceMinor: 100 },
      ],
    };
    const r = await api(API, "/api/v1/products", p.key, { json: bad });
    expect(r.status).toBe(422);
    expect(r.headers.get("content-type")).toContain("application/problem+json");
    const problem = (await r.json()) as { status: number; errors: { pointer: string }[] };
    expect(problem.status).toBe(422);
    expect(problem.errors.map((e) => e.pointer)).toEqual(["#/variants/1/sku"]);
    const g = await gql(API, p.key, `mutation($i: ProductInput!) { createProduct(input: $i) { id } }`, {
      i: bad,
    });
    const ext = g.errors?.[0]?.extensions as { status: number; problem: { errors: { pointer: string }[] } };
    expect(ext.status).toBe(422);
    expect(ext.problem.errors.map((e) => e.pointer)).toEqual(["#/variants/1/sku"]);
  });

  it("pages stay stable while rows are inserted before and after the cursor", async () => {
    const titles = ["page-c-1", "page-c-2", "page-c-3", "page-c-4", "page-c-5"];
    for (const t of titles)
      await rest("/api/v1/products", 201, {
        json: { title: t, variants: [{ sku: t, title: t, priceMinor: 1 }] },
      });
    const seen: string[] = [];
    let cursor = "";
    let inserted = 0;
    do {
      const pg: Page<Product> = await rest(`/api/v1/products?q=page-&sort=title&limit=2${cursor}`, 200);
      seen.push(...pg.data.map((x) => x.title));
      // One row sorting before everything seen and one after, between every two pages: an OFFSET
      // page would now repeat a row; a keyset page does not.
      const n = ++inserted;
      for (const t of [`page-a-${n}`, `page-z-${n}`])
        await rest("/api/v1/products", 201, {
          json: { title: t, variants: [{ sku: t, title: t, priceMinor: 1 }] },
        });
      cursor = pg.nextCursor ? `&cursor=${encodeURIComponent(pg.nextCursor)}` : "";
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((t) => t.startsWith("page-c-"))).toEqual(titles);
    expect(seen.some((t) => t.startsWith("page-a-"))).toBe(false);
    expect(seen).toEqual([...seen].sort());
  });

  it("a POST replayed with the same Idempotency-Key returns the first response; another body with it is 422", async () => {
    const send = (email: string) =>
      api(API, "/api/v1/customers", p.key, {
        json: { email, name: "Lin" },
        headers: { "idempotency-key": "signup-42" },
      });
    const first = await send("lin@example.com");
    expect(first.status).toBe(201);
    const firstBody = await first.text();
    const again = await send("lin@example.com");
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(firstBody);
    expect((await rest<Page<unknown>>("/api/v1/customers?email=lin@example.com", 200)).data).toHaveLength(1);
    const other = await send("someone-else@example.com");
    expect(other.status).toBe(422);
    expect(other.headers.get("content-type")).toContain("application/problem+json");
  });

  it("analytics (REST and GraphQL) equal the sums computed here from the orders and customers read back", async () => {
    const orders = await all<Order>("/api/v1/orders?sort=createdAt");
    const customers = await all<{ createdAt: string }>("/api/v1/customers");
    const sold = orders.filter((o) => SOLD.has(o.status));
    expect(sold.length).toBeGreaterThan(0);
    expect(orders.length).toBeGreaterThan(sold.length); // pending and cancelled ones too
    const revenue = sold.reduce((s, o) => s + o.totalMinor, 0);
    const byDay = new Map<string, { revenueMinor: number; orders: number }>();
    for (const o of sold) {
      const d = new Date(o.createdAt).toISOString().slice(0, 10); // the platform's timezone is UTC
      const e = byDay.get(d) ?? { revenueMinor: 0, orders: 0 };
      byDay.set(d, { revenueMinor: e.revenueMinor + o.totalMinor, orders: e.orders + 1 });
    }
    const perProduct = new Map<string, { quantity: number; revenueMinor: number }>();
    for (const l of sold.flatMap((o) => o.lines)) {
      const e = perProduct.get(l.productId) ?? { quantity: 0, revenueMinor: 0 };
      perProduct.set(l.productId, {
        quantity: e.quantity + l.quantity,
        revenueMinor: e.revenueMinor + l.totalMinor,
      });
    }
    const from = day(-1);
    const to = day(1);
    const a = await rest<{
      revenueMinor: number;
      orders: number;
      averageOrderValueMinor: number;
      newCustomers: number;
      byDay: { date: string; revenueMinor: number; orders: number }[];
      topProducts: { productId: string; quantity: number; revenueMinor: number }[];
    }>(`/api/v1/analytics?from=${from}&to=${to}&top=100`, 200);
    expect(a.revenueMinor).toBe(revenue);
    expect(a.orders).toBe(sold.length);
    expect(a.averageOrderValueMinor).toBe(Math.round(revenue / sold.length));
    expect(a.newCustomers).toBe(customers.length);
    expect(a.byDay.filter((d) => d.orders > 0)).toEqual(
      [...byDay].sort(([x], [y]) => x.localeCompare(y)).map(([date, v]) => ({ date, ...v })),
    );
    expect(
      new Map(
        a.topProducts.map((t) => [t.productId, { quantity: t.quantity, revenueMinor: t.revenueMinor }]),
      ),
    ).toEqual(perProduct);
    const g = await gql<{ analytics: { revenueMinor: number; orders: number; newCustomers: number } }>(
      API,
      p.key,
      `query($f: String!, $t: String!) { analytics(from: $f, to: $t) { revenueMinor orders newCustomers } }`,
      { f: from, t: to },
    );
    expect(g.data?.analytics).toEqual({
      revenueMinor: revenue,
      orders: sold.length,
      newCustomers: customers.length,
    });
  });
}
