import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformRestore } from "../api/v1alpha1/scaleplatformrestore.ts";
import { silentLogger } from "../log.ts";
import { restoreFromForm, wallToInstant } from "./restore-model.ts";
import { createDashboard } from "./server.ts";
import { FakeViewerApi, injectSignIn } from "./testing.ts";

const PAGE = "/dashboard/compute/platforms/scale/default/shop/backups";
const NOW = new Date("2026-11-23T13:00:00Z");
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const shop: ScalePlatform = {
  apiVersion: "cronscale.io/v1alpha1",
  kind: "ScalePlatform",
  metadata: { name: "shop", namespace: "default" },
  spec: {
    plan: "Standard",
    domains: { platform: "shop.example.test" },
    localization: { timezone: "Europe/Paris" },
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
      recoverableFrom: "2026-11-22T01:00:02Z",
      recoverableUntil: "2026-11-23T12:00:00Z",
      recentBackups: [
        {
          label: "20261122-010002F",
          type: "full",
          startTime: "2026-11-22T01:00:02Z",
          stopTime: "2026-11-22T01:03:40Z",
        },
      ],
    },
  } as ScalePlatform["status"],
};

describe("restore form model", () => {
  it("reads a wall time in the platform's zone, across daylight-saving changes", () => {
    expect(wallToInstant("2026-11-23T14:05", "Europe/Paris")?.toISOString()).toBe("2026-11-23T13:05:00.000Z");
    expect(wallToInstant("2026-07-01T14:05:30", "Europe/Paris")?.toISOString()).toBe(
      "2026-07-01T12:05:30.000Z",
    );
    expect(wallToInstant("2026-11-23T14:05", "UTC")?.toISOString()).toBe("2026-11-23T14:05:00.000Z");
    // 2026-10-25 02:30 happens twice in Paris: the earlier (summer time) instant.
    expect(wallToInstant("2026-10-25T02:30", "Europe/Paris")?.toISOString()).toBe("2026-10-25T00:30:00.000Z");
    // 2026-03-29 02:30 does not exist in Paris: read with the offset before the gap.
    expect(wallToInstant("2026-03-29T02:30", "Europe/Paris")?.toISOString()).toBe("2026-03-29T01:30:00.000Z");
    expect(wallToInstant("2026-02-30T10:00", "UTC")).toBeUndefined();
    expect(wallToInstant("yesterday", "UTC")).toBeUndefined();
  });

  it("builds the restore for each target, and refuses a time outside the window with the operator's message", () => {
    const spec = (target: string, at = "") => restoreFromForm({ target, at }, shop, NOW).restore?.spec;
    expect(spec("latest")).toEqual({ platformName: "shop" });
    expect(spec("backup:20261122-010002F")).toEqual({
      platformName: "shop",
      backupLabel: "20261122-010002F",
    });
    expect(spec("time", "2026-11-23T10:30")).toEqual({
      platformName: "shop",
      targetTime: "2026-11-23T09:30:00Z",
    });
    const before = restoreFromForm({ target: "time", at: "2026-11-21T10:00" }, shop, NOW);
    expect(before.errors?.at).toEqual([
      "spec.targetTime 2026-11-21T09:00:00Z is outside the recoverable window 2026-11-22T01:00:02Z to 2026-11-23T13:00:00Z",
    ]);
    expect(restoreFromForm({ target: "time", at: "" }, shop, NOW).errors?.at).toEqual([
      "Enter a date and time (in Europe/Paris).",
    ]);
    expect(
      restoreFromForm({ target: "backup:20200101-000000F", at: "" }, shop, NOW).errors?.target?.[0],
    ).toMatch(/is not one of the platform's backups/);
  });
});

const post = (a: FastifyInstance, cookie: string, payload: Record<string, string>) =>
  a.inject({
    method: "POST",
    url: `${PAGE}/restore`,
    headers: { cookie, origin: "http://dash.test", host: "dash.test" },
    payload,
  });

async function start(viewer: FakeViewerApi) {
  app = await createDashboard({ log: silentLogger(), viewerApi: () => viewer, now: () => NOW });
  return app;
}

describe("dashboard: platform recovery", () => {
  it("lists the recovery points, dry-runs then creates the restore as the viewer, shows its downtime", async () => {
    const viewer = new FakeViewerApi({ username: "o", groups: [] }, new Set(["* * *"]));
    viewer.platforms.set("default/shop", shop);
    const a = await start(viewer);
    const { cookie, csrf, body } = await injectSignIn(a, "t", PAGE);
    expect(body).toContain('data-recovery-point="20261122-010002F"');
    expect(body).toContain("Point in time (Europe/Paris)");
    expect(body).toContain("2026-11-22 02:00:02 +01:00");

    const done = await post(a, cookie, { _csrf: csrf, target: "time", at: "2026-11-23T10:30:00" });
    expect(done.statusCode).toBe(303);
    const spec = JSON.stringify({ platformName: "shop", targetTime: "2026-11-23T09:30:00Z" });
    expect(viewer.calls.filter((c) => c.startsWith("create restore"))).toEqual([
      `create restore dry-run default/shop-restore-r1 ${spec}`,
      `create restore default/shop-restore-r1 ${spec}`,
    ]);
    const r = viewer.restores.get("default/shop-restore-r1") as ScalePlatformRestore;
    r.status = { phase: "Succeeded", target: "time 2026-11-23T09:30:00Z", downtimeSeconds: 4.25 };
    const after = await a.inject({ url: PAGE, headers: { cookie } });
    expect(after.body).toContain("Restore shop-restore-r1 requested (to time 2026-11-23T09:30:00Z).");
    expect(after.body).toMatch(/data-restore="shop-restore-r1" data-phase="Succeeded"/);
    expect(after.body).toContain("4.3 s");
  });

  it("shows the window check and the API server's refusal beside their fields, creating nothing", async () => {
    const viewer = new FakeViewerApi({ username: "o", groups: [] }, new Set(["* * *"]));
    viewer.platforms.set("default/shop", shop);
    const a = await start(viewer);
    const { cookie, csrf } = await injectSignIn(a, "t", PAGE);
    const early = await post(a, cookie, { _csrf: csrf, target: "time", at: "2026-11-20T08:00" });
    expect(early.statusCode).toBe(422);
    expect(early.body).toMatch(
      /id="restore-at-error">spec.targetTime 2026-11-20T07:00:00Z is outside the recoverable window/,
    );
    expect(early.body).toContain('value="2026-11-20T08:00"');
    // The time kept in the form is shown as the instant it names.
    expect(early.body).toContain('datetime="2026-11-20T07:00:00.000Z"');

    viewer.refuseRestore = {
      field: "spec.backupLabel",
      message: "spec.backupLabel in body should match '^[0-9]{8}'",
    };
    const refused = await post(a, cookie, { _csrf: csrf, target: "backup:20261122-010002F" });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toMatch(/id="restore-target-error">spec.backupLabel in body should match/);
    expect(viewer.restores.size).toBe(0);
  });

  it("hides the form from a viewer who may not create restores; a forged post shows the 403", async () => {
    const viewer = new FakeViewerApi(
      { username: "r", groups: [] },
      new Set(["get scaleplatforms default", "list scaleplatformrestores default"]),
    );
    viewer.platforms.set("default/shop", shop);
    const a = await start(viewer);
    const { cookie, csrf, body } = await injectSignIn(a, "t", PAGE);
    expect(body).toContain('data-backup-label="20261122-010002F"');
    expect(body).not.toContain('id="restore-form"');
    expect(body).toContain("No restores.");
    const forged = await post(a, cookie, { _csrf: csrf, target: "latest" });
    expect(forged.statusCode).toBe(403);
    expect(forged.body).toContain("forbidden");
    expect(viewer.restores.size).toBe(0);
  });

  it("previews the point in time in the platform's zone", async () => {
    const viewer = new FakeViewerApi({ username: "o", groups: [] }, new Set(["* * *"]));
    viewer.platforms.set("default/shop", shop);
    const a = await start(viewer);
    const { cookie } = await injectSignIn(a, "t", PAGE);
    const r = await a.inject({ url: `${PAGE}/restore/at?at=2026-11-23T10:30`, headers: { cookie } });
    expect(r.body).toContain('datetime="2026-11-23T09:30:00.000Z"');
    expect(r.body).toContain("2026-11-23 10:30:00 +01:00");
  });
});
