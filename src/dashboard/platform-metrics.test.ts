import client from "prom-client";
import { describe, expect, it } from "vitest";
import {
  MetricsHistory,
  type MetricsSample,
  parsePromText,
  performance,
  podCounters,
} from "./platform-metrics.ts";

// The families the commerce app registers, filled and exposed by prom-client itself, so the
// parser reads what the pods really serve.
function app() {
  const registry = new client.Registry();
  const requests = new client.Counter({
    name: "http_requests_total",
    help: "HTTP requests by method, route and status code.",
    labelNames: ["method", "route", "status"] as const,
    registers: [registry],
  });
  const duration = new client.Histogram({
    name: "http_request_duration_seconds",
    help: "HTTP request latency by method and route.",
    labelNames: ["method", "route"] as const,
    buckets: [0.005, 0.01, 0.1, 1],
    registers: [registry],
  });
  const cache = new client.Counter({
    name: "commerce_product_cache_requests_total",
    help: "Product reads by cache result.",
    labelNames: ["result"] as const,
    registers: [registry],
  });
  const rx = new client.Counter({
    name: "commerce_pod_network_receive_bytes_total",
    help: "rx",
    registers: [registry],
  });
  const tx = new client.Counter({
    name: "commerce_pod_network_transmit_bytes_total",
    help: "tx",
    registers: [registry],
  });
  const db = new client.Gauge({ name: "commerce_database_size_bytes", help: "db", registers: [registry] });
  const hit = (route: string, status: number, seconds: number, n = 1) => {
    for (let i = 0; i < n; i++) {
      requests.inc({ method: "GET", route, status: String(status) });
      duration.observe({ method: "GET", route }, seconds);
    }
  };
  return { registry, hit, cache, rx, tx, db };
}

const sample = async (at: number, pods: Record<string, client.Registry>): Promise<MetricsSample> => ({
  at,
  pods: new Map(
    await Promise.all(
      Object.entries(pods).map(async ([n, r]) => [n, podCounters(await r.metrics())] as const),
    ),
  ),
});

describe("the text exposition format", () => {
  it("reads names, labels with escapes, special values and timestamps; skips comments and junk", () => {
    const text = [
      "# HELP x_total A counter.",
      "# TYPE x_total counter",
      'x_total{path="/a\\"b\\\\c",le="+Inf"} 3 1700000000000',
      "y 4.5e3",
      'z{a="1",} NaN',
      "w +Inf",
      "not a sample line {",
      "",
    ].join("\n");
    expect(parsePromText(text)).toEqual([
      { name: "x_total", labels: { path: '/a"b\\c', le: "+Inf" }, value: 3 },
      { name: "y", labels: {}, value: 4500 },
      { name: "w", labels: {}, value: Number.POSITIVE_INFINITY },
    ]);
  });

  it("sums a pod's shop requests, 5xx, latency and cache reads, leaving probes and scrapes out", async () => {
    const a = app();
    a.hit("/api/v1/products", 200, 0.02, 3);
    a.hit("/api/v1/orders", 503, 0.1);
    a.hit("/readyz", 200, 5, 10);
    a.hit("/metrics", 200, 5);
    a.cache.inc({ result: "hit" }, 6);
    a.cache.inc({ result: "miss" }, 1);
    a.cache.inc({ result: "bypass" }, 1);
    a.rx.inc(2048);
    a.tx.inc(4096);
    a.db.set(50 * 1024 ** 2);
    const c = podCounters(await a.registry.metrics());
    expect(c).toMatchObject({
      requests: 4,
      errors: 1,
      durationCount: 4,
      cacheHits: 6,
      cacheReads: 8,
      receiveBytes: 2048,
      transmitBytes: 4096,
      databaseBytes: 50 * 1024 ** 2,
    });
    expect(c.durationSeconds).toBeCloseTo(0.16);
    expect(podCounters("").receiveBytes).toBeUndefined();
  });
});

