import type { FastifyInstance } from "fastify";
import client from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import { silentLogger } from "../log.ts";
import { createDashboard } from "./server.ts";
import { FakeViewerApi, injectSignIn } from "./testing.ts";

// The platform page's Resources and usage and Performance sections: the app pods' /metrics read
// as the viewer (list pods, get pods/proxy), totals on the first read, rates over the interval
// after that, refused reads said so, and the live part streamed again every refresh.

const PLATFORMS = "/dashboard/compute/platforms/scale";
const PAGE = `${PLATFORMS}/deploy?namespace=default&name=shop`;
const SELECTOR = "default cronscale.io/platform=shop,app.kubernetes.io/component=app";
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const shop: ScalePlatform = {
  apiVersion: "cronscale.io/v1alpha1",
  kind: "ScalePlatform",
  metadata: { name: "shop", namespace: "default" },
  spec: { plan: "Standard", domains: { platform: "shop.example.test" } } as ScalePlatform["spec"],
  status: { phase: "Running", resources: { cpu: "2", memory: "4Gi", storage: "1Gi" } },
};

/** One app pod's /metrics as prom-client writes it. */
function pod() {
  const registry = new client.Registry();
  const requests = new client.Counter({
    name: "http_requests_total",
    help: "h",
    labelNames: ["method", "route", "status"] as const,
    registers: [registry],
  });
  const duration = new client.Histogram({
    name: "http_request_duration_seconds",
    help: "h",
    labelNames: ["method", "route"] as const,
    registers: [registry],
  });
  const cache = new client.Counter({
    name: "commerce_product_cache_requests_total",
    help: "h",
    labelNames: ["result"] as const,
    registers: [registry],
  });
  const rx = new client.Counter({
    name: "commerce_pod_network_receive_bytes_total",
    help: "h",
    registers: [registry],
  });
  new client.Counter({ name: "commerce_pod_network_transmit_bytes_total", help: "h", registers: [registry] });
  new client.Gauge({ name: "commerce_database_size_bytes", help: "h", registers: [registry] }).set(
    256 * 1024 ** 2,
  );
  return {
    registry,
    serve(n: number, status: number, seconds: number, cached: "hit" | "miss") {
      for (let i = 0; i < n; i++) {
        requests.inc({ method: "GET", route: "/api/v1/products/:id", status: String(status) });
        duration.observe({ method: "GET", route: "/api/v1/products/:id" }, seconds);
        cache.inc({ result: cached });
        rx.inc(1024);
      }
    },
  };
}

async function expose(viewer: FakeViewerApi, pods: Record<string, ReturnType<typeof pod>>) {
  const texts = new Map<string, string>();
  for (const [name, p] of Object.entries(pods)) texts.set(name, await p.registry.metrics());
  viewer.metricsTexts.set(SELECTOR, texts);
}

const figure = (body: string, name: string) =>
  (new RegExp(`data-figure="${name}">(.*?)</dd>`).exec(body)?.[1] ?? `(no ${name} in page)`).replace(
    /<[^>]*>/g,
    "",
  );

describe("dashboard: platform usage and performance", () => {
  it("shows totals on the first read and rates over the interval on the next, summed over the app pods", async () => {
    const viewer = new FakeViewerApi({ username: "e", groups: [] }, new Set(["* * *"]));
    viewer.platforms.set("default/shop", shop);
    let now = Date.parse("2026-11-23T12:00:00Z");
    app = await createDashboard({ log: silentLogger(), viewerApi: () => viewer, now: () => new Date(now) });
    const [a, b] = [pod(), pod()];
    a.serve(10, 200, 0.5, "miss");
    await expose(viewer, { a, b });
    const { cookie, body } = await injectSignIn(app, "t", PAGE);
    expect(viewer.calls).toContain(`metrics ${SELECTOR} /metrics`);
    expect(body).toContain("Totals since the app pods started (2 app pods)");
    expect(figure(body, "requests-per-second")).toBe("10 requests since the pods started");
    expect(figure(body, "response-time")).toBe("500.0 ms");
    expect(figure(body, "storage")).toBe("database 256.0 MiB of 1Gi (25.0 %)");
    expect(figure(body, "network")).toBe("10.0 KiB in, 0 B out since the pods started");

    now += 20_000;
    a.serve(30, 200, 0.01, "hit");
    b.serve(9, 200, 0.01, "hit");
    b.serve(1, 503, 0.41, "miss");
    await expose(viewer, { a, b });
    const again = (await app.inject({ method: "GET", url: PAGE, headers: { cookie } })).body;
    expect(again).toContain("Rates over the last 20 s (2 app pods)");
    expect(figure(again, "requests-per-second")).toBe("2.00 requests/s");
    expect(figure(again, "request-rate")).toBe("2.00 requests/s");
    expect(figure(again, "response-time")).toBe("20.0 ms"); // (39 × 10 ms + 410 ms) / 40
    expect(figure(again, "error-rate")).toBe("2.50 % answered 5xx");
    expect(figure(again, "cache-hit-rate")).toBe("97.5 % of API product reads");
    expect(figure(again, "network")).toBe("2.0 KiB/s in, 0 B/s out");
  });

  it("a viewer who may not proxy to the pods is told so; the metrics API's refusal stays separate", async () => {
    const viewer = new FakeViewerApi(
      { username: "r", groups: [] },
      new Set(["get scaleplatforms default", "list pods default", "list pods.metrics.k8s.io default"]),
    );
    viewer.platforms.set("default/shop", shop);
    viewer.usage.set("default cronscale.io/platform=shop", { pods: 2, cpuMillis: 300, memoryMiB: 200 });
    await expose(viewer, { a: pod() });
    app = await createDashboard({ log: silentLogger(), viewerApi: () => viewer });
    const { body } = await injectSignIn(app, "t", PAGE);
    expect(body).toContain("0.30 vCPU over 2 pods");
    for (const f of ["storage", "network", "request-rate", "response-time", "error-rate", "cache-hit-rate"])
      expect(figure(body, f)).toBe("you may not read the platform's metrics");
  });

  it("streams the usage and performance again every refresh (Server-Sent Events)", async () => {
    const viewer = new FakeViewerApi({ username: "e", groups: [] }, new Set(["* * *"]));
    viewer.platforms.set("default/shop", shop);
    const a = pod();
    await expose(viewer, { a });
    app = await createDashboard({ log: silentLogger(), viewerApi: () => viewer, usageRefreshSeconds: 0.05 });
    const { cookie, body } = await injectSignIn(app, "t", PAGE);
    expect(body).toContain(`data-sse="${PLATFORMS}/default/shop/usage/events" data-sse-event="usage"`);
    const base = await app.listen({ host: "127.0.0.1", port: 0 });
    const abort = new AbortController();
    const res = await fetch(`${base}${PLATFORMS}/default/shop/usage/events`, {
      headers: { cookie },
      signal: abort.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    a.serve(3, 200, 0.02, "hit");
    await expose(viewer, { a });
    while (!text.includes("of API product reads"))
      text += new TextDecoder().decode((await reader.read()).value);
    expect(text).toMatch(/event: usage\ndata: /);
    expect(text).toContain("100.0 % of API product reads");
    abort.abort();
  });
});
