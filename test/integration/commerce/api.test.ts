import { randomBytes } from "node:crypto";
import * as oauth from "oauth4webapi";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../../src/runtime/types.ts";
import { clusterEnv, kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { addonEnv, skipReason } from "../addons/support.ts";
import { apiKey, applyPlatform, getObj, waitPhase } from "../scaleplatform/helpers.ts";
import { usePlatformOperator } from "../scaleplatform/operator.ts";
import { api, ingressFetch, type Received, startReceiver } from "./support.ts";

// The commerce service as a ScalePlatform runs it, used the way its users do: HTTPS through the
// Ingress controller with the cluster CA's certificate, the API key from the platform's
// credentials Secret, an OAuth client library, webhooks to a receiver on the host verified with
// the Standard Webhooks library — and what must hold while the cluster moves pods around.

const reason = await skipReason("dns", "storage", "ingress", "cert-manager", "custom-metrics");
const NAME = "store";
const HOST = "store.commerce.test";
const API = `api.${HOST}`;
const productBody = (sku: string, stock = 100) => ({
  title: sku,
  variants: [{ sku, title: sku, priceMinor: 1999, inventory: { available: stock, lowStockThreshold: 1 } }],
});

/** Sets a Pods metric of every pod of the namespace in the test custom-metrics API. */
async function setPodsMetric(ns: string, metric: string, value: string | undefined): Promise<void> {
  const base = addonEnv("custom-metrics.env")?.CUSTOM_METRICS_URL;
  const res = await fetch(`${base}/values/${ns}/pods/${metric}/*`, {
    method: value === undefined ? "DELETE" : "PUT",
    body: value,
  });
  if (res.status !== 204) throw new Error(`setting ${metric}: HTTP ${res.status}`);
}

/** Waits until the app Deployment has rolled out completely with `n` ready replicas. */
async function appReady(ns: string, n: number, timeoutMs = 120_000): Promise<void> {
  await waitFor(
    async () => {
      const d = await getObj<KubeObject>(ns, "deployment", NAME);
      const s = (d?.status ?? {}) as Record<string, number>;
      return (s.observedGeneration ?? 0) >= (d?.metadata.generation ?? 1) &&
        s.replicas === n &&
        s.updatedReplicas === n &&
        s.readyReplicas === n
        ? true
        : undefined;
    },
    { timeoutMs, intervalMs: 1000, what: `${n} ready app replicas of the current version` },
  );
}

/** IPs of the app pods that are ready and not shutting down. */
async function readyAppPodIps(ns: string): Promise<string[]> {
  const r = await kubectl(
    ["get", "pods", "-l", `cronscale.io/platform=${NAME},app.kubernetes.io/component=app`, "-o", "json"],
    { namespace: ns },
  );
  type Pod = {
    metadata: { deletionTimestamp?: string };
    status: { podIP?: string; conditions?: { type: string; status: string }[] };
  };
  return (JSON.parse(r.stdout) as { items: Pod[] }).items
    .filter(
      (p) =>
        !p.metadata.deletionTimestamp &&
        p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
    )
    .map((p) => p.status.podIP ?? "");
}

/** Per ready app pod (by IP): http_requests_total of GET /api/v1/products answered `status`. */
async function servedPerPod(ns: string, status: string): Promise<Map<string, number>> {
  const ips = await readyAppPodIps(ns);
  const counts = await Promise.all(
    ips.map(async (ip) => {
      const text = await (await fetch(`http://${ip}:8080/metrics`)).text();
      const line = text
        .split("\n")
        .find(
          (l) =>
            l.startsWith("http_requests_total{") &&
            l.includes('route="/api/v1/products"') &&
            l.includes(`status="${status}"`) &&
            l.includes('method="GET"'),
        );
      return [ip, Number(line?.split(" ").at(-1) ?? 0)] as const;
    }),
  );
  return new Map(counts);
}

describe.skipIf(reason)("the commerce service of a ScalePlatform, through Traefik over TLS", () => {
  const ns = useNamespace("commerce", { "pod-security.kubernetes.io/enforce": "restricted" });
  usePlatformOperator(ns);
  const signingKey = `whsec_${randomBytes(24).toString("base64")}`;
  // The receiver answers 503 (Retry-After 3) to the first attempt of the events listed here.
  const refuseFirst = new Set<string>();
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let key = "";

  const eventsOf = (type: string) =>
    receiver.received
      .map((r) => ({ r, p: JSON.parse(r.body) as { type: string; data: { id: string } } }))
      .filter((x) => x.p.type === type);
  const deliveriesOf = (orderId: string): Received[] =>
    eventsOf("order.created")
      .filter((x) => x.p.data.id === orderId)
      .map((x) => x.r);

  beforeAll(async () => {
    receiver = await startReceiver(clusterEnv().HOST_IP, (r) => {
      const p = JSON.parse(r.body) as { data?: { id?: string } };
      const id = p.data?.id ?? "";
      if (refuseFirst.delete(id)) return { status: 503, headers: { "retry-after": "3" } };
      return { status: 204 };
    });
    await kubectl(["create", "secret", "generic", "hooks", `--from-literal=signing=${signingKey}`], {
      namespace: ns.name,
    });
    // A high request queue for every pod of the namespace, as an adapter over the app's
    // /metrics would report under load: the HPA scales the app to the plan's 3 replicas.
    await setPodsMetric(ns.name, "http_request_queue_length", "100");
    const r = await applyPlatform(ns.name, NAME, {
      plan: "Standard",
      domains: { platform: HOST },
      database: { pvcRetention: "Delete" },
      webhooks: [
        {
          name: "orders",
          url: `${receiver.url}/hooks`,
          events: ["OrderCreated"],
          signingSecretRef: { name: "hooks", key: "signing" },
        },
      ],
    });
    if (r.code !== 0) throw new Error(r.stderr);
    await waitPhase(ns.name, NAME, "Running", 300_000);
    key = await apiKey(ns.name, NAME);
  }, 400_000);

  afterAll(async () => {
    await receiver?.close();
    await setPodsMetric(ns.name, "http_request_queue_length", undefined).catch(() => undefined);
  });

  it("the operator's API key works after deployment; no credential is 401 with WWW-Authenticate", async () => {
    const ok = await api(API, "/api/v1/products", key);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ data: [], nextCursor: null });
    expect(ok.headers.get("ratelimit-policy")).toBe('"per-credential";q=600;w=60');
    const none = await ingressFetch(`https://${API}/api/v1/products`);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    // The API belongs to the API host only.
    expect((await api(HOST, "/api/v1/products", key)).status).toBe(404);
  });

  it("a scoped key is refused outside its scopes, naming the missing scope", async () => {
    const created = await api(API, "/api/v1/api-keys", key, {
      json: { name: "catalog", scopes: ["products:read"] },
    });
    expect(created.status).toBe(201);
    const scoped = ((await created.json()) as { key: string }).key;
    expect((await api(API, "/api/v1/products", scoped)).status).toBe(200);
    const write = await api(API, "/api/v1/products", scoped, { json: productBody("NOPE") });
    expect(write.status).toBe(403);
    expect(write.headers.get("www-authenticate")).toMatch(/insufficient_scope.*products:write/);
    expect((await api(API, "/api/v1/orders", scoped)).status).toBe(403);
  });

  it("client credentials through oauth4webapi yield a JWT the API accepts within its scopes", async () => {
    const created = await api(API, "/api/v1/oauth-clients", key, {
      json: { name: "erp", scopes: ["products:read"] },
    });
    expect(created.status).toBe(201);
    const c = (await created.json()) as { id: string; clientSecret: string };
    const as: oauth.AuthorizationServer = {
      issuer: `https://${API}`,
      token_endpoint: `https://${API}/oauth/token`,
    };
    const client: oauth.Client = { client_id: c.id };
    const res = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(c.clientSecret),
      { scope: "products:read" },
      { [oauth.customFetch]: ingressFetch },
    );
    const token = await oauth.processClientCredentialsResponse(as, client, res);
    expect(token.token_type.toLowerCase()).toBe("bearer");
    const [header, payload] = token.access_token
      .split(".")
      .slice(0, 2)
      .map((p) => JSON.parse(Buffer.from(p, "base64url").toString()) as Record<string, unknown>);
    expect(header).toMatchObject({ typ: "at+jwt", alg: "ES256" });
    expect(payload).toMatchObject({ iss: `https://${API}`, client_id: c.id, scope: "products:read" });
    expect((await api(API, "/api/v1/products", token.access_token)).status).toBe(200);
    expect((await api(API, "/api/v1/orders", token.access_token)).status).toBe(403);
    const tampered = `${token.access_token.slice(0, -4)}AAAA`;
    expect((await api(API, "/api/v1/products", tampered)).status).toBe(401);
  });

  it("with 3 replicas one credential gets exactly its plan's 600 per minute, then 429 with Retry-After and RateLimit", async () => {
    await appReady(ns.name, 3);
    const created = await api(API, "/api/v1/api-keys", key, {
      json: { name: "burst", scopes: ["products:read"] },
    });
    const burst = ((await created.json()) as { key: string }).key;
    // The counter is per calendar minute: start early in one, so the burst (≤ 18 s) stays inside it.
    const sec = new Date().getUTCSeconds();
    if (sec > 35) await new Promise((r) => setTimeout(r, (61 - sec) * 1000));
    const before = await servedPerPod(ns.name, "200");
    let ok = 0;
    let limited: Response | undefined;
    // Paced at 40 requests/s, under the edge's per-client limit of the plan (Standard: 50/s, burst
    // 100, 20 in flight), so every 429 here is the app's shared per-credential limit.
    const t0 = Date.now();
    let sent = 0;
    const worker = async () => {
      while (!limited && ok < 700) {
        const wait = t0 + sent++ * 25 - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (limited) break;
        const r = await api(API, "/api/v1/products?limit=1", burst);
        if (r.status === 200) ok++;
        else if (r.status === 429) limited ??= r;
        else throw new Error(`unexpected HTTP ${r.status}`);
      }
    };
    await Promise.all(Array.from({ length: 12 }, worker));
    const after = await servedPerPod(ns.name, "200");
    expect(limited, "no 429 after 700 requests").toBeDefined();
    // In flight when the first 429 came back: the others may have been answered 200 still, but
    // the shared counter admits no more than the quota.
    expect(ok).toBe(600);
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited?.headers.get("ratelimit")).toMatch(/^"per-credential";r=0;t=\d+$/);
    expect(limited?.headers.get("content-type")).toContain("application/problem+json");
    // Every replica served part of it: one limit across three pods, not three limits.
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    const perPod = [...after].map(([ip, n]) => n - (before.get(ip) ?? 0));
    expect(perPod).toHaveLength(3);
    for (const n of perPod) expect(n).toBeGreaterThan(0);
  }, 180_000);

  it("a receiver on the host gets OrderCreated signed the Standard Webhooks way", async () => {
    expect((await api(API, "/api/v1/products", key, { json: productBody("LAMP") })).status).toBe(201);
    const created = await api(API, "/api/v1/orders", key, {
      json: { lines: [{ sku: "LAMP", quantity: 1 }] },
    });
    expect(created.status).toBe(201);
    const order = (await created.json()) as { id: string };
    const got = await waitFor(() => deliveriesOf(order.id)[0], {
      timeoutMs: 60_000,
      what: "order.created at the receiver",
    });
    const verified = new Webhook(signingKey).verify(got.body, got.headers) as {
      type: string;
      data: { id: string };
    };
    expect(verified.type).toBe("order.created");
    expect(verified.data.id).toBe(order.id);
    // A forged body does not verify.
    expect(() => new Webhook(signingKey).verify(got.body.replace(order.id, "x"), got.headers)).toThrow();
  }, 90_000);

  it("every app pod killed right after an order commits: the event is still delivered, same webhook-id", async () => {
    const created = await api(API, "/api/v1/orders", key, {
      json: { lines: [{ sku: "LAMP", quantity: 1 }] },
    });
    expect(created.status).toBe(201);
    const order = (await created.json()) as { id: string };
    // Its first attempt (if one gets out before the kill) is refused, so the delivery that
    // succeeds is always made by pods started after the kill.
    refuseFirst.add(order.id);
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
      { namespace: ns.name },
    );
    const killedAt = Date.now();
    const ok = await waitFor(() => deliveriesOf(order.id).find((r) => r.status === 204), {
      timeoutMs: 90_000,
      intervalMs: 500,
      what: "delivery of the order after the kill",
    });
    expect(ok.at).toBeGreaterThan(killedAt);
    const ids = new Set(deliveriesOf(order.id).map((r) => r.headers["webhook-id"]));
    expect(ids.size).toBe(1);
    expect(() => new Webhook(signingKey).verify(ok.body, ok.headers)).not.toThrow();
  }, 120_000);

  it("a rolling upgrade (a configuration change rolls every pod) under steady API load fails no request", async () => {
    await appReady(ns.name, 3);
    let stop = false;
    let ok = 0;
    const failures: string[] = [];
    const load = async () => {
      while (!stop) {
        const r = await api(API, "/api/v1/products?limit=5", key).catch((e: Error) => e);
        if (r instanceof Response && r.status === 200) ok++;
        else failures.push(r instanceof Response ? `HTTP ${r.status}` : r.message);
        await new Promise((res) => setTimeout(res, 300));
      }
    };
    const generation = (await getObj<KubeObject>(ns.name, "deployment", NAME))?.metadata.generation ?? 0;
    const workers = [load(), load()];
    try {
      const r = await applyPlatform(ns.name, NAME, {
        plan: "Standard",
        domains: { platform: HOST },
        database: { pvcRetention: "Delete" },
        localization: { currency: "EUR" },
        webhooks: [
          {
            name: "orders",
            url: `${receiver.url}/hooks`,
            events: ["OrderCreated"],
            signingSecretRef: { name: "hooks", key: "signing" },
          },
        ],
      });
      if (r.code !== 0) throw new Error(r.stderr);
      await waitFor(
        async () =>
          ((await getObj<KubeObject>(ns.name, "deployment", NAME))?.metadata.generation ?? 0) > generation ||
          undefined,
        {
          what: "the Deployment to change",
        },
      );
      await appReady(ns.name, 3, 180_000);
      await waitPhase(ns.name, NAME, "Running", 60_000);
    } finally {
      stop = true;
      await Promise.all(workers);
    }
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(40);
  }, 240_000);
});
