import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformBackup } from "../api/v1alpha1/scaleplatformbackup.ts";
import { silentLogger } from "../log.ts";
import { createDashboard } from "./server.ts";
import { FakeViewerApi, injectSignIn } from "./testing.ts";

const PAGE = "/dashboard/compute/platforms/scale/default/shop/backups";
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const post = (a: FastifyInstance, url: string, cookie: string, payload: Record<string, string>) =>
  a.inject({
    method: "POST",
    url,
    headers: { cookie, origin: "http://dash.test", host: "dash.test" },
    payload,
  });

const shop: ScalePlatform = {
  apiVersion: "cronscale.io/v1alpha1",
  kind: "ScalePlatform",
  metadata: { name: "shop", namespace: "default" },
  spec: {
    plan: "Standard",
    domains: { platform: "shop.example.test" },
    backup: {
      repository: { volume: { claimName: "b" } },
      schedules: { full: "0 1 * * *", incremental: "0 0,2-23 * * *" },
      retentionDays: 30,
    },
  } as ScalePlatform["spec"],
  status: {
    backup: {
      lastSuccessfulBackup: {
        label: "20261122-010002F",
        type: "full",
        startTime: "2026-11-22T01:00:02Z",
        stopTime: "2026-11-22T01:03:40Z",
      },
      lastFailedBackup: { time: "2026-11-23T02:00:00Z", job: "j", message: "repo unreachable" },
      recoverableFrom: "2026-11-22T01:00:02Z",
      recoverableUntil: "2026-11-23T12:00:00Z",
      nextFullBackup: "2026-11-24T01:00:00Z",
    },
    conditions: [
      {
        type: "BackupHealthy",
        status: "False",
        reason: "BackupFailed",
        message: "repo unreachable",
        lastTransitionTime: "2026-11-23T02:00:00Z",
      },
    ],
  } as ScalePlatform["status"],
};

const manual = (name: string, platformName: string, phase: string): ScalePlatformBackup => ({
  apiVersion: "cronscale.io/v1alpha1",
  kind: "ScalePlatformBackup",
  metadata: { name, namespace: "default", creationTimestamp: "2026-11-23T12:00:00Z" },
  spec: { platformName, type: "full" },
  status: { phase: phase as "Running" },
});

describe("dashboard: platform backups", () => {
  it("shows health, last success and failure, window, schedule; backs up now and cancels", async () => {
    const viewer = new FakeViewerApi({ username: "o", groups: [] }, new Set(["* * *"]));
    viewer.platforms.set("default/shop", shop);
    viewer.backups.set("default/shop-run", manual("shop-run", "shop", "Running"));
    viewer.backups.set("default/other-run", manual("other-run", "other", "Running"));
    const a = await start(viewer);
    const { cookie, csrf, body } = await injectSignIn(a, "t", PAGE);
    for (const t of [
      "BackupFailed",
      "repo unreachable",
      "20261122-010002F",
      "2026-11-24 01:00:00",
      "30 days",
    ])
      expect(body).toContain(t);
    expect(body).toContain('data-manual-backup="shop-run"');
    expect(body).not.toContain("other-run");
    expect(body).toContain("Back up now");
    expect(body).toContain('aria-label="Cancel shop-run"');
    const created = await post(a, PAGE, cookie, { _csrf: csrf, type: "incr" });
    expect(created.statusCode).toBe(303);
    expect(viewer.calls).toContain("create backup default/shop-manual-x1 incr");
    const cancelled = await post(a, `${PAGE}/shop-run/cancel`, cookie, { _csrf: csrf });
    expect(cancelled.statusCode).toBe(303);
    expect(viewer.backups.has("default/shop-run")).toBe(false);
  });

  it("hides Back up now and Cancel from a viewer who may only read; a forged post shows the 403", async () => {
    const viewer = new FakeViewerApi(
      { username: "r", groups: [] },
      new Set(["get scaleplatforms default", "list scaleplatformbackups default"]),
    );
    viewer.platforms.set("default/shop", shop);
    viewer.backups.set("default/shop-run", manual("shop-run", "shop", "Running"));
    const a = await start(viewer);
    const { cookie, csrf, body } = await injectSignIn(a, "t", PAGE);
    expect(body).toContain('data-manual-backup="shop-run"');
    expect(body).not.toContain("Back up now");
    expect(body).not.toContain("Cancel shop-run");
    const forged = await post(a, PAGE, cookie, { _csrf: csrf, type: "full" });
    expect(forged.statusCode).toBe(403);
    expect(forged.body).toContain("forbidden");
  });
});

async function start(viewer: FakeViewerApi) {
  app = await createDashboard({ log: silentLogger(), viewerApi: () => viewer });
  return app;
}
