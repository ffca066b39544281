import http from "node:http";
import type { FastifyInstance } from "fastify";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScalePlatform } from "../../../src/api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformRestore } from "../../../src/api/v1alpha1/scaleplatformrestore.ts";
import {
  launchChromium,
  newContext,
  screenshots,
  seriousA11yViolations,
  type TestBrowser,
} from "../../support/browser.ts";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { skipReason } from "../addons/support.ts";
import {
  apiKey,
  applyPlatform,
  createS3Secret,
  getPlatform,
  s3Repository,
} from "../scaleplatform/helpers.ts";
import {
  ingressPorts,
  servedViaIngress,
  usePlatformOperator,
  viaIngress,
} from "../scaleplatform/operator.ts";
import { createViewers, phoneOverflow, startDashboard } from "./helpers.ts";

// The Recovery section in Chromium against the real platform: the operator (in this process)
// runs PostgreSQL with pgBackRest into the S3 add-on, and the first backup lands. A viewer who
// may create restores picks the recovery point from the list, is told beside the field when a
// point in time lies outside the window, restores to the backup, and follows the restore live
// to Succeeded with its measured downtime. A viewer who may only read sees no form, and a forged
// post gets the API server's 403.

const reason = await skipReason("dns", "storage", "s3", "ingress");
const NAME = "undo";
const ZONE = "America/New_York";
const PAGE = (ns: string) => `/dashboard/compute/platforms/scale/${ns}/${NAME}/backups`;

