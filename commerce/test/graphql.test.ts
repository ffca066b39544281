import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_COST } from "../src/graphql/index.ts";
import { body, type Json, type Service, startService } from "./support/harness.ts";

describe("GraphQL", () => {
  let svc: Service;
  const gql = async (query: string, variables: object = {}, key?: string | null) => {
    const r = await svc.call("/graphql", {
      method: "POST",
      json: { query, variables },
      ...(key !== undefined ? { key } : {}),
    });
    return { status: r.status, headers: r.headers, ...(await body(r)) } as Json;
  };

  beforeAll(async () => {
    svc = await startService({
      CONFIG_LOCALIZATION: '{"currency":"EUR","tax":{"defaultRatePercent":"10"}}',
      COMMERCE_RATE_LIMIT_PER_MINUTE: "100000",
    });
  });
  afterAll(() => svc.close());

  it("creates and reads every resource group with the same rules as REST", async () => {
    const p = await gql(
      `mutation($i: ProductInput!) { createProduct(input: $i) { id title variants { sku priceMinor currency inventory { available low } } } }`,
      {
        i: {
          title: "Kettle",
          variants: [{ sku: "KET-1", title: "Steel", priceMinor: 3000, available: 9, lowStockThreshold: 2 }],
        },
      },
    );
    expect(p.errors).toBeUndefined();
    expect(p.data.createProduct.variants[0]).toEqual({
      sku: "KET-1",
      priceMinor: 3000,
      currency: "EUR",
      inventory: { available: 9, low: false },
    });
    const c = await gql(`mutation { createCustomer(email: "g@q.test", name: "G") { id } }`);
    const o = await gql(
      `mutation($i: OrderInput!) { createOrder(input: $i) { id status totalMinor taxMinor customer { email } lines { sku quantity } } }`,
      { i: { customerId: c.data.createCustomer.id, lines: [{ sku: "KET-1", quantity: 2 }] } },
    );
    expect(o.data.createOrder).toMatchObject({
      status: "pending",
      totalMinor: 6600,
      taxMinor: 600,
      customer: { email: "g@q.test" },
    });
    const t = await gql(`mutation($id: ID!) { transitionOrder(id: $id, to: "paid") { status } }`, {
      id: o.data.createOrder.id,
    });
    expect(t.data.transitionOrder.status).toBe("paid");
    const adj = await gql(
      `mutation($v: ID!) { adjustInventory(variantId: $v, delta: -6, reason: "count") { available low } }`,
      {
        v: (await gql(`{ products { nodes { variants { id } } } }`)).data.products.nodes[0].variants[0].id,
      },
    );
    expect(adj.data.adjustInventory).toEqual({ available: 1, low: true });

    const q = await gql(`{
      products(first: 5) { nodes { title variants { sku inventory { available } } } nextCursor }
      customers(first: 5) { nodes { email orders(first: 3) { totalMinor lines { sku } } } }
      orders(first: 5) { nodes { status customer { name } } }
      analytics(from: "2020-01-01", to: "2020-01-02") { orders revenueMinor }
    }`);
    expect(q.errors).toBeUndefined();
    expect(q.data.products.nodes[0]).toEqual({
      title: "Kettle",
      variants: [{ sku: "KET-1", inventory: { available: 1 } }],
    });
    expect(q.data.customers.nodes[0].orders[0]).toEqual({ totalMinor: 6600, lines: [{ sku: "KET-1" }] });
    // Timestamps loaded by the batched relations are RFC 3339 like the REST ones.
    const ts = await gql(
      `{ orders(first: 1) { nodes { createdAt customer { createdAt orders { createdAt } } } } }`,
    );
    const o1 = ts.data.orders.nodes[0];
    expect(o1.customer.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(o1.customer.orders[0].createdAt).toBe(o1.createdAt);
    expect(q.data.orders.nodes[0]).toEqual({ status: "paid", customer: { name: "G" } });
    expect(q.data.analytics).toEqual({ orders: 0, revenueMinor: 0 });
  });

  it("reports errors with the problem's field, and a missing product as null", async () => {
    const bad = await gql(`mutation { createCustomer(email: "nope", name: "x") { id } }`);
    expect(bad.errors[0].message).toMatch(/email/);
    expect(bad.errors[0].extensions.status).toBe(422);
    expect((await gql(`{ product(id: "none") { id } }`)).data.product).toBeNull();
  });

  it("reports the query cost in extensions.cost and refuses queries above the limit or too deep", async () => {
    const r = await gql(`{ products(first: 10) { nodes { title variants { sku } } } }`);
    // products: 1 + 10 × (nodes: 1 + title 1 + variants: (1 + 10 × sku 1))
    expect(r.extensions.cost).toEqual({
      requestedQueryCost: 1 + 10 * (1 + 1 + (1 + 10 * 1)),
      maximumCost: MAX_COST,
    });
    // The rate limit is charged the cost, not one request: a credential's first query leaves its
    // full bucket (100,000) short of exactly the cost.
    const k = await body(
      await svc.call("/api/v1/api-keys", {
        method: "POST",
        json: { name: "gql", scopes: ["products:read"] },
      }),
    );
    const first = await gql(`{ products(first: 10) { nodes { title variants { sku } } } }`, {}, k.key);
    expect(first.headers.get("ratelimit")).toMatch(new RegExp(`r=${100_000 - 131};`));
    const big = await gql(`{ products(first: 100) { nodes { variants { inventory { available } } } } }`);
    expect(big.errors[0].message).toMatch(/exceeds the limit of 1000/);
    expect(big.errors[0].extensions.code).toBe("MAX_COST_EXCEEDED");
    const deep = await gql(
      `{ customers(first: 1) { nodes { orders(first: 1) { customer { orders(first: 1) { customer { orders(first: 1) { customer { orders(first: 1) { id } } } } } } } } } }`,
    );
    expect(deep.errors?.[0]?.message).toMatch(/depth/i);
  });

  it("uses the same credentials and scopes as REST", async () => {
    expect((await gql(`{ products { nodes { id } } }`, {}, null)).status).toBe(401);
    const k = await body(
      await svc.call("/api/v1/api-keys", { method: "POST", json: { name: "ro", scopes: ["products:read"] } }),
    );
    const ok = await gql(`{ products { nodes { title } } }`, {}, k.key);
    expect(ok.errors).toBeUndefined();
    const denied = await gql(`{ orders { nodes { id } } }`, {}, k.key);
    expect(denied.errors[0].message).toMatch(/lacks the scope orders:read/);
    const nested = await gql(`{ products { nodes { variants { inventory { available } } } } }`, {}, k.key);
    expect(nested.errors[0].message).toMatch(/lacks the scope inventory:read/);
  });
});
