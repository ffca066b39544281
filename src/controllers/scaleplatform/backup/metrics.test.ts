import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { ScalePlatformSpec, ScalePlatformStatus } from "../../../api/v1alpha1/scaleplatform.ts";
import { platformInputs } from "../desired/common.ts";
import { ScalePlatformReconciler } from "../reconciler.ts";
import {
  clusterObjects,
  counterRandom,
  fakeProbe,
  makeCtx,
  makePlatform,
  settle,
  TEST_CONFIG,
} from "../testing.ts";
import { BackupMetrics } from "./metrics.ts";
import type { BackupJobRun, BackupObservation, RunnerSummary } from "./observe.ts";
import { withBackupStatus } from "./status.ts";

const S3 = {
  repository: {
    s3: { endpoint: "s3.kube-system.svc:443", bucket: "backups", credentialsSecretRef: { name: "s3-creds" } },
  },
};
const key = { namespace: "ns", name: "shop" };
const T0 = Date.parse("2026-01-01T03:00:00Z");

/** Every sample of `name` as "label=value,...": value. */
async function samples(registry: Registry, name: string): Promise<Record<string, number>> {
  const all = await registry.getMetricsAsJSON();
  const m = all.find((x) => x.name === name);
  const out: Record<string, number> = {};
  for (const v of (m?.values ?? []) as { labels: Record<string, string | number>; value: number }[]) {
    const l = Object.entries(v.labels)
      .map(([k, x]) => `${k}=${x}`)
      .join(",");
    out[l] = v.value;
  }
  return out;
}

const summary = (archiver: RunnerSummary["archiver"]): RunnerSummary => ({
  v: 1,
  ok: true,
  backups: [["20260101-020000F", "full", T0 / 1000 - 3600, T0 / 1000 - 3500, 1000, 400]],
  oldestStart: T0 / 1000 - 3600,
  archiver,
});
const ok = (job: string, at: number, archiver?: RunnerSummary["archiver"]): BackupJobRun => ({
  job,
  uid: `uid-${job}`,
  type: "full",
  createdAt: at - 60_000,
  finishedAt: at,
  succeeded: true,
  summary: summary(archiver ?? { lastArchived: at / 1000, failedCount: 0 }),
});
const failed = (job: string, at: number, over: Partial<BackupJobRun> = {}): BackupJobRun => ({
  job,
  uid: `uid-${job}`,
  type: "incr",
  createdAt: at - 60_000,
  finishedAt: at,
  succeeded: false,
  message: "BackoffLimitExceeded",
  ...over,
});
const observation = (runs: BackupJobRun[]): BackupObservation => ({
  runs,
  keyPresent: true,
  keySecretName: "shop-backup-key",
});

/** The status the reconciler would write for these runs at `now`. */
function statusOf(o: BackupObservation, now: number, stopped = false): ScalePlatformStatus {
  const p = makePlatform("shop", { backup: S3, stopped } as unknown as Partial<ScalePlatformSpec>);
  const inp = platformInputs(p, p.spec, TEST_CONFIG, { certManager: true, customMetrics: false });
  return withBackupStatus(inp, {}, o, new Date(now));
}

function setup() {
  const registry = new Registry();
  let now = T0;
  const m = new BackupMetrics(registry, () => now);
  const record = (runs: BackupJobRun[], stopped = false) => {
    const o = observation(runs);
    m.record(key, stopped, statusOf(o, now, stopped), o);
  };
  const advance = (ms: number) => {
    now += ms;
  };
  return { registry, m, record, advance, at: () => now };
}

const SHOP = "namespace=ns,platform=shop";