describe.skipIf(reason)("platform recovery in Chromium against the real operator", () => {
  const ns = useNamespace("dash-rs", { "pod-security.kubernetes.io/enforce": "restricted" });
  usePlatformOperator(ns);
  let app: FastifyInstance;
  let base = "";
  let chromium: TestBrowser;
  const tokens = { restorer: "", auditor: "" };
  let platform: ScalePlatform;

  beforeAll(async () => {
    await createS3Secret(ns.name);
    const applied = await applyPlatform(ns.name, NAME, {
      plan: "Standard",
      domains: { platform: `${NAME}.platform.test` },
      localization: { timezone: ZONE },
      backup: {
        repository: s3Repository(),
      },
    });
    expect(applied.code, applied.stderr).toBe(0);
    // Meanwhile: the dashboard, the browser, then the viewers with their tokens.
    ({ app, base } = await startDashboard([ns.name], { usageRefreshSeconds: 3 }));
    chromium = await launchChromium();
    Object.assign(
      tokens,
      await createViewers(ns.name, {
        restorer: {
          rules: [
            "{apiGroups: [cronscale.io], resources: [scaleplatforms, scaleplatformbackups], verbs: [get, list, watch]}",
            "{apiGroups: [cronscale.io], resources: [scaleplatformrestores], verbs: [get, list, watch, create, patch]}",
            // The platform page's figures: each app pod's /metrics through the pod proxy.
            '{apiGroups: [""], resources: [pods], verbs: [list]}',
            '{apiGroups: [""], resources: [pods/proxy], verbs: [get]}',
          ],
          ready: [
            ["list", "pods"],
            ["create", "scaleplatformrestores.cronscale.io"],
            ["patch", "scaleplatformrestores.cronscale.io"],
          ],
        },
        auditor: {
          rules: [
            "{apiGroups: [cronscale.io], resources: [scaleplatforms, scaleplatformbackups, scaleplatformrestores], verbs: [get, list, watch]}",
          ],
          ready: [["list", "scaleplatformrestores.cronscale.io"]],
        },
      }),
    );
    platform = await waitFor(
      async () => {
        const cur = await getPlatform(ns.name, NAME);
        const c = cur.status?.conditions?.find((x) => x.type === "BackupHealthy");
        return c?.status === "True" && cur.status?.backup?.recentBackups?.length ? cur : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 1000, what: "the first backup" },
    );
    // The Ingress controller routes a host only while its Service has ready endpoints (with none
    // it answers 404), and learns them a moment after the pods turn ready: wait until it serves
    // the API host before the tests call it.
    const served = await servedViaIngress(`api.${NAME}.platform.test`, "/readyz", { waitMs: 60_000 });
    expect(served.status, served.body).toBe(200);
  }, 360_000);

  afterAll(async () => {
    await chromium?.close();
    await app?.close();
  });

  async function signIn(who: keyof typeof tokens): Promise<Page> {
    const page = await (await newContext(chromium.browser)).newPage();
    await page.goto(`${base}${PAGE(ns.name)}`);
    await page.getByLabel("Token").fill(tokens[who]);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`**${PAGE(ns.name)}`);
    return page;
  }

  /**
   * A JSON call to the platform's API host through the Ingress over HTTP (as the shop traffic
   * below), with the platform's API key.
   */
  function apiCall(path: string, key: string, json?: unknown): Promise<{ status: number; body: string }> {
    const body = json === undefined ? undefined : JSON.stringify(json);
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: "127.0.0.1",
          port: ingressPorts().http,
          path,
          method: body ? "POST" : "GET",
          agent: false,
          timeout: 10_000,
          headers: {
            Host: `api.${NAME}.platform.test`,
            authorization: `Bearer ${key}`,
            ...(body ? { "content-type": "application/json" } : {}),
          },
        },
        (res) => {
          let text = "";
          res.on("data", (d: Buffer) => {
            text += d.toString();
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on("timeout", () => req.destroy(new Error(`timeout: ${path}`)));
      req.on("error", reject);
      req.end(body);
    });
  }

  /**
   * The product cache's counters summed over the ready app pods, each pod's /metrics read here
   * through the pod proxy with a pattern of its own (not the dashboard's parser); `podsRead`:
   * pods that counted any read.
   */
  async function cacheCounters(
    namespace: string,
  ): Promise<{ hits: number; reads: number; podsRead: number }> {
    type Pod = {
      metadata: { name: string };
      spec: { containers: { ports?: { name?: string; containerPort: number }[] }[] };
      status?: { conditions?: { type: string; status: string }[] };
    };
    const pods = JSON.parse(
      (
        await kubectl(
          [
            "get",
            "pods",
            "-l",
            `cronscale.io/platform=${NAME},app.kubernetes.io/component=app`,
            "-o",
            "json",
          ],
          { namespace },
        )
      ).stdout,
    ).items as Pod[];
    const out = { hits: 0, reads: 0, podsRead: 0 };
    for (const p of pods) {
      if (!p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) continue;
      const port = p.spec.containers
        .flatMap((c) => c.ports ?? [])
        .find((x) => x.name === "http")?.containerPort;
      const text = (
        await kubectl([
          "get",
          "--raw",
          `/api/v1/namespaces/${namespace}/pods/${p.metadata.name}:${port}/proxy/metrics`,
        ])
      ).stdout;
      let reads = 0;
      for (const m of text.matchAll(/^commerce_product_cache_requests_total\{result="(\w+)"\} (\d+)$/gm)) {
        reads += Number(m[2]);
        if (m[1] === "hit") out.hits += Number(m[2]);
      }
      out.reads += reads;
      if (reads > 0) out.podsRead++;
    }
    return out;
  }

  const restores = async () =>
    JSON.parse((await kubectl(["get", "splrs", "-o", "json"], { namespace: ns.name })).stdout)
      .items as ScalePlatformRestore[];

  // The platform's own figures on its page, read as the viewer through the pod proxy from the real
  // app: shop requests sent while the page refreshes show as a request rate and response time;
  // product reads through the API, answered by the app's product cache, as its hit rate.
  it("shows the shop's request rate, response time, cache hit rate, network and database size live; a viewer without pods/proxy is told", async () => {
    const PLATFORM_PAGE = `/dashboard/compute/platforms/scale/deploy?namespace=${ns.name}&name=${NAME}`;
    // Before the first view (totals since the pods started): one product read four times (a miss,
    // then hits), and one that does not exist (a miss).
    const key = await apiKey(ns.name, NAME);
    const created = await apiCall("/api/v1/products", key, {
      title: "Cache probe",
      variants: [
        {
          sku: "PROBE-1",
          title: "Probe",
          priceMinor: 1000,
          inventory: { available: 5, lowStockThreshold: 1 },
        },
      ],
    });
    expect(created.status, created.body).toBe(201);
    const productPath = `/api/v1/products/${JSON.parse(created.body).id}`;
    for (let i = 0; i < 4; i++) expect((await apiCall(productPath, key)).status).toBe(200);
    expect((await apiCall("/api/v1/products/prod_none", key)).status).toBe(404);
    // What the app pods count, read here straight from their /metrics: the five reads, each pod's
    // first read of the product a miss.
    const cache = await cacheCounters(ns.name);
    expect(cache.reads).toBe(5);
    expect(cache.hits).toBeLessThanOrEqual(3);
    expect(cache.hits).toBeGreaterThanOrEqual(4 - cache.podsRead);
    const page = await signIn("restorer");
    await page.goto(`${base}${PLATFORM_PAGE}`);
    const figure = (name: string) => page.locator(`[data-figure="${name}"]`).textContent();
    expect(await figure("storage")).toMatch(/^database [0-9.]+ (KiB|MiB|GiB) of /);
    expect(await page.locator("#performance-basis").textContent()).toMatch(
      /^Totals since the app pods started/,
    );
    expect(await figure("cache-hit-rate")).toBe(
      `${((cache.hits / cache.reads) * 100).toFixed(1)} % of API product reads`,
    );
    console.log(
      `dashboard cache hit rate: ${await figure("cache-hit-rate")} (${cache.hits} hits of ${cache.reads} reads, ${cache.podsRead} pods)`,
    );
    let sending = true;
    const statuses: number[] = [];
    const traffic = (async () => {
      while (sending) {
        statuses.push((await viaIngress(`${NAME}.platform.test`, "/").catch(() => ({ status: 0 }))).status);
        // The product again: by now in the cache of every pod that served it.
        statuses.push((await apiCall(productPath, key).catch(() => ({ status: 0 }))).status);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      await expect
        .poll(() => figure("requests-per-second"), { timeout: 30_000, interval: 500 })
        .toMatch(/^(?!0\.00 )[0-9.]+ requests\/s$/);
      expect(await page.locator("#performance-basis").textContent()).toMatch(
        /^Rates over the last \d+ s \(\d+ app pods?\)/,
      );
      expect(await figure("response-time")).toMatch(/^[0-9.]+ ms$/);
      expect(await figure("error-rate")).toBe("0.0 % answered 5xx");
      // Over an interval where the product was read on the pods that had it: all hits.
      await expect
        .poll(() => figure("cache-hit-rate"), { timeout: 15_000, interval: 500 })
        .toBe("100.0 % of API product reads");
      expect(await figure("network")).toMatch(/^[0-9.]+ (B|KiB|MiB)\/s in, [0-9.]+ (B|KiB|MiB)\/s out$/);
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshots(page, "platform-performance");
    } finally {
      sending = false;
      await traffic;
    }
    expect(statuses.filter((x) => x === 200).length).toBeGreaterThan(0);
    await page.context().close();

    const auditor = await signIn("auditor");
    await auditor.goto(`${base}${PLATFORM_PAGE}`);
    expect(await auditor.locator('[data-figure="requests-per-second"]').textContent()).toBe(
      "you may not read the platform's metrics",
    );
    await auditor.context().close();
  }, 90_000);

  it("picks a recovery point, refuses a time outside the window beside the field, restores and follows it live", async () => {
    const label = platform.status?.backup?.recentBackups?.[0]?.label ?? "";
    const page = await signIn("restorer");
    expect(await page.locator("#restore").getByText(`Point in time (${ZONE})`).count()).toBe(1);
    expect(await page.locator(`[data-recovery-point="${label}"]`).count()).toBe(1);

    // A point in time before the first backup: the window's message beside the field, nothing created.
    await page.getByLabel("A point in time").check();
    await page.getByLabel(`Point in time (${ZONE})`).fill("2020-01-01T00:00");
    // The wall time read in the platform's zone (EST, UTC-5), with the viewer's local time added.
    await expect
      .poll(() => page.locator("#restore-at-hint time").getAttribute("datetime"), { timeout: 15_000 })
      .toBe("2020-01-01T05:00:00.000Z");
    expect(await page.locator("#restore-at-hint").textContent()).toContain("your time:");
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Restore" }).click()]);
    expect(await page.locator("#restore").textContent()).toContain(
      "spec.targetTime 2020-01-01T05:00:00Z is outside the recoverable window",
    );
    expect(await page.locator("#restore-at-error").count()).toBe(1);
    expect(await page.getByLabel(`Point in time (${ZONE})`).getAttribute("aria-invalid")).toBe("true");
    expect(await restores()).toEqual([]);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, "platform-restore-refused");

    // Restore to the backup picked from the list, then follow it without reloading.
    await page.locator(`[data-recovery-point="${label}"] input`).check();
    await page.getByRole("button", { name: "Restore" }).click();
    await expect
      .poll(() => page.getByRole("status").textContent(), { timeout: 15_000 })
      .toContain(`(to backup ${label})`);
    const [created] = await restores();
    expect(created?.spec).toMatchObject({ platformName: NAME, backupLabel: label });
    const row = page.locator(`[data-restore="${created?.metadata.name}"]`);
    await expect
      .poll(() => row.getAttribute("data-phase"), { timeout: 150_000, interval: 500 })
      .toMatch(/Restoring|CuttingOver|Succeeded/);
    const seen = new Set<string>();
    await expect
      .poll(
        async () => {
          const phase = (await row.getAttribute("data-phase")) ?? "";
          seen.add(phase);
          return phase;
        },
        { timeout: 180_000, interval: 250 },
      )
      .toMatch(/Succeeded|Failed/);
    expect(await row.getAttribute("data-phase"), (await row.textContent()) ?? "").toBe("Succeeded");
    const done = (await restores()).find((r) => r.metadata.name === created?.metadata.name);
    const downtime = done?.status?.downtimeSeconds ?? -1;
    expect(downtime).toBeGreaterThan(0);
    expect(await row.locator("[data-downtime]").textContent()).toBe(`${downtime.toFixed(1)} s`);
    console.log(`dashboard restore: phases seen live ${[...seen].join(" → ")}, downtime ${downtime}s`);
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(await phoneOverflow(page)).toBe(0);
    await screenshots(page, "platform-restore");

    // The volume used before is kept; released after confirmation, the operator deletes it.
    const oldClaim = done?.status?.oldVolumeClaimName ?? "";
    const old = row.locator("[data-old-volume]");
    expect(await old.getAttribute("data-old-volume")).toBe("kept");
    expect(await old.textContent()).toContain(oldClaim);
    await page.getByRole("link", { name: "Release old volume…" }).click();
    await page.getByRole("button", { name: "Release old volume" }).click();
    await expect
      .poll(() => page.getByRole("status").textContent())
      .toContain(`Release of ${oldClaim} requested`);
    await expect
      .poll(
        () =>
          page
            .locator(`[data-restore="${created?.metadata.name}"] [data-old-volume]`)
            .getAttribute("data-old-volume"),
        {
          timeout: 60_000,
        },
      )
      .toBe("released");
    // Deleted, or being deleted (the StatefulSet's own claim goes at the database pod's next restart).
    await expect
      .poll(
        async () => {
          const r = await kubectl(["get", "pvc", oldClaim, "-o", "json"], {
            namespace: ns.name,
            allowFailure: true,
          });
          return r.stdout.trim() === "" || Boolean(JSON.parse(r.stdout).metadata?.deletionTimestamp);
        },
        { timeout: 60_000 },
      )
      .toBe(true);
    await page.context().close();
  }, 400_000);

  it("a viewer who may only read sees the restores but no form; a forged post gets the API server's 403", async () => {
    const page = await signIn("auditor");
    expect(await page.locator("#restore-form").count()).toBe(0);
    expect(await page.locator("#restores [data-restore]").count()).toBe(1);
    expect(await page.getByRole("link", { name: /Release old volume/ }).count()).toBe(0);
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const forged = await page.request.post(`${base}${PAGE(ns.name)}/restore`, {
      headers: { origin: base },
      form: { _csrf: csrf, target: "latest" },
    });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toContain("forbidden");
    expect((await restores()).length).toBe(1);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.context().close();
  });
});
