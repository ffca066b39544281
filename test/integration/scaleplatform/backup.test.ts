import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScalePlatformBackup } from "../../../src/api/v1alpha1/scaleplatformbackup.ts";
import type { Manager } from "../../../src/runtime/manager.ts";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { type HttpSink, startHttpSink } from "../../support/notification-sinks.ts";
import { addonEnv, skipReason } from "../addons/support.ts";
import {
  createSigningSecret,
  SIGNING_SECRET,
  startNotifier,
  testNotificationsConfig,
  waitItems,
  waitNotificationCrd,
} from "../notifications/support.ts";
import {
  applyBackupRequest,
  applyPlatform,
  createS3Secret,
  getObj,
  getPlatform,
  psql,
  s3Repository,
  waitBackupHealthy,
} from "./helpers.ts";
import { type OperatorHandle, usePlatformOperator } from "./operator.ts";

// Backups on the real cluster: real PostgreSQL with pgBackRest, the s3 add-on's versitygw over
// TLS (certificate of the cluster CA, trusted through ConfigMap kube-root-ca.crt). The first full
// backup runs by itself once the database is ready; a marker row is then backed up by a
// ScalePlatformBackup, and the repository's files (plain files of versitygw's posix backend) are
// checked to be encrypted and free of the marker. Wrong S3 credentials turn BackupHealthy False
// with RepositoryUnreachable; fixing them brings it back. The operator's /metrics (scraped over
// loopback) carries the archive lag, the health gauge and the failure counted once. The platform's
// webhook (a receiver on loopback, signatures verified) gets one BackupFailed and one
// BackupRecovered for that.

const reason = await skipReason("dns", "storage", "s3");
const NAME = "vault";
const MARKER = "cronscale-marker-7c1f0e9a2b";
/** pgBackRest's encrypted files are OpenSSL-format: "Salted__" + 8-byte salt. */
const SALTED = Buffer.from("Salted__");

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

function applyRequest(ns: string, name: string, type: "full" | "incr") {
  return applyBackupRequest(ns, name, NAME, type);
}

function waitRequest(ns: string, name: string, phase: "Succeeded" | "Failed"): Promise<ScalePlatformBackup> {
  return waitFor(
    async () => {
      const r = await getObj<ScalePlatformBackup>(ns, "scaleplatformbackup", name);
      if (r?.status?.phase === (phase === "Succeeded" ? "Failed" : "Succeeded"))
        throw new Error(`ScalePlatformBackup ${name} ended ${r.status.phase}: ${r.status.message}`);
      return r?.status?.phase === phase ? r : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 1000, what: `ScalePlatformBackup ${name} ${phase}` },
  );
}

/**
 * The operator's /metrics samples of platform NAME in `ns`, keyed by the metric's name and its
 * other labels, e.g. `cronscale_backup_failures_total{kind="manual"}`.
 */
async function scrape(op: OperatorHandle, ns: string): Promise<Map<string, number>> {
  const res = await fetch(`http://127.0.0.1:${op.current.manager.port}/metrics`);
  expect(res.status).toBe(200);
  const out = new Map<string, number>();
  for (const line of (await res.text()).split("\n")) {
    const m = /^(cronscale_backup_\w+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries(
      [...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]),
    );
    if (labels.namespace !== ns || labels.platform !== NAME) continue;
    const rest = Object.entries(labels)
      .filter(([k]) => k !== "namespace" && k !== "platform")
      .map(([k, v]) => `${k}="${v}"`);
    out.set(`${m[1]}${rest.length ? `{${rest.join(",")}}` : ""}`, Number(m[3]));
  }
  return out;
}

/** Scrapes until `key` has a sample (the pass records metrics right after writing the status). */
function scrapeWhen(op: OperatorHandle, ns: string, key: string): Promise<Map<string, number>> {
  return waitFor(async () => ((await scrape(op, ns)).has(key) ? scrape(op, ns) : undefined), {
    timeoutMs: 15_000,
    intervalMs: 500,
    what: `metric ${key}`,
  });
}

