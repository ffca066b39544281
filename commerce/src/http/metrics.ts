import type { FastifyInstance } from "fastify";
import client from "prom-client";
import { installNetworkMetrics } from "./netdev.ts";

// Prometheus metrics of the HTTP server: requests by route and status, latency, in-flight. The
// route label is the route pattern (never the raw URL: bounded cardinality).

export interface HttpMetrics {
  registry: client.Registry;
}

export function installMetrics(app: FastifyInstance): HttpMetrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  installNetworkMetrics(registry);
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
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const inFlight = new client.Gauge({
    name: "http_requests_in_flight",
    help: "HTTP requests being served.",
    registers: [registry],
  });
  // The HPA's custom metrics (the plans' scaling triggers, src/controllers/scaleplatform/README.md "Autoscaling"): requests waiting or in service, and
  // the mean response time over the last requests.
  const queue = new client.Gauge({
    name: "http_request_queue_length",
    help: "Requests received and not yet answered (in-flight), an HPA custom metric.",
    registers: [registry],
  });
  const recent: number[] = [];
  new client.Gauge({
    name: "http_response_time_ms",
    help: "Mean response time of the last 200 requests in milliseconds, an HPA custom metric.",
    registers: [registry],
    collect() {
      this.set(recent.length ? recent.reduce((a, b) => a + b, 0) / recent.length : 0);
    },
  });
  const started = new WeakMap<object, bigint>();

  app.addHook("onRequest", async (req) => {
    started.set(req, process.hrtime.bigint());
    inFlight.inc();
    queue.inc();
  });
  app.addHook("onResponse", async (req, reply) => {
    inFlight.dec();
    queue.dec();
    const t0 = started.get(req);
    const route = req.routeOptions.url ?? "unmatched";
    requests.inc({ method: req.method, route, status: String(reply.statusCode) });
    if (t0 !== undefined) {
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      duration.observe({ method: req.method, route }, seconds);
      recent.push(seconds * 1000);
      if (recent.length > 200) recent.shift();
    }
  });
  return { registry };
}
