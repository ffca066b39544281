import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { body, type Json, type Service, startService } from "./support/harness.ts";
import { type Receiver, startReceiver } from "./support/receiver.ts";

// The webhook delivery log through GraphQL against real PostgreSQL and a real receiver: the same
// list, filters and cursors as REST, attempts loaded in one query per response, and the replay
// being the REST one (same webhook-id), refused without webhooks:write.

describe("GraphQL webhook deliveries", () => {
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  let rx: Receiver;
  let svc: Service;
  const gql = async (query: string, variables: object = {}, key?: string) => {
    const r = await svc.call("/graphql", {
      method: "POST",
      json: { query, variables },
      ...(key ? { key } : {}),
    });
    return { status: r.status, ...(await body(r)) } as Json;
  };
  const scopedKey = async (scopes: string[]) =>
    (
      await body(
        await svc.call("/api/v1/api-keys", { method: "POST", json: { name: scopes.join(" "), scopes } }),
      )
    ).key as string;

  beforeAll(async () => {
    rx = await startReceiver(secret);
    svc = await startService(
      {
        CONFIG_WEBHOOKS: JSON.stringify([
          { name: "all", url: `${rx.url}/all`, events: ["CustomerRegistered"] },
          { name: "flaky", url: `${rx.url}/flaky`, events: ["CustomerRegistered"] },
        ]),
        WEBHOOK_ALL_SIGNING_KEY: secret,
        WEBHOOK_FLAKY_SIGNING_KEY: secret,
        COMMERCE_WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8",
        COMMERCE_RATE_LIMIT_PER_MINUTE: "100000",
      },
      undefined,
      { webhooks: true },
    );
    // Three events to two endpoints: six deliveries; /flaky fails its first once.
    rx.script.set("/flaky", [{ status: 500 }]);
    for (const n of ["a", "b", "c"]) {
      await svc.call("/api/v1/customers", { method: "POST", json: { email: `${n}@w.test`, name: n } });
    }
    for (let i = 0; i < 80; i++) {
      const r = await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries
        where status <> 'succeeded'`.execute(svc.db);
      if (r.rows[0]?.n === 0) break;
      // Time travel for the retry schedule: the failed attempt's retry is due now.
      await sql`update pgboss.job set start_after = now() where state in ('created', 'retry')`.execute(
        svc.db,
      );
      await new Promise((r) => setTimeout(r, 250));
    }
  });
  afterAll(async () => {
    await svc?.close();
    await rx?.close();
  });

  it("lists the deliveries page by page with REST's order, cursors and filters", async () => {
    const rest = await body(await svc.call("/api/v1/webhook-deliveries?limit=50"));
    expect(rest.data).toHaveLength(6);
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const r: Json = await gql(
        `query($after: String) { webhookDeliveries(first: 4, after: $after) { nodes { id eventId type webhook status } nextCursor } }`,
        { after },
      );
      expect(r.errors).toBeUndefined();
      seen.push(...r.data.webhookDeliveries.nodes.map((d: Json) => d.id));
      after = r.data.webhookDeliveries.nextCursor;
    } while (after);
    expect(seen).toEqual(rest.data.map((d: Json) => d.id));

    const flaky = await gql(
      `{ webhookDeliveries(webhook: "flaky", type: "customer.registered", status: "succeeded") { nodes { webhook attempts attemptLog { attempt statusCode at } } } }`,
    );
    const nodes = flaky.data.webhookDeliveries.nodes;
    expect(nodes.map((d: Json) => d.webhook)).toEqual(["flaky", "flaky", "flaky"]);
    const retried = nodes.find((d: Json) => d.attempts === 2);
    expect(retried.attemptLog.map((a: Json) => [a.attempt, a.statusCode])).toEqual([
      [1, 500],
      [2, 204],
    ]);
    expect(Number.isNaN(Date.parse(retried.attemptLog[0].at))).toBe(false);
    const none = await gql(`{ webhookDeliveries(status: "failed") { nodes { id } } }`);
    expect(none.data.webhookDeliveries.nodes).toEqual([]);
    const bad = await gql(`{ webhookDeliveries(status: "lost") { nodes { id } } }`);
    expect(bad.errors[0].extensions.status).toBe(422);
    expect(bad.errors[0].extensions.problem.errors[0].pointer).toMatch(/status/);
  });

  it("loads the attempts of every delivery in one query, and reports the cost", async () => {
    const query = vi.spyOn(pg.Client.prototype, "query");
    try {
      const r = await gql(`{ webhookDeliveries(first: 10) { nodes { id attemptLog { statusCode } } } }`);
      expect(r.errors).toBeUndefined();
      expect(r.data.webhookDeliveries.nodes).toHaveLength(6);
      expect(r.data.webhookDeliveries.nodes.flatMap((d: Json) => d.attemptLog)).toHaveLength(7);
      const attemptReads = query.mock.calls.filter((c) => /from "webhook_attempts"/.test(String(c[0])));
      expect(attemptReads).toHaveLength(1);
      // webhookDeliveries: 1 + 10 × (nodes 1 + id 1 + attemptLog: (1 + 10 × statusCode 1))
      expect(r.extensions.cost.requestedQueryCost).toBe(1 + 10 * (1 + 1 + (1 + 10)));
    } finally {
      query.mockRestore();
    }
  });

  it("replays a delivery through the REST code path: a new delivery, the same webhook-id", async () => {
    const list = await gql(`{ webhookDeliveries(webhook: "all", first: 1) { nodes { id eventId } } }`);
    const d = list.data.webhookDeliveries.nodes[0];
    const before = rx.received.filter((r) => r.id === d.eventId).length;
    const r = await gql(
      `mutation($id: ID!) { replayWebhookDelivery(id: $id) { id eventId webhook status } }`,
      {
        id: d.id,
      },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.replayWebhookDelivery).toMatchObject({
      eventId: d.eventId,
      webhook: "all",
      status: "pending",
    });
    expect(r.data.replayWebhookDelivery.id).not.toBe(d.id);
    await rx.waitFor((x) => x.filter((y) => y.id === d.eventId).length === before + 1);
    expect(rx.received.filter((y) => y.id === d.eventId).every((y) => y.verified)).toBe(true);
    const one = await gql(
      `query($id: ID!) { webhookDelivery(id: $id) { eventId attemptLog { statusCode } } }`,
      {
        id: r.data.replayWebhookDelivery.id,
      },
    );
    expect(one.data.webhookDelivery.eventId).toBe(d.eventId);
    expect((await gql(`{ webhookDelivery(id: "dlv_none") { id } }`)).data.webhookDelivery).toBeNull();
    const missing = await gql(`mutation { replayWebhookDelivery(id: "dlv_none") { id } }`);
    expect(missing.errors[0].extensions.status).toBe(404);
  });

  it("needs webhooks:read to list and webhooks:write to replay, naming the scope", async () => {
    const reader = await scopedKey(["webhooks:read"]);
    const list = await gql(
      `{ webhookDeliveries(first: 1) { nodes { id attemptLog { attempt } } } }`,
      {},
      reader,
    );
    expect(list.errors).toBeUndefined();
    const id = list.data.webhookDeliveries.nodes[0].id;
    const count = async () =>
      (await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries`.execute(svc.db)).rows[0]
        ?.n;
    const n = await count();
    const denied = await gql(`mutation($id: ID!) { replayWebhookDelivery(id: $id) { id } }`, { id }, reader);
    expect(denied.data).toBeNull();
    expect(denied.errors[0].message).toMatch(/lacks the scope webhooks:write/);
    expect(denied.errors[0].extensions).toMatchObject({
      status: 403,
      problem: { requiredScope: "webhooks:write" },
    });
    expect(await count()).toBe(n);
    const other = await scopedKey(["products:read"]);
    const hidden = await gql(`{ webhookDeliveries { nodes { id } } }`, {}, other);
    expect(hidden.errors[0].message).toMatch(/lacks the scope webhooks:read/);
    expect(hidden.errors[0].extensions.status).toBe(403);
  });

  it("shows the endpoints and enables one", async () => {
    const r = await gql(`{ webhookEndpoints { name events disabledAt } }`);
    expect(r.data.webhookEndpoints).toEqual([
      { name: "all", events: ["CustomerRegistered"], disabledAt: null },
      { name: "flaky", events: ["CustomerRegistered"], disabledAt: null },
    ]);
    const e = await gql(`mutation { enableWebhookEndpoint(name: "flaky") { name disabledAt } }`);
    expect(e.data.enableWebhookEndpoint).toEqual({ name: "flaky", disabledAt: null });
    const none = await gql(`mutation { enableWebhookEndpoint(name: "nope") { name } }`);
    expect(none.errors[0].extensions.status).toBe(404);
  });
});