describe.skipIf(reason)("ScalePlatform backups (pgBackRest to S3 over TLS)", () => {
  const ns = useNamespace("splbk", { "pod-security.kubernetes.io/enforce": "restricted" });
  const op = usePlatformOperator(ns);
  const s3 = addonEnv("s3.env") ?? {};
  let http: HttpSink;
  let notifier: Manager;
  beforeAll(async () => {
    await waitNotificationCrd();
    http = await startHttpSink(SIGNING_SECRET);
    await createSigningSecret(ns.name);
    notifier = await startNotifier(ns.name, testNotificationsConfig(ns.name, 1));
  }, 120_000);
  afterAll(async () => {
    await notifier?.stop();
    await http?.close();
  });
  const spec = (credentials: string) => ({
    plan: "Standard",
    domains: { platform: "vault.platform.test" },
    backup: {
      repository: s3Repository(credentials),
    },
    notifications: { webhooks: [`${http.url}/hook`], events: ["BackupFailed", "BackupRecovered"] },
  });
  const backupPosts = () =>
    http.posts
      .filter((x) => x.status === 200)
      .map((x) => (JSON.parse(x.body) as { data: Record<string, string> }).data)
      .filter((d) => d.event?.startsWith("Backup"));

  it("the first full backup runs by itself and lands, encrypted, in the bucket", async () => {
    await createS3Secret(ns.name, "s3-good");
    await createS3Secret(ns.name, "s3-bad", "not-the-secret-key");
    const r = await applyPlatform(ns.name, NAME, spec("s3-good"));
    expect(r.code, r.stderr).toBe(0);
    const p = await waitBackupHealthy(ns.name, NAME, {
      status: "True",
      reason: "BackupsCurrent",
      timeoutMs: 150_000,
    });
    const b = p.status?.backup;
    expect(b?.lastSuccessfulBackup?.type).toBe("full");
    expect(b?.recentBackups?.length).toBeGreaterThanOrEqual(1);
    expect(b?.recoverableFrom).toBeDefined();
    expect(b?.nextFullBackup).toBeDefined();
    expect(b?.encryptionKeySecretName).toBe(`${NAME}-backup-key`);
    expect(p.status?.features).toContain("Daily backups");
    // The generated key outlives the platform: no owner.
    const key = await getObj(ns.name, "secret", `${NAME}-backup-key`);
    expect(key?.metadata.ownerReferences).toBeUndefined();
    const printed = await kubectl(["get", "splat", NAME], { namespace: ns.name });
    expect(printed.stdout).toMatch(/LAST BACKUP/);

    // Metrics: healthy, the last success, no failure, and a small archive lag that grows at scrape.
    const m = await scrapeWhen(op, ns.name, 'cronscale_backup_healthy{reason="BackupsCurrent"}');
    expect(m.get('cronscale_backup_healthy{reason="BackupsCurrent"}')).toBe(1);
    expect(m.get("cronscale_backup_last_success_timestamp_seconds")).toBe(
      Date.parse(b?.lastSuccessfulBackup?.stopTime ?? "") / 1000,
    );
    for (const kind of ["full", "incr", "manual", "restore", "archive"])
      expect(m.get(`cronscale_backup_failures_total{kind="${kind}"}`), kind).toBe(0);
    const lag = m.get("cronscale_backup_wal_archive_lag_seconds") ?? Number.NaN;
    expect(lag).toBeGreaterThanOrEqual(0);
    expect(lag).toBeLessThan(300);
    await new Promise((r) => setTimeout(r, 1500));
    const later = (await scrape(op, ns.name)).get("cronscale_backup_wal_archive_lag_seconds") ?? Number.NaN;
    expect(later - lag).toBeGreaterThanOrEqual(1);
  }, 300_000);

  it("a manual backup takes the marker; the repository holds no plaintext of it", async () => {
    const pod = `${NAME}-db-0`;
    await psql(
      ns.name,
      pod,
      `create table if not exists probe(v text); insert into probe select '${MARKER}' from generate_series(1,2000)`,
    );
    await applyRequest(ns.name, "manual-full", "full");
    const done = await waitRequest(ns.name, "manual-full", "Succeeded");
    expect(done.status?.backupLabel).toMatch(/F$/);
    const p = await waitFor(
      async () => {
        const cur = await getPlatform(ns.name, NAME);
        return cur.status?.backup?.lastSuccessfulBackup?.label === done.status?.backupLabel ? cur : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 1000, what: "the platform to list the manual backup" },
    );
    expect(p.status?.backup?.recentBackups?.map((x) => x.label)).toContain(done.status?.backupLabel);

    const repo = join(s3.S3_DATA_DIR ?? "", s3.S3_BUCKET ?? "", "cronscale", ns.name, NAME);
    const files = filesUnder(repo);
    expect(files.some((f) => f.includes("/backup/db/"))).toBe(true);
    expect(files.some((f) => f.includes("/archive/db/"))).toBe(true);
    for (const f of files) {
      const bytes = readFileSync(f);
      expect(bytes.includes(Buffer.from(MARKER)), `${f} contains the marker`).toBe(false);
      expect(bytes.subarray(0, SALTED.length).equals(SALTED), `${f} is not encrypted`).toBe(true);
    }
  }, 200_000);

  it("wrong S3 credentials turn BackupHealthy False (RepositoryUnreachable); fixed, it recovers", async () => {
    expect((await applyPlatform(ns.name, NAME, spec("s3-bad"))).code).toBe(0);
    // The database restarts with the new credentials; then a backup fails on the repository.
    await waitFor(
      async () => {
        const pod = await getObj(ns.name, "pod", `${NAME}-db-0`);
        const env = (
          pod?.spec as {
            containers: { env?: { name: string; valueFrom?: { secretKeyRef?: { name: string } } }[] }[];
          }
        )?.containers[0]?.env;
        const ready = (pod?.status as { conditions?: { type: string; status: string }[] })?.conditions?.some(
          (c) => c.type === "Ready" && c.status === "True",
        );
        return ready && env?.some((e) => e.valueFrom?.secretKeyRef?.name === "s3-bad");
      },
      { timeoutMs: 120_000, intervalMs: 1000, what: "the database to run with the bad credentials" },
    );
    await applyRequest(ns.name, "bad-incr", "incr");
    const failed = await waitRequest(ns.name, "bad-incr", "Failed");
    expect(failed.status?.message).toMatch(/403|InvalidAccessKeyId|SignatureDoesNotMatch|AccessDenied/);
    const p = await waitBackupHealthy(ns.name, NAME, {
      status: "False",
      reason: "RepositoryUnreachable",
      timeoutMs: 150_000,
    });
    expect(p.status?.backup?.lastFailedBackup?.job).toBe("bad-incr-bk");
    const events = await kubectl(
      [
        "get",
        "events",
        "--field-selector",
        `involvedObject.name=${NAME}`,
        "-o",
        "jsonpath={.items[*].reason}",
      ],
      { namespace: ns.name },
    );
    expect(events.stdout).toContain("RepositoryUnreachable");
    const m = await scrapeWhen(op, ns.name, 'cronscale_backup_healthy{reason="RepositoryUnreachable"}');
    expect(m.get('cronscale_backup_healthy{reason="RepositoryUnreachable"}')).toBe(0);
    expect(m.get('cronscale_backup_failures_total{kind="manual"}')).toBe(1);
    await waitItems(http.posts, () => backupPosts().length >= 1, "BackupFailed webhook", 60_000);
    expect(backupPosts().map((d) => [d.event, d.reason])).toEqual([
      ["BackupFailed", "RepositoryUnreachable"],
    ]);

    expect((await applyPlatform(ns.name, NAME, spec("s3-good"))).code).toBe(0);
    await waitFor(
      async () => {
        const pod = await getObj(ns.name, "pod", `${NAME}-db-0`);
        const ok = (pod?.status as { conditions?: { type: string; status: string }[] })?.conditions?.some(
          (c) => c.type === "Ready" && c.status === "True",
        );
        return ok && JSON.stringify(pod?.spec).includes('"s3-good"');
      },
      { timeoutMs: 120_000, intervalMs: 1000, what: "the database to run with the good credentials" },
    );
    await applyRequest(ns.name, "fixed-incr", "incr");
    await waitRequest(ns.name, "fixed-incr", "Succeeded");
    await waitBackupHealthy(ns.name, NAME, { status: "True", reason: "BackupsCurrent", timeoutMs: 150_000 });
    // The failed Job is still listed, passes went on: counted once; the gauge is back to 1.
    const after = await scrapeWhen(op, ns.name, 'cronscale_backup_healthy{reason="BackupsCurrent"}');
    expect(after.get('cronscale_backup_healthy{reason="BackupsCurrent"}')).toBe(1);
    expect(after.get('cronscale_backup_failures_total{kind="manual"}')).toBe(1);
    await waitItems(http.posts, () => backupPosts().length >= 2, "BackupRecovered webhook", 60_000);
    await new Promise((r) => setTimeout(r, 3000));
    // Once each: passes went on after both transitions.
    expect(backupPosts().map((d) => d.event)).toEqual(["BackupFailed", "BackupRecovered"]);
    expect(http.posts.every((x) => x.verified)).toBe(true);
  }, 420_000);
});
