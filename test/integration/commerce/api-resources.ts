import { expect, it } from "vitest";
import { API, type CommercePlatform } from "./platform.ts";
import { api, apiJson, gql } from "./support.ts";

// Every resource group through REST and through GraphQL, with the same credential.

export interface Variant {
  id: string;
  sku: string;
}
export interface Product {
  id: string;
  title: string;
  version: number;
  variants: Variant[];
}
export interface Order {
  id: string;
  status: string;
  totalMinor: number;
  createdAt: string;
  trackingNumber: string | null;
  lines: { productId: string; quantity: number; totalMinor: number }[];
  history: { from: string | null; to: string }[];
}
interface Level {
  available: number;
  lowStockThreshold: number;
}
export type Page<T> = { data: T[]; nextCursor: string | null };

export function resourceTests(p: CommercePlatform): void {
  const rest = <T>(path: string, status: number, opts: Parameters<typeof apiJson>[4] = {}) =>
    apiJson<T>(API, path, p.key, status, opts);
  it("REST: products (ETag/If-Match), customers, inventory levels and adjustments, orders through paid, shipped with tracking, delivered", async () => {
    const prod = await rest<Product>("/api/v1/products", 201, {
      json: {
        title: "Desk",
        variants: [
          {
            sku: "DESK-OAK",
            title: "Oak",
            priceMinor: 25_000,
            inventory: { available: 10, lowStockThreshold: 2 },
          },
          { sku: "DESK-ASH", title: "Ash", priceMinor: 19_900, inventory: { available: 10 } },
        ],
      },
    });
    const got = await api(API, `/api/v1/products/${prod.id}`, p.key);
    expect(got.status).toBe(200);
    const etag = got.headers.get("etag") ?? "";
    const stale = await api(API, `/api/v1/products/${prod.id}`, p.key, {
      method: "PATCH",
      json: { title: "Desk, solid" },
      headers: { "if-match": '"v999"' },
    });
    expect(stale.status).toBe(412);
    const patched = await rest<Product>(`/api/v1/products/${prod.id}`, 200, {
      method: "PATCH",
      json: { title: "Desk, solid" },
      headers: { "if-match": etag },
    });
    expect(patched).toMatchObject({ title: "Desk, solid", version: prod.version + 1 });

    const cus = await rest<{ id: string }>("/api/v1/customers", 201, {
      json: { email: "ada@example.com", name: "Ada" },
    });
    const byEmail = await rest<Page<{ id: string }>>("/api/v1/customers?email=ADA@example.com", 200);
    expect(byEmail.data.map((c) => c.id)).toEqual([cus.id]);

    const oak = prod.variants.find((v) => v.sku === "DESK-OAK")?.id ?? "";
    const ash = prod.variants.find((v) => v.sku === "DESK-ASH")?.id ?? "";
    const adj = await rest<Level>(`/api/v1/inventory/${oak}/adjustments`, 201, {
      json: { delta: 5, reason: "delivery from the workshop" },
    });
    expect(adj.available).toBe(15);
    const adjs = await rest<Page<{ delta: number; reason: string }>>(
      `/api/v1/inventory/${oak}/adjustments`,
      200,
    );
    expect(adjs.data).toContainEqual(
      expect.objectContaining({ delta: 5, reason: "delivery from the workshop" }),
    );
    expect(await rest<Level>(`/api/v1/inventory/${oak}`, 200)).toMatchObject({
      available: 15,
      lowStockThreshold: 2,
    });

    const order = await rest<Order>("/api/v1/orders", 201, {
      json: {
        customerId: cus.id,
        lines: [
          { sku: "DESK-OAK", quantity: 2 },
          { variantId: ash, quantity: 1 },
        ],
      },
    });
    expect(order.status).toBe("pending");
    expect((await rest<Level>(`/api/v1/inventory/${oak}`, 200)).available).toBe(13);
    expect(
      await rest(`/api/v1/orders/${order.id}/payments`, 201, { json: { gateway: "test" } }),
    ).toMatchObject({
      status: "succeeded",
      amountMinor: order.totalMinor,
    });
    await rest(`/api/v1/orders/${order.id}/transitions`, 200, { json: { to: "fulfilled" } });
    await rest(`/api/v1/orders/${order.id}/transitions`, 200, {
      json: { to: "shipped", trackingNumber: "1Z999AA10123456784" },
    });
    const done = await rest<Order>(`/api/v1/orders/${order.id}/transitions`, 200, {
      json: { to: "delivered" },
    });
    expect(done.trackingNumber).toBe("1Z999AA10123456784");
    expect(done.history.map((h) => h.to)).toEqual(["pending", "paid", "fulfilled", "shipped", "delivered"]);
    const paidOnly = await rest<Page<Order>>(`/api/v1/orders?status=delivered&customerId=${cus.id}`, 200);
    expect(paidOnly.data.map((o) => o.id)).toEqual([order.id]);
    // A cancelled order gives its stock back.
    const second = await rest<Order>("/api/v1/orders", 201, {
      json: { lines: [{ sku: "DESK-OAK", quantity: 3 }] },
    });
    await rest(`/api/v1/orders/${second.id}/transitions`, 200, { json: { to: "cancelled" } });
    expect((await rest<Level>(`/api/v1/inventory/${oak}`, 200)).available).toBe(13);
  });

  it("GraphQL: the same groups with the same credential, cost reported, nested relations resolved", async () => {
    const created = await gql<{ createProduct: Product }>(
      API,
      p.key,
      `mutation($i: ProductInput!) { createProduct(input: $i) { id title variants { id sku } } }`,
      {
        i: {
          title: "Chair",
          variants: [{ sku: "CHAIR-1", title: "Chair", priceMinor: 8_000, available: 20 }],
        },
      },
    );
    expect(created.errors).toBeUndefined();
    const chair = created.data?.createProduct as Product;
    const cus = await gql<{ createCustomer: { id: string } }>(
      API,
      p.key,
      `mutation { createCustomer(email: "grace@example.com", name: "Grace") { id } }`,
    );
    const customerId = cus.data?.createCustomer.id;
    const order = await gql<{ createOrder: { id: string; status: string; totalMinor: number } }>(
      API,
      p.key,
      `mutation($i: OrderInput!) { createOrder(input: $i) { id status totalMinor } }`,
      { i: { customerId, lines: [{ sku: "CHAIR-1", quantity: 4 }] } },
    );
    const orderId = order.data?.createOrder.id;
    expect(order.data?.createOrder.status).toBe("pending");
    for (const [to, tracking] of [["paid"], ["fulfilled"], ["shipped", "JJD0099"]]) {
      const t = await gql<{ transitionOrder: { status: string; trackingNumber: string | null } }>(
        API,
        p.key,
        `mutation($id: ID!, $to: String!, $t: String) { transitionOrder(id: $id, to: $to, trackingNumber: $t) { status trackingNumber } }`,
        { id: orderId, to, t: tracking },
      );
      expect(t.data?.transitionOrder.status).toBe(to);
    }
    const adj = await gql<{ adjustInventory: { available: number } }>(
      API,
      p.key,
      `mutation($v: ID!) { adjustInventory(variantId: $v, delta: -1, reason: "damaged") { available } }`,
      { v: chair.variants[0]?.id },
    );
    expect(adj.data?.adjustInventory.available).toBe(15);
    const read = await gql<{
      product: { variants: { inventory: { available: number } }[] };
      customer: { email: string; orders: { id: string; trackingNumber: string }[] };
      order: { customer: { id: string }; lines: { sku: string; quantity: number }[] };
      products: { nodes: { id: string }[] };
      orders: { nodes: { id: string }[] };
      customers: { nodes: { id: string }[] };
    }>(
      API,
      p.key,
      `query($p: ID!, $c: ID!, $o: ID!) {
        product(id: $p) { variants { inventory { available } } }
        customer(id: $c) { email orders { id trackingNumber } }
        order(id: $o) { customer { id } lines { sku quantity } }
        products(first: 5) { nodes { id } }
        orders(first: 5, status: "shipped") { nodes { id } }
        customers(first: 5) { nodes { id } }
      }`,
      { p: chair.id, c: customerId, o: orderId },
    );
    expect(read.errors).toBeUndefined();
    expect(read.data?.product.variants[0]?.inventory.available).toBe(15);
    expect(read.data?.customer).toEqual({
      email: "grace@example.com",
      orders: [{ id: orderId, trackingNumber: "JJD0099" }],
    });
    expect(read.data?.order).toEqual({
      customer: { id: customerId },
      lines: [{ sku: "CHAIR-1", quantity: 4 }],
    });
    expect(read.data?.products.nodes.map((n) => n.id)).toContain(chair.id);
    expect(read.data?.orders.nodes.map((n) => n.id)).toEqual([orderId]);
    expect(read.data?.customers.nodes.map((n) => n.id)).toContain(customerId);
    expect(read.extensions?.cost?.requestedQueryCost).toBeGreaterThan(0);
  });
}