describe("rates between two samples", () => {
  it("without an earlier sample: totals since the pods started", async () => {
    const a = app();
    a.hit("/api/v1/products", 200, 0.01, 4);
    const p = performance(await sample(0, { a: a.registry }));
    expect(p).toMatchObject({ intervalSeconds: undefined, pods: 1, requests: 4, errorRate: 0 });
    expect(p.averageResponseMs).toBeCloseTo(10);
  });

  it("sums each pod's increase over the interval: requests/s, 5xx share, Δsum/Δcount, hit rate, bytes/s", async () => {
    const [a, b] = [app(), app()];
    a.hit("/api/v1/products", 200, 1, 100); // before: slow, must not weigh in the average
    a.cache.inc({ result: "miss" }, 50);
    a.rx.inc(1000);
    const first = await sample(1_000, { a: a.registry, b: b.registry });
    a.hit("/api/v1/products", 200, 0.02, 15);
    b.hit("/api/v1/products", 200, 0.02, 4);
    b.hit("/api/v1/orders", 500, 0.12);
    a.cache.inc({ result: "hit" }, 9);
    b.cache.inc({ result: "miss" }, 1);
    a.rx.inc(10_000);
    b.tx.inc(5_000);
    const p = performance(await sample(11_000, { a: a.registry, b: b.registry }), first);
    expect(p.intervalSeconds).toBe(10);
    expect(p.pods).toBe(2);
    expect(p.requests).toBeCloseTo(2); // 20 requests in 10 s
    expect(p.errorRate).toBeCloseTo(0.05);
    expect(p.averageResponseMs).toBeCloseTo((19 * 20 + 120) / 20);
    expect(p.cacheHitRate).toBeCloseTo(0.9);
    expect(p.receiveBytes).toBeCloseTo(1000);
    expect(p.transmitBytes).toBeCloseTo(500);
  });

  it("a restarted pod counts from zero; a pod absent from the earlier sample is left out", async () => {
    const [a, b] = [app(), app()];
    a.hit("/x", 200, 0.01, 50);
    const first = await sample(0, { a: a.registry });
    const restarted = app();
    restarted.hit("/x", 200, 0.01, 5);
    b.hit("/x", 200, 0.01, 1000);
    const p = performance(await sample(5_000, { a: restarted.registry, b: b.registry }), first);
    expect(p.pods).toBe(1);
    expect(p.requests).toBeCloseTo(1); // 5 in 5 s, never negative
    const quiet = performance(
      await sample(10_000, { a: restarted.registry }),
      await sample(5_000, { a: restarted.registry }),
    );
    expect(quiet).toMatchObject({
      requests: 0,
      errorRate: undefined,
      averageResponseMs: undefined,
      cacheHitRate: undefined,
    });
  });
});

describe("the samples kept per platform", () => {
  const at = (ms: number, requests: number): MetricsSample => ({
    at: ms,
    pods: new Map([["a", { ...podCounters(""), requests }]]),
  });

  it("rates against the previous sample; one too close is compared with the one before; stale ones are not used", () => {
    const h = new MetricsHistory({ ttlMs: 60_000, minIntervalMs: 2000 });
    expect(h.observe("ns/shop", at(0, 10)).intervalSeconds).toBeUndefined();
    expect(h.observe("ns/shop", at(10_000, 30))).toMatchObject({ intervalSeconds: 10, requests: 2 });
    // 0.5 s later (a second viewer): against the sample 10.5 s before, not a 0.5 s interval.
    expect(h.observe("ns/shop", at(10_500, 31))).toMatchObject({ intervalSeconds: 10.5, requests: 2 });
    expect(h.observe("ns/shop", at(20_500, 51))).toMatchObject({ intervalSeconds: 10, requests: 2 });
    expect(h.observe("ns/shop", at(200_000, 60)).intervalSeconds).toBeUndefined();
    expect(h.observe("ns/other", at(0, 1)).intervalSeconds).toBeUndefined();
  });

  it("keeps at most `max` platforms, dropping the least recently sampled", () => {
    const h = new MetricsHistory({ max: 2 });
    h.observe("a", at(0, 1));
    h.observe("b", at(0, 1));
    h.observe("a", at(5000, 1));
    h.observe("c", at(5000, 1));
    expect(h.size).toBe(2);
    expect(h.observe("c", at(10_000, 1)).intervalSeconds).toBe(5);
    expect(h.observe("b", at(10_000, 1)).intervalSeconds).toBeUndefined(); // dropped for c
    expect(h.observe("a", at(15_000, 1)).intervalSeconds).toBeUndefined(); // dropped for b
  });
});