describe("backup metrics", () => {
  it("archive lag is computed at scrape time: it grows while nothing new is observed", async () => {
    const s = setup();
    s.record([ok("a", T0 - 10_000)]);
    expect(await samples(s.registry, "cronscale_backup_wal_archive_lag_seconds")).toEqual({ [SHOP]: 10 });
    s.advance(60_000);
    expect(await samples(s.registry, "cronscale_backup_wal_archive_lag_seconds")).toEqual({ [SHOP]: 70 });
    // A newer run that archived brings it back down.
    s.record([ok("b", s.at() - 2000), ok("a", T0 - 10_000)]);
    expect(await samples(s.registry, "cronscale_backup_wal_archive_lag_seconds")).toEqual({ [SHOP]: 2 });
  });

  it("no lag series for a stopped platform, one never archived, or one without spec.backup", async () => {
    const s = setup();
    s.record([ok("a", T0 - 10_000)], true);
    expect(await samples(s.registry, "cronscale_backup_wal_archive_lag_seconds")).toEqual({});
    expect(await samples(s.registry, "cronscale_backup_healthy")).toEqual({
      [`${SHOP},reason=PlatformStopped`]: 1,
    });
    s.record([]);
    expect(await samples(s.registry, "cronscale_backup_wal_archive_lag_seconds")).toEqual({});
    s.m.record(key, false, {}, undefined);
    expect(await samples(s.registry, "cronscale_backup_healthy")).toEqual({});
  });

  it("a failed Job is counted once across passes, by kind; one already failed when first seen is not", async () => {
    const s = setup();
    s.record([failed("first", T0 - 5000, { type: "full" })]);
    const zero = {
      [`${SHOP},kind=full`]: 0,
      [`${SHOP},kind=incr`]: 0,
      [`${SHOP},kind=manual`]: 0,
      [`${SHOP},kind=restore`]: 0,
      [`${SHOP},kind=archive`]: 0,
    };
    expect(await samples(s.registry, "cronscale_backup_failures_total")).toEqual(zero);
    s.advance(3600_000);
    const runs = [failed("incr-1", s.at() - 1000), failed("first", T0 - 5000, { type: "full" })];
    for (let i = 0; i < 4; i++) s.record(runs);
    // The health gauge shows the newest failure.
    expect(await samples(s.registry, "cronscale_backup_healthy")).toEqual({
      [`${SHOP},reason=LastBackupFailed`]: 0,
    });
    s.record([failed("manual-1", s.at(), { manual: true, type: "full" }), ...runs]);
    s.record([failed("manual-1", s.at(), { manual: true, type: "full" }), ...runs]);
    // Running and cancelled runs are no failures.
    const running = { ...failed("incr-2", 0), finishedAt: undefined };
    const cancelled = failed("manual-2", s.at(), {
      manual: true,
      summary: { v: 1, ok: false, cancelled: true },
    });
    s.record([running, cancelled, ...runs]);
    expect(await samples(s.registry, "cronscale_backup_failures_total")).toEqual({
      ...zero,
      [`${SHOP},kind=incr`]: 1,
      [`${SHOP},kind=manual`]: 1,
    });
  });

  it("archiver failures add what failed_count grew by, and all of it after a statistics reset", async () => {
    const s = setup();
    s.record([ok("a", T0, { lastArchived: T0 / 1000, failedCount: 2 })]);
    const archive = async () =>
      (await samples(s.registry, "cronscale_backup_failures_total"))[`${SHOP},kind=archive`];
    expect(await archive()).toBe(0);
    const failing = { lastArchived: T0 / 1000, failedCount: 7, lastFailed: T0 / 1000 + 60 };
    s.record([ok("b", T0 + 120_000, failing), ok("a", T0)]);
    s.record([ok("b", T0 + 120_000, failing), ok("a", T0)]);
    expect(await archive()).toBe(5);
    expect(await samples(s.registry, "cronscale_backup_healthy")).toEqual({
      [`${SHOP},reason=ArchivingFailing`]: 0,
    });
    s.record([ok("c", T0 + 240_000, { lastArchived: T0 / 1000 + 200, failedCount: 1, lastFailed: 1 })]);
    expect(await archive()).toBe(6);
  });

  it("last success timestamp and a healthy gauge with one series per platform", async () => {
    const s = setup();
    s.record([ok("a", T0)]);
    expect(await samples(s.registry, "cronscale_backup_last_success_timestamp_seconds")).toEqual({
      [SHOP]: T0 / 1000 - 3500,
    });
    expect(await samples(s.registry, "cronscale_backup_healthy")).toEqual({
      [`${SHOP},reason=BackupsCurrent`]: 1,
    });
  });

  it("a failed restore is counted once per restore", async () => {
    const s = setup();
    s.record([]);
    s.m.restoreFailed(key, "r1");
    s.m.restoreFailed(key, "r1");
    s.m.restoreFailed(key, "r2");
    expect((await samples(s.registry, "cronscale_backup_failures_total"))[`${SHOP},kind=restore`]).toBe(2);
  });

  it("a deleted platform's series are dropped by the reconciler", async () => {
    const registry = new Registry();
    const env = makeCtx([
      makePlatform("shop", { backup: S3 } as unknown as Partial<ScalePlatformSpec>),
      ...clusterObjects(),
    ]);
    const metrics = new BackupMetrics(registry, () => env.clock.now().getTime());
    const rec = new ScalePlatformReconciler(TEST_CONFIG, {
      random: counterRandom().random,
      probe: fakeProbe(true).probe,
      backupMetrics: metrics,
    });
    await settle({ ...env, rec });
    expect(Object.keys(await samples(registry, "cronscale_backup_healthy"))).toHaveLength(1);
    expect(Object.keys(await samples(registry, "cronscale_backup_failures_total"))).toHaveLength(5);
    await env.client.delete("cronscale.io/v1alpha1", "ScalePlatform", "ns", "shop");
    await rec.reconcile(key, env.ctx);
    for (const name of [
      "cronscale_backup_healthy",
      "cronscale_backup_failures_total",
      "cronscale_backup_wal_archive_lag_seconds",
      "cronscale_backup_last_success_timestamp_seconds",
    ])
      expect(await samples(registry, name)).toEqual({});
  });
});
