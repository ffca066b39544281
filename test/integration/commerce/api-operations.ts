import { expect, it } from "vitest";
import type { ScalePlatform } from "../../../src/api/v1alpha1/scaleplatform.ts";
import type { KubeObject } from "../../../src/runtime/types.ts";
import { kubectl, waitFor } from "../../support/cluster.ts";
import { applyPlatform, getObj, getPlatform, waitPhase } from "../scaleplatform/helpers.ts";
import { API, appReady, type CommercePlatform, NAME } from "./platform.ts";
import { api, apiJson } from "./support.ts";

// What must hold while the platform runs several replicas and changes: one shared rate limit
// across three pods, a rolling upgrade under load without a failed request, and a setting the
// service refuses shown in the platform's status while the running version keeps serving.

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

export function operationTests(p: CommercePlatform): void {
  it("with 3 replicas one credential gets its plan's bucket (a burst of 600, then one every 0.1 s), then 429 with Retry-After and RateLimit", async () => {
    await appReady(p.ns, 3);
    const { key: burst } = await apiJson<{ key: string }>(API, "/api/v1/api-keys", p.key, 201, {
      json: { name: "burst", scopes: ["products:read"] },
    });
    const before = await servedPerPod(p.ns, "200");
    let ok = 0;
    let limited: Response | undefined;
    // Paced at 40 requests/s, under the edge's per-client limit of the plan (Standard: 50/s, burst
    // 100, 20 in flight), so every 429 here is the app's shared per-credential limit. The limit is a
    // token bucket (GCRA): the new key's burst of 600, refilled at 600 per minute, so at 40/s the
    // bucket runs dry after about 20 s; at most 1,600 requests (40 s) are sent.
    const t0 = Date.now();
    let sent = 0;
    const worker = async () => {
      while (!limited && sent < 1_600) {
        const wait = t0 + sent++ * 25 - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (limited) break;
        const r = await api(API, "/api/v1/products?limit=1", burst);
        if (r.status === 200) ok++;
        else if (r.status === 429) limited ??= r;
        else throw new Error(`unexpected HTTP ${r.status}: ${await r.text()}`);
      }
    };
    await Promise.all(Array.from({ length: 12 }, worker));
    const elapsed = Date.now() - t0;
    const after = await servedPerPod(p.ns, "200");
    expect(limited, `no 429 after ${sent} requests in ${elapsed} ms`).toBeDefined();
    // What the bucket allows by the end (requests in flight when the first 429 came back are
    // counted too): the burst plus one token per 100 ms. The replicas lease tokens in batches from
    // the shared bucket, so together they admit at most 2% over it, and refuse only near its end.
    const allowed = 600 + Math.floor(elapsed / 100);
    expect(ok).toBeLessThanOrEqual(Math.ceil(allowed * 1.02));
    expect(ok).toBeGreaterThanOrEqual(Math.floor(allowed * 0.9));
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited?.headers.get("ratelimit")).toMatch(/^"per-credential";r=0;t=\d+$/);
    expect(limited?.headers.get("content-type")).toContain("application/problem+json");
    // Every replica served part of it: one limit across three pods, not three limits.
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    const perPod = [...after].map(([ip, n]) => n - (before.get(ip) ?? 0));
    expect(perPod).toHaveLength(3);
    for (const n of perPod) expect(n).toBeGreaterThan(0);
  }, 180_000);

  it("a rolling upgrade (a configuration change rolls every pod) under steady API load fails no request", async () => {
    await appReady(p.ns, 3);
    let stop = false;
    let ok = 0;
    const failures: string[] = [];
    const load = async () => {
      while (!stop) {
        const r = await api(API, "/api/v1/products?limit=5", p.key).catch((e: Error) => e);
        if (r instanceof Response && r.status === 200) ok++;
        else failures.push(r instanceof Response ? `HTTP ${r.status}` : r.message);
        await new Promise((res) => setTimeout(res, 300));
      }
    };
    const generation = (await getObj<KubeObject>(p.ns, "deployment", NAME))?.metadata.generation ?? 0;
    const workers = [load(), load()];
    try {
      const r = await applyPlatform(p.ns, NAME, p.spec({ localization: { currency: "EUR" } }));
      if (r.code !== 0) throw new Error(r.stderr);
      await waitFor(
        async () =>
          ((await getObj<KubeObject>(p.ns, "deployment", NAME))?.metadata.generation ?? 0) > generation ||
          undefined,
        { what: "the Deployment to change" },
      );
      await appReady(p.ns, 3, 180_000);
      await waitPhase(p.ns, NAME, "Running", 60_000);
    } finally {
      stop = true;
      await Promise.all(workers);
    }
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(40);
  }, 240_000);

  it("a setting the service refuses fails SoftwareInstalled naming it; the running version keeps serving", async () => {
    // Well-formed for the ScalePlatform schema, but no time zone: the new pods exit with 78.
    const r = await applyPlatform(
      p.ns,
      NAME,
      p.spec({ localization: { currency: "EUR", timezone: "Mars/Olympus" } }),
    );
    if (r.code !== 0) throw new Error(r.stderr);
    const failed = await waitFor(
      async () => {
        const s = (await getPlatform(p.ns, NAME)).status;
        const step = s?.steps?.find((x) => x.name === "SoftwareInstalled");
        return step?.state === "Failed" ? { s, step } : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 1000, what: "SoftwareInstalled Failed" },
    );
    expect(failed.step.message).toMatch(
      /refuses to start \(exit 78\).*CONFIG_LOCALIZATION \(at timezone\): must be an IANA time zone name/,
    );
    const ready = (failed.s as ScalePlatform["status"])?.conditions?.find((c) => c.type === "Ready");
    expect(ready?.message).toMatch(/^SoftwareInstalled: .*CONFIG_LOCALIZATION/);
    // Nothing half-rolled: the pods of the previous configuration still answer.
    expect((await api(API, "/api/v1/products?limit=1", p.key)).status).toBe(200);
  }, 120_000);
}
