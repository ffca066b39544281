import { Webhook } from "standardwebhooks";
import { expect, it } from "vitest";
import { clusterEnv, kubectl, waitFor } from "../../support/cluster.ts";
import { API, type CommercePlatform, NAME } from "./platform.ts";
import { apiJson } from "./support.ts";

// Webhooks from the platform's spec.webhooks to a receiver on the host, verified with the
// Standard Webhooks library: the five events, retries with the same webhook-id, the delivery log
// and replay, a private destination that is not allowed, and delivery across killed pods.

interface Delivery {
  id: string;
  eventId: string;
  webhook: string;
  status: string;
  attempts: number;
  lastError: string | null;
}

export function webhookTests(p: CommercePlatform): void {
  const rest = <T>(path: string, status: number, json?: unknown) =>
    apiJson<T>(API, path, p.key, status, json === undefined ? {} : { json });
  const arrived = (type: string, id: string, n = 1) =>
    waitFor(
      () => {
        const got = p.deliveries(type, id).filter((d) => d.status === 204);
        return got.length >= n ? got : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: `${n} ${type} about ${id} at the receiver` },
    );
  const verify = (r: { body: string; headers: Record<string, string> }) =>
    new Webhook(p.signingKey).verify(r.body, r.headers) as { type: string; data: Record<string, unknown> };

  it("each of the five events reaches the receiver signed the Standard Webhooks way; inventory.low once per crossing", async () => {
    const cus = await rest<{ id: string }>("/api/v1/customers", 201, {
      email: "hook@example.com",
      name: "Hook",
    });
    const prod = await rest<{ variants: { id: string }[] }>("/api/v1/products", 201, {
      title: "Vase",
      variants: [
        { sku: "VASE", title: "Vase", priceMinor: 4_500, inventory: { available: 6, lowStockThreshold: 3 } },
      ],
    });
    const variant = prod.variants[0]?.id ?? "";
    const order = await rest<{ id: string }>("/api/v1/orders", 201, {
      customerId: cus.id,
      lines: [{ sku: "VASE", quantity: 2 }],
    });
    await rest(`/api/v1/orders/${order.id}/payments`, 201, { gateway: "test" });
    // 4 → 3 crosses the threshold, 3 → 2 stays below, 2 → 7 → 3 crosses again: two events.
    for (const delta of [-1, -1, 5, -4])
      await rest(`/api/v1/inventory/${variant}/adjustments`, 201, { delta, reason: "count" });

    const cases: [string, string, number][] = [
      ["customer.registered", cus.id, 1],
      ["order.created", order.id, 1],
      ["payment.received", order.id, 1],
      ["order.updated", order.id, 1],
      ["inventory.low", variant, 2],
    ];
    for (const [type, id, n] of cases) {
      const got = await arrived(type, id, n);
      for (const r of got) expect(verify(r).type).toBe(type);
    }
    expect(verify((await arrived("order.updated", order.id))[0]!).data).toMatchObject({
      status: "paid",
      previousStatus: "pending",
    });
    // The log, written with each change, has exactly the two crossings.
    const low = await rest<{ data: Delivery[] }>(
      "/api/v1/webhook-deliveries?type=inventory.low&webhook=all",
      200,
    );
    expect(low.data).toHaveLength(2);
    expect(p.deliveries("inventory.low", variant).map((d) => d.event.data.available)).toEqual([3, 3]);
  });

  it("a receiver failing twice gets the event on the third attempt with the same webhook-id; the log lists the attempts and replays it", async () => {
    // 503 with Retry-After: 1, which the sender honours instead of its backoff (5 s, then 1 min).
    const busy = { status: 503, headers: { "retry-after": "1" } };
    p.script("retry@example.com", busy, busy);
    const cus = await rest<{ id: string }>("/api/v1/customers", 201, {
      email: "retry@example.com",
      name: "Retry",
    });
    await arrived("customer.registered", cus.id);
    const attempts = p.deliveries("customer.registered", cus.id);
    expect(attempts.map((a) => a.status)).toEqual([503, 503, 204]);
    const ids = new Set(attempts.map((a) => a.headers["webhook-id"]));
    expect(ids.size).toBe(1);
    const eventId = [...ids][0] ?? "";

    const list = await rest<{ data: Delivery[] }>(
      "/api/v1/webhook-deliveries?type=customer.registered&webhook=all",
      200,
    );
    const d = list.data.find((x) => x.eventId === eventId);
    expect(d).toMatchObject({ status: "succeeded", attempts: 3 });
    const detail = await rest<{ attemptLog: { statusCode: number }[] }>(
      `/api/v1/webhook-deliveries/${d?.id}`,
      200,
    );
    expect(detail.attemptLog.map((a) => a.statusCode)).toEqual([503, 503, 204]);
    expect(await rest(`/api/v1/webhook-deliveries/${d?.id}/replay`, 202, {})).toMatchObject({
      eventId,
      status: "pending",
    });
    const again = await arrived("customer.registered", cus.id, 2);
    expect(again.map((a) => a.headers["webhook-id"])).toEqual([eventId, eventId]);
  });

  it("a private destination is refused unless allowed: the Kubernetes API's ClusterIP is refused, the host's node address (allowed) is not", async () => {
    // The receiver is on a private address too (the node link), in the CIDR the operator allows.
    expect(clusterEnv().HOST_IP).toMatch(/^(10\.|172\.(1[6-9]|2\d|3[01])\.|192\.168\.)/);
    const refused = await waitFor(
      async () => {
        const r = await rest<{ data: Delivery[] }>("/api/v1/webhook-deliveries?webhook=internal", 200);
        return r.data.find((x) => x.status === "failed");
      },
      { timeoutMs: 30_000, what: "the refused delivery to the internal webhook" },
    );
    expect(refused.lastError).toMatch(/not allowed as a webhook destination/);
    expect(refused.attempts).toBe(1);
    expect(p.received.every((r) => r.path === "/hooks")).toBe(true);
  });

  it("every app pod killed right after an order commits: the event is still delivered, same webhook-id", async () => {
    const order = await rest<{ id: string }>("/api/v1/orders", 201, {
      lines: [{ sku: "VASE", quantity: 1 }],
    });
    // Its first attempt (if one gets out before the kill) is refused, so the delivery that
    // succeeds is always made by pods started after the kill.
    p.script(order.id, { status: 503, headers: { "retry-after": "3" } });
    await kubectl(
      [
        "delete",
        "pods",
        "-l",
        `cronscale.io/platform=${NAME},app.kubernetes.io/component=app`,
        "--force",
        "--grace-period=0",
        "--wait=false",
      ],
      { namespace: p.ns },
    );
    const killedAt = Date.now();
    const ok = await waitFor(() => p.deliveries("order.created", order.id).find((r) => r.status === 204), {
      timeoutMs: 90_000,
      intervalMs: 500,
      what: "delivery of the order after the kill",
    });
    expect(ok.at).toBeGreaterThan(killedAt);
    expect(new Set(p.deliveries("order.created", order.id).map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(verify(ok).type).toBe("order.created");
  }, 120_000);
}
