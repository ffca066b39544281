import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../../src/runtime/types.ts";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { skipReason } from "../addons/support.ts";
import { applyPlatform, getObj } from "./helpers.ts";
import {
  ingressPorts,
  installPlatformCrd,
  localPlatformConfig,
  type PlatformOperator,
  startPlatformOperator,
} from "./operator.ts";

// Edge protection through the real Traefik of the ingress add-on, with the Middlewares the
// operator made from the plan. Two clients are told apart the way Traefik's rateLimit keys them
// (ipStrategy depth 0: the connection's remote address): one connects from 127.0.0.2, the other
// from 127.0.0.1 — both loopback addresses, so the two clients are real distinct source addresses.
// Plain HTTP (no issuer: the Ingress lists no TLS) keeps the test to the edge. Bounded: 400
// flood requests, 20 probe requests.

const reason = await skipReason("dns", "storage", "ingress");
const ns = useNamespace("splat-edge");
const NAME = "edge";
const HOST = "edge.platform.test";
let op: PlatformOperator | undefined;

/** One GET through Traefik from `localAddress`; status and latency in ms. */
function get(port: number, localAddress: string): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get(
      {
        host: "127.0.0.1",
        port,
        path: "/",
        localAddress,
        headers: { Host: HOST },
        agent: false,
        timeout: 10_000,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0 }));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
  });
}

const rateLimitOf = async () =>
  (
    (await getObj<KubeObject>(ns.name, "middleware.traefik.io", `${NAME}-ratelimit`))?.spec as
      | { rateLimit?: { average?: number; burst?: number } }
      | undefined
  )?.rateLimit;

beforeAll(async () => {
  if (reason) return;
  await installPlatformCrd();
  op = await startPlatformOperator(
    ns.name,
    localPlatformConfig({ defaultIssuer: { name: "", kind: "ClusterIssuer" } }),
  );
}, 120_000);
afterAll(async () => {
  await op?.stop();
});

describe.skipIf(reason)("edge protection at Traefik", () => {
  it("throttles a flooding client with 429 while another client is served; limits follow a plan upgrade", async () => {
    const port = ingressPorts().http;
    expect((await applyPlatform(ns.name, NAME, { plan: "Standard", domains: { platform: HOST } })).code).toBe(
      0,
    );
    expect(await waitFor(rateLimitOf, { timeoutMs: 60_000, what: "rate-limit Middleware" })).toMatchObject({
      average: 50,
      burst: 100,
    });
    const ing = await getObj<KubeObject>(ns.name, "ingress", NAME);
    expect(ing?.metadata.annotations?.["traefik.ingress.kubernetes.io/router.middlewares"]).toContain(
      `${ns.name}-${NAME}-ratelimit@kubernetescrd`,
    );
    // The app answers through the edge (its pod is ready).
    await waitFor(async () => (await get(port, "127.0.0.1").catch(() => ({ status: 0 }))).status === 200, {
      timeoutMs: 180_000,
      intervalMs: 1000,
      what: "the platform answering through Traefik",
    });
    await new Promise((r) => setTimeout(r, 2500)); // refill the bucket the readiness polls used

    // Flood from 127.0.0.2: 400 requests, 10 at a time; meanwhile 20 paced requests from 127.0.0.1.
    const flood: number[] = [];
    const flooder = (async () => {
      for (let i = 0; i < 40; i++) {
        const batch = await Promise.all(Array.from({ length: 10 }, () => get(port, "127.0.0.2")));
        flood.push(...batch.map((b) => b.status));
      }
    })();
    const probes: { status: number; ms: number }[] = [];
    for (let i = 0; i < 20; i++) {
      probes.push(await get(port, "127.0.0.1"));
      await new Promise((r) => setTimeout(r, 50));
    }
    await flooder;
    const limited = flood.filter((s) => s === 429).length;
    expect(limited).toBeGreaterThan(100);
    expect(flood.filter((s) => s !== 429 && s !== 200)).toEqual([]);
    expect(probes.map((p) => p.status)).toEqual(Array(20).fill(200));
    const sorted = probes.map((p) => p.ms).sort((a, b) => a - b);
    const p95 = sorted[Math.floor(sorted.length * 0.95) - 1] ?? 0;
    process.stderr.write(
      `edge: flood 429s ${limited}/400, probe p50 ${sorted[10]?.toFixed(1)} ms p95 ${p95.toFixed(1)} ms\n`,
    );
    expect(p95).toBeLessThan(500);

    // Plan upgrade: the Middleware follows.
    await kubectl(
      ["patch", "scaleplatform", NAME, "--type=merge", "-p", '{"spec":{"plan":"Professional"}}'],
      {
        namespace: ns.name,
      },
    );
    await waitFor(async () => ((await rateLimitOf())?.average === 100 ? true : undefined), {
      timeoutMs: 30_000,
      what: "rate limit raised to Professional's",
    });
    expect(await rateLimitOf()).toMatchObject({ average: 100, burst: 200 });
  }, 300_000);
});
