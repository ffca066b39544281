import type { FastifyInstance } from "fastify";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import { silentLogger } from "../log.ts";
import { createDashboard } from "./server.ts";
import { FakeViewerApi, injectSignIn } from "./testing.ts";

const PLATFORMS = "/dashboard/compute/platforms/scale";
const TOKEN = "platform-viewer-token";
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start(viewer: FakeViewerApi) {
  app = await createDashboard({ log: silentLogger(), viewerApi: () => viewer });
  return app;
}
const post = (a: FastifyInstance, url: string, cookie: string, payload: Record<string, string>) =>
  a.inject({
    method: "POST",
    url,
    headers: { cookie, origin: "http://dash.test", host: "dash.test" },
    payload,
  });

const platform = (name: string, status: ScalePlatform["status"] = {}): ScalePlatform => ({
  apiVersion: "cronscale.io/v1alpha1",
  kind: "ScalePlatform",
  metadata: { name, namespace: "default" },
  spec: { plan: "Standard", domains: { platform: `${name}.example.test` } } as ScalePlatform["spec"],
  status,
});

describe("dashboard: platforms", () => {
  it("lists platforms with plan, status and step n/7; Deploy only for who may create", async () => {
    const viewer = new FakeViewerApi({ username: "r", groups: [] }, new Set(["list scaleplatforms default"]));
    viewer.platforms.set("default/shop", platform("shop", { phase: "Provisioning", stepSummary: "3/7" }));
    const a = await start(viewer);
    const { body } = await injectSignIn(a, TOKEN, `${PLATFORMS}?namespace=default`);
    expect(body).toContain('data-platform="shop"');
    expect(body).toContain("3/7");
    expect(body).toContain("Provisioning");
    expect(body).not.toContain(">Deploy<");
  });

  it("shows the plan table and summary, the API server's message by the field, then launches", async () => {
    const viewer = new FakeViewerApi({ username: "e", groups: [] }, new Set(["* * *"]));
    const a = await start(viewer);
    const { cookie, csrf, body } = await injectSignIn(a, TOKEN, `${PLATFORMS}/deploy?namespace=default`);
    for (const t of ["Professional", "16 GB", "250 GB", "199 USD", "Launch Platform"])
      expect(body).toContain(t);
    const summary = await post(a, `${PLATFORMS}/deploy?namespace=default`, cookie, {
      _csrf: csrf,
      intent: "summary",
      name: "shop",
      plan: "Enterprise",
      domain: "",
    });
    expect(summary.body).toMatch(/<dt>Plan<\/dt><dd>Enterprise<\/dd>/);
    expect(summary.body).toContain("999 USD");
    const bad = await post(a, `${PLATFORMS}/deploy?namespace=default`, cookie, {
      _csrf: csrf,
      intent: "launch",
      name: "shop",
      plan: "Standard",
      domain: "Not A Host",
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toMatch(/id="domain-error">spec\.domains\.platform must be a host name/);
    expect(viewer.platforms.size).toBe(0);
    const ok = await post(a, `${PLATFORMS}/deploy?namespace=default`, cookie, {
      _csrf: csrf,
      intent: "launch",
      name: "shop",
      plan: "Professional",
      domain: "shop.example.test",
    });
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe(`${PLATFORMS}/deploy?namespace=default&name=shop`);
    expect(viewer.platforms.get("default/shop")?.spec).toEqual({
      plan: "Professional",
      domains: { platform: "shop.example.test" },
    });
    const progress = await a.inject({
      method: "GET",
      url: ok.headers.location as string,
      headers: { cookie },
    });
    expect(progress.body).toContain(`data-sse="${PLATFORMS}/default/shop/events"`);
    expect(progress.body.match(/data-step=/g)).toHaveLength(7);
  });

  it("offers the Custom plan with its resources typed in: summary and cost from them, launched with spec.resources", async () => {
    const viewer = new FakeViewerApi({ username: "e", groups: [] }, new Set(["* * *"]));
    const a = await start(viewer);
    const { cookie, csrf, body } = await injectSignIn(a, TOKEN, `${PLATFORMS}/deploy?namespace=default`);
    expect(body).toMatch(/<input[^>]*value="Custom"/);
    for (const id of ["cpu", "memory", "storage"]) expect(body).toContain(`id="${id}"`);
    const form = { _csrf: csrf, name: "big", plan: "Custom", domain: "big.example.test" };
    const empty = await post(a, `${PLATFORMS}/deploy?namespace=default`, cookie, {
      ...form,
      intent: "summary",
    });
    expect(empty.body).toContain("enter the Custom plan's vCPU, memory and storage");
    expect(empty.body).toMatch(/<dt>Monthly cost<\/dt><dd>— \(list price estimate\)/);
    const typed = { ...form, cpu: "24", memory: "48Gi", storage: "1Ti" };
    const summary = await post(a, `${PLATFORMS}/deploy?namespace=default`, cookie, {
      ...typed,
      intent: "summary",
    });
    expect(summary.body).toMatch(/<dt>Plan<\/dt><dd>Custom<\/dd>/);
    expect(summary.body).toContain("24 vCPU, 48 GB RAM, 1024 GB storage");
    // 24 × 30 + 48 × 10 + 1024 × 0.2 with the default price table.
    expect(summary.body).toContain("1404.80 USD (list price estimate)");
    const ok = await post(a, `${PLATFORMS}/deploy?namespace=default`, cookie, { ...typed, intent: "launch" });
    expect(ok.statusCode).toBe(303);
    expect(viewer.platforms.get("default/big")?.spec).toEqual({
      plan: "Custom",
      domains: { platform: "big.example.test" },
      resources: { cpu: "24", memory: "48Gi", storage: "1Ti" },
    });
    const progress = await a.inject({
      method: "GET",
      url: ok.headers.location as string,
      headers: { cookie },
    });
    expect(progress.body).toContain("24 vCPU, 48 GB RAM, 1024 GB storage");
  });

  it("shows health, uptime and usage as reported (metrics API or a plain 'not reported'), and the configuration groups", async () => {
    const viewer = new FakeViewerApi({ username: "e", groups: [] }, new Set(["* * *"]));
    const p = platform("shop", {
      phase: "Running",
      uptimePercent: 99.5,
      uptimeSince: "2026-11-20T00:00:00Z",
      lastRestartTime: "2026-11-22T08:00:00Z",
      healthCheck: { status: "Healthy" },
      resources: {
        cpu: "4",
        memory: "8Gi",
        storage: "100Gi",
        appReplicas: 2,
        minReplicas: 1,
        maxReplicas: 3,
      },
    });
    p.spec = {
      ...p.spec,
      localization: {
        defaultLanguage: "de",
        currency: "EUR",
        timezone: "Europe/Berlin",
        dateFormat: "DD.MM.YYYY",
      },
      shippingMethods: [
        {
          name: "dhl-eu",
          carrier: "dhl",
          zones: ["DE", "AT"],
          rate: { calculation: "Flat", amount: "4.90", currency: "EUR" },
          fulfillment: "Ship",
          enabled: true,
        },
      ],
    } as typeof p.spec;
    viewer.platforms.set("default/shop", p);
    const a = await start(viewer);
    const url = `${PLATFORMS}/deploy?namespace=default&name=shop`;
    const { cookie, body } = await injectSignIn(a, TOKEN, url);
    for (const t of [
      "99.50 %",
      "Healthy",
      "2 running (autoscaling 1–3)",
      "the cluster serves no metrics API",
      "not reported: no ready app pod answered",
    ])
      expect(body).toContain(t);
    expect(body).toContain("2026-11-22 09:00:00 +01:00"); // last restart in the store's zone
    expect(body).toMatch(/<dt>Currency<\/dt><dd data-field="loc-currency">EUR<\/dd>/);
    expect(body).toContain("DE, AT");
    viewer.usage.set("default cronscale.io/platform=shop", { pods: 3, cpuMillis: 750, memoryMiB: 1536 });
    const again = await a.inject({ method: "GET", url, headers: { cookie } });
    expect(again.body).toContain("0.75 vCPU over 3 pods (18.8 % of 4 vCPU)");
    expect(again.body).toContain("1536 MiB over 3 pods (18.8 % of 8Gi)");
  });

  it("streams the steps as Server-Sent Events each time the platform changes", async () => {
    const viewer = new FakeViewerApi({ username: "e", groups: [] }, new Set(["* * *"]));
    viewer.platforms.set("default/shop", platform("shop"));
    const a = await start(viewer);
    const { cookie } = await injectSignIn(a, TOKEN, `${PLATFORMS}?namespace=default`);
    const base = await a.listen({ host: "127.0.0.1", port: 0 });
    const abort = new AbortController();
    const res = await fetch(`${base}${PLATFORMS}/default/shop/events`, {
      headers: { cookie },
      signal: abort.signal,
    });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    const until = async (needle: string) => {
      while (!text.includes(needle)) text += new TextDecoder().decode((await reader.read()).value);
    };
    await until("0/7 steps done");
    viewer.setPlatform(
      platform("shop", {
        phase: "Provisioning",
        stepSummary: "1/7",
        steps: [{ name: "InfrastructureProvisioned", state: "Done" }],
      }),
    );
    await until("1/7 steps done");
    expect(text).toMatch(/event: steps\ndata: /);
    expect(text).toContain('data-step="InfrastructureProvisioned" data-state="Done"');
    abort.abort();
  });

  it("reveals the admin credentials on a POST only to who may read Secrets; stops and starts", async () => {
    const viewer = new FakeViewerApi({ username: "e", groups: [] }, new Set(["* * *"]));
    viewer.platforms.set("default/shop", platform("shop", { credentialsSecretName: "shop-credentials" }));
    const b64 = (v: string) => Buffer.from(v).toString("base64");
    viewer.secrets.set("default/shop-credentials", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "shop-credentials" },
      data: {
        "admin-username": b64("admin"),
        "admin-password": b64("s3cret-pass"),
        "api-key": b64("csk_abc"),
      },
    });
    const a = await start(viewer);
    const page = `${PLATFORMS}/deploy?namespace=default&name=shop`;
    const { cookie, csrf, body } = await injectSignIn(a, TOKEN, page);
    expect(body).not.toContain("s3cret-pass");
    expect(body).toContain("Reveal credentials");
    const shown = await post(a, `${PLATFORMS}/default/shop/credentials`, cookie, { _csrf: csrf });
    expect(shown.headers["cache-control"]).toBe("no-store");
    expect(shown.body).toContain("s3cret-pass");
    expect(shown.body).toContain("csk_abc");
    const stop = await post(a, `${PLATFORMS}/default/shop/stop`, cookie, { _csrf: csrf });
    expect(stop.statusCode).toBe(303);
    expect(viewer.platforms.get("default/shop")?.spec.stopped).toBe(true);
    const after = await a.inject({ method: "GET", url: page, headers: { cookie } });
    expect(after.body).toContain(">Start<");

    const reader = new FakeViewerApi(
      { username: "r", groups: [] },
      new Set(["get scaleplatforms default", "list scaleplatforms default"]),
    );
    reader.platforms = viewer.platforms;
    await a.close();
    const b = await start(reader);
    const r = await injectSignIn(b, TOKEN, page);
    expect(r.body).not.toContain("Reveal credentials");
    expect(r.body).not.toContain(">Stop<");
    const forged = await post(b, `${PLATFORMS}/default/shop/credentials`, r.cookie, { _csrf: r.csrf });
    expect(forged.statusCode).toBe(403);
    expect(forged.body).not.toContain("s3cret-pass");
  });

  it("upgrades to a higher plan, shows the API server's refusal of a downgrade, adds a webhook", async () => {
    const viewer = new FakeViewerApi({ username: "e", groups: [] }, new Set(["* * *"]));
    viewer.platforms.set("default/shop", platform("shop"));
    const a = await start(viewer);
    const page = `${PLATFORMS}/deploy?namespace=default&name=shop`;
    const { cookie, csrf, body } = await injectSignIn(a, TOKEN, page);
    expect(body).toContain("Upgrade Now");
    expect(body).toMatch(/<option value="Professional">/);
    expect(body).not.toMatch(/<option value="Standard">/);
    expect(
      (await post(a, `${PLATFORMS}/default/shop/upgrade`, cookie, { _csrf: csrf, plan: "Enterprise" }))
        .statusCode,
    ).toBe(303);
    expect(viewer.platforms.get("default/shop")?.spec.plan).toBe("Enterprise");
    const down = await post(a, `${PLATFORMS}/default/shop/upgrade`, cookie, {
      _csrf: csrf,
      plan: "Standard",
    });
    expect(down.statusCode).toBe(422);
    expect(down.body).toContain(
      "The API server refused the change: cannot change plan from Enterprise to Standard",
    );
    const hook = await a.inject({
      method: "POST",
      url: `${PLATFORMS}/default/shop/webhooks`,
      headers: {
        cookie,
        origin: "http://dash.test",
        host: "dash.test",
        "content-type": "application/x-www-form-urlencoded",
      },
      payload: `_csrf=${encodeURIComponent(csrf)}&name=orders&url=${encodeURIComponent("https://hooks.example.test/x")}&events=OrderCreated&events=PaymentReceived`,
    });
    expect(hook.statusCode).toBe(200);
    expect(viewer.platforms.get("default/shop")?.spec.webhooks).toEqual([
      {
        name: "orders",
        url: "https://hooks.example.test/x",
        events: ["OrderCreated", "PaymentReceived"],
        signingSecretRef: { name: "shop-webhook-orders", key: "signing-key" },
      },
    ]);
    const after = await a.inject({ method: "GET", url: page, headers: { cookie } });
    expect(after.body).toContain('data-webhook="orders"');
    // Enterprise is the top fixed tier: Custom is what is left to offer.
    const offered = /<select id="upgrade-plan"[^>]*>(.*?)<\/select>/.exec(after.body)?.[1];
    expect(offered).toBe('<option value="Custom">Custom</option>');
  });

  it("offers Custom as an upgrade only where it raises every resource", async () => {
    const viewer = new FakeViewerApi({ username: "e", groups: [] }, new Set(["* * *"]));
    viewer.platforms.set("default/shop", platform("shop"));
    const a = await start(viewer);
    const { cookie, csrf, body } = await injectSignIn(
      a,
      TOKEN,
      `${PLATFORMS}/deploy?namespace=default&name=shop`,
    );
    expect(body).toMatch(/<option value="Custom">/);
    expect(body).toContain("every resource above today's 4 vCPU, 8 GB memory and 100 GB storage");
    const same = await post(a, `${PLATFORMS}/default/shop/upgrade`, cookie, {
      _csrf: csrf,
      plan: "Custom",
      cpu: "8",
      memory: "8Gi",
      storage: "100Gi",
    });
    expect(same.statusCode).toBe(422);
    expect(same.body).toContain(
      "A Custom upgrade raises every resource of Standard: memory must be above 8 GB, storage must be above 100 GB.",
    );
    expect(viewer.platforms.get("default/shop")?.spec.plan).toBe("Standard");
    const bad = await post(a, `${PLATFORMS}/default/shop/upgrade`, cookie, {
      _csrf: csrf,
      plan: "Custom",
      cpu: "lots",
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain("needs vCPU, memory and storage as quantities");
    const up = await post(a, `${PLATFORMS}/default/shop/upgrade`, cookie, {
      _csrf: csrf,
      plan: "Custom",
      cpu: "6",
      memory: "12Gi",
      storage: "200Gi",
    });
    expect(up.statusCode).toBe(303);
    const spec = viewer.platforms.get("default/shop")?.spec;
    expect(spec?.plan).toBe("Custom");
    expect(spec?.resources).toEqual({ cpu: "6", memory: "12Gi", storage: "200Gi" });
  });

  it("prices the summary from the installation's prices and promises backups only when the operator reports them", async () => {
    const viewer = new FakeViewerApi({ username: "e", groups: [] }, new Set(["* * *"]));
    app = await createDashboard({
      log: silentLogger(),
      viewerApi: () => viewer,
      prices: {
        currency: "EUR",
        Standard: 149,
        Professional: 399,
        Enterprise: 899,
        perVcpu: 20,
        perGiBMemory: 5,
        perGiBStorage: 0.1,
      },
    });
    const { cookie, csrf, body } = await injectSignIn(app, TOKEN, `${PLATFORMS}/deploy?namespace=default`);
    expect(body).toContain("149 EUR (list price estimate)");
    expect(body).not.toMatch(/backups/i);
    const custom = await post(app, `${PLATFORMS}/deploy?namespace=default`, cookie, {
      _csrf: csrf,
      intent: "summary",
      name: "shop",
      plan: "Custom",
      cpu: "10",
      memory: "20Gi",
      storage: "300Gi",
    });
    expect(custom.body).toContain("330.00 EUR (list price estimate)"); // 10 × 20 + 20 × 5 + 300 × 0.1
    viewer.platforms.set(
      "default/none",
      platform("none", {
        features: ["Automatic SSL certificates", "DDoS protection"],
        conditions: [
          {
            type: "BackupHealthy",
            status: "False",
            reason: "NotConfigured",
            message: "",
            lastTransitionTime: "2026-11-01T00:00:00Z",
          },
        ],
      }),
    );
    viewer.platforms.set(
      "default/kept",
      platform("kept", {
        features: ["Automatic SSL certificates", "Daily backups", "DDoS protection"],
        conditions: [
          {
            type: "BackupHealthy",
            status: "True",
            reason: "BackedUp",
            message: "",
            lastTransitionTime: "2026-11-01T00:00:00Z",
          },
        ],
      }),
    );
    const none = await app.inject({
      method: "GET",
      url: `${PLATFORMS}/deploy?namespace=default&name=none`,
      headers: { cookie },
    });
    expect(none.body).toContain("<dt>Included</dt><dd>Automatic SSL certificates, DDoS protection</dd>");
    expect(none.body).toContain("Not configured.");
    expect(none.body).not.toMatch(/daily backups/i);
    const kept = await app.inject({
      method: "GET",
      url: `${PLATFORMS}/deploy?namespace=default&name=kept`,
      headers: { cookie },
    });
    expect(kept.body).toContain("Automatic SSL certificates, Daily backups, DDoS protection");
    expect(kept.body).toContain("No backup yet.");
  });

  it("makes a webhook's signing secret, shows it once, rotates it, edits the events, removes the webhook and its Secret", async () => {
    const viewer = new FakeViewerApi({ username: "e", groups: [] }, new Set(["* * *"]));
    viewer.platforms.set("default/shop", {
      ...platform("shop"),
      metadata: { name: "shop", namespace: "default", uid: "u-shop" },
    });
    const a = await start(viewer);
    const page = `${PLATFORMS}/deploy?namespace=default&name=shop`;
    const { cookie, csrf } = await injectSignIn(a, TOKEN, page);
    const form = (url: string, body: string) =>
      a.inject({
        method: "POST",
        url,
        headers: {
          cookie,
          origin: "http://dash.test",
          host: "dash.test",
          "content-type": "application/x-www-form-urlencoded",
        },
        payload: `_csrf=${encodeURIComponent(csrf)}&${body}`,
      });
    const added = await form(
      `${PLATFORMS}/default/shop/webhooks`,
      `name=erp&url=${encodeURIComponent("https://erp.example.test/hook")}&events=OrderCreated`,
    );
    expect(added.statusCode).toBe(200);
    const shown =
      /aria-label="Signing secret of erp"><code>(whsec_[A-Za-z0-9+/=]+)<\/code>/.exec(added.body)?.[1] ?? "";
    expect(shown).toMatch(/^whsec_/);
    const stored = viewer.secrets.get("default/shop-webhook-erp");
    expect(Buffer.from(stored?.data?.["signing-key"] ?? "", "base64").toString()).toBe(shown);
    expect(stored?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "ScalePlatform",
      name: "shop",
      uid: "u-shop",
    });
    // What the commerce service signs with that key, a receiver holding the shown secret verifies.
    const payload = JSON.stringify({ type: "OrderCreated", data: { id: 1 } });
    const headers = {
      "webhook-id": "msg_1",
      "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
      "webhook-signature": "",
    };
    headers["webhook-signature"] = new Webhook(shown).sign("msg_1", new Date(), payload);
    expect(new Webhook(shown).verify(payload, headers)).toEqual(JSON.parse(payload));
    // Shown once: the page does not show it again.
    const again = await a.inject({ method: "GET", url: page, headers: { cookie } });
    expect(again.body).not.toContain(shown);
    expect(again.body).toContain("with Secret <code>shop-webhook-erp</code>");

    const rotated = await form(`${PLATFORMS}/default/shop/webhooks/erp/rotate`, "");
    const next = /aria-label="Signing secret of erp"><code>(whsec_[^<]+)<\/code>/.exec(rotated.body)?.[1];
    expect(next).toMatch(/^whsec_/);
    expect(next).not.toBe(shown);
    expect(() => new Webhook(next ?? "").verify(payload, headers)).toThrow();

    expect(
      (await form(`${PLATFORMS}/default/shop/webhooks/erp/events`, "events=OrderCreated&events=InventoryLow"))
        .statusCode,
    ).toBe(303);
    expect(viewer.platforms.get("default/shop")?.spec.webhooks?.[0]?.events).toEqual([
      "OrderCreated",
      "InventoryLow",
    ]);

    expect((await form(`${PLATFORMS}/default/shop/webhooks/erp/remove`, "")).statusCode).toBe(303);
    expect(viewer.platforms.get("default/shop")?.spec.webhooks).toEqual([]);
    expect(viewer.secrets.has("default/shop-webhook-erp")).toBe(false);
  });
});
