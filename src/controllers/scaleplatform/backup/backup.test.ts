import { describe, expect, it } from "vitest";
import type { ScalePlatformSpec } from "../../../api/v1alpha1/scaleplatform.ts";
import { type PlatformInputs, platformInputs } from "../desired/common.ts";
import { desiredDatabaseStatefulSet } from "../desired/database.ts";
import { makePlatform, TEST_BACKUP, TEST_CONFIG } from "../testing.ts";
import { desiredBackupAccess, desiredBackupCronJob, desiredKeySecret } from "./desired.ts";
import { backupEvents } from "./events.ts";
import { type BackupJobRun, jobRuns, parseSummary } from "./observe.ts";
import { requestStatus } from "./request.ts";
import { backupStatus, failureReason, withBackupStatus } from "./status.ts";

/** Inputs of platform "shop" in namespace ns; `spec` as a user writes it (defaults applied). */
function inputs(spec: Record<string, unknown> = {}): PlatformInputs {
  const p = makePlatform("shop", spec as Partial<ScalePlatformSpec>);
  return platformInputs(p, p.spec, TEST_CONFIG, { certManager: true, customMetrics: false });
}

type Container = { env: { name: string; value?: string; valueFrom?: unknown }[]; args?: string[] };
function postgres(inp: PlatformInputs): Container & { pod: { volumes: { name: string }[] } } {
  const sts = desiredDatabaseStatefulSet(inp) as unknown as {
    spec: { template: { spec: { containers: Container[]; volumes: { name: string }[] } } };
  };
  const c = sts.spec.template.spec.containers[0] as Container;
  return { ...c, pod: { volumes: sts.spec.template.spec.volumes } };
}

const summary = (over: object = {}) =>
  JSON.stringify({
    v: 1,
    ok: true,
    type: "full",
    backups: [
      ["20260101-020000F_20260101-030000I", "incr", 1767236400, 1767236460, 1000, 10],
      ["20260101-020000F", "full", 1767232800, 1767232900, 1000, 400],
    ],
    oldestStart: 1767232800,
    archiver: { lastArchived: 1767236500, failedCount: 0, lastFailed: 0 },
    ...over,
  });

const run = (job: string, finishedIso: string | undefined, ok: boolean, text?: string): BackupJobRun => {
  const r: BackupJobRun = { job, type: "incr", createdAt: 0, succeeded: ok };
  if (finishedIso) r.finishedAt = Date.parse(finishedIso);
  const s = parseSummary(text);
  if (s) r.summary = s;
  return r;
};

describe("database with spec.backup", () => {
  it("archives WAL through pgBackRest into the TEST_BACKUP repository, keys only by reference", () => {
    const c = postgres(inputs({ backup: TEST_BACKUP }));
    const env = Object.fromEntries(c.env.map((e) => [e.name, e.value ?? e.valueFrom]));
    expect(c.args).toEqual([
      "-c",
      "archive_mode=on",
      "-c",
      "archive_command=pgbackrest archive-push %p",
      "-c",
      "archive_timeout=60",
    ]);
    expect(env).toMatchObject({
      PGBACKREST_REPO1_TYPE: "s3",
      PGBACKREST_REPO1_S3_ENDPOINT: "s3.kube-system.svc",
      PGBACKREST_REPO1_STORAGE_PORT: "443",
      PGBACKREST_REPO1_S3_URI_STYLE: "path",
      PGBACKREST_REPO1_PATH: "/cronscale/ns/shop",
      PGBACKREST_REPO1_CIPHER_TYPE: "aes-256-cbc",
      PGBACKREST_REPO1_RETENTION_FULL_TYPE: "time",
      PGBACKREST_REPO1_RETENTION_FULL: "30",
      PGBACKREST_REPO1_STORAGE_CA_FILE: "/etc/pgbackrest/ca/ca.crt",
      PGBACKREST_REPO1_CIPHER_PASS: { secretKeyRef: { name: "shop-backup-key", key: "passphrase" } },
      PGBACKREST_REPO1_S3_KEY_SECRET: { secretKeyRef: { name: "s3-creds", key: "secretAccessKey" } },
      // The password and its user go together (the probes' pg_isready uses both).
      PGPASSWORD: { secretKeyRef: { name: "shop-db-credentials", key: "password" } },
      PGUSER: { secretKeyRef: { name: "shop-db-credentials", key: "username" } },
    });
    expect(c.pod.volumes.map((v) => v.name)).toContain("backup-ca");
  });

  it("is unchanged without spec.backup", () => {
    const c = postgres(inputs());
    expect(c.args).toBeUndefined();
    expect(c.env.some((e) => e.name.startsWith("PGBACKREST_"))).toBe(false);
  });
});

describe("backup children", () => {
  it("the generated key is not owned by the platform; the Role execs into the database pod only", () => {
    const inp = inputs({ backup: TEST_BACKUP });
    expect(desiredKeySecret(inp, "k").metadata.ownerReferences).toBeUndefined();
    const role = desiredBackupAccess(inp).find((o) => o.kind === "Role") as unknown as {
      rules: { resources: string[]; resourceNames: string[]; verbs: string[] }[];
    };
    expect(role.rules).toEqual([
      { apiGroups: [""], resources: ["pods/exec"], resourceNames: ["shop-db-0"], verbs: ["get", "create"] },
    ]);
  });

  it("CronJobs run in the platform's timezone, default schedules never coincide, suspended while stopped", () => {
    const inp = inputs({ backup: TEST_BACKUP, localization: { timezone: "Europe/Berlin" } });
    const full = desiredBackupCronJob(inp, inp.spec.backup!, "full").spec as Record<string, unknown>;
    const incr = desiredBackupCronJob(inp, inp.spec.backup!, "incr").spec as Record<string, unknown>;
    expect(full).toMatchObject({ schedule: "0 1 * * *", timeZone: "Europe/Berlin", suspend: false });
    expect(incr).toMatchObject({ schedule: "0 0,2-23 * * *", concurrencyPolicy: "Forbid" });
    const stopped = inputs({ backup: TEST_BACKUP, stopped: true });
    expect(desiredBackupCronJob(stopped, stopped.spec.backup!, "full").spec).toMatchObject({ suspend: true });
  });
});

describe("backup status", () => {
  const now = new Date("2026-01-01T03:10:00Z");
  const obs = (runs: BackupJobRun[], keyPresent = true) => ({
    runs,
    keyPresent,
    keySecretName: "shop-backup-key",
  });

  it("NoBackupYet before the first backup completes", () => {
    const s = backupStatus(
      inputs({ backup: TEST_BACKUP }),
      obs([run("shop-backup-first", undefined, false)]),
      now,
    );
    expect(s.healthy).toMatchObject({ status: "False", reason: "NoBackupYet" });
    expect(s.healthy.message).toContain("first backup running");
  });

  it("a successful run gives the last backup, the window, the list and BackupsCurrent", () => {
    const s = backupStatus(
      inputs({ backup: TEST_BACKUP }),
      obs([run("j1", "2026-01-01T03:01:10Z", true, summary())]),
      now,
    );
    expect(s.healthy).toMatchObject({ status: "True", reason: "BackupsCurrent" });
    expect(s.backup.lastSuccessfulBackup).toMatchObject({
      label: "20260101-020000F_20260101-030000I",
      type: "incr",
    });
    expect(s.backup.recentBackups).toHaveLength(2);
    expect(s.backup.recoverableFrom).toBe("2026-01-01T02:00:00Z");
    expect(s.backup.recoverableUntil).toBe("2026-01-01T03:01:40Z");
    expect(s.backup.nextFullBackup).toBe("2026-01-02T01:00:00Z");
    expect(s.backup.nextIncrementalBackup).toBe("2026-01-01T04:00:00Z");
    expect(s.offsite).toMatchObject({ status: "True", reason: "ObjectStorage" });
  });

  it("the serving timeline comes from the newest run that saw it, else stays as it was", () => {
    const runs = [
      run("j3", "2026-01-01T03:01:10Z", true, summary()),
      run("j2", "2026-01-01T02:01:10Z", true, summary({ timeline: 3 })),
      run("j1", "2026-01-01T01:01:10Z", true, summary({ timeline: 2 })),
    ];
    expect(backupStatus(inputs({ backup: TEST_BACKUP }), obs(runs), now).backup.timeline).toBe(3);
    // The database is not the repository's (initialised anew): its runs carry no timeline.
    const inp = inputs({ backup: TEST_BACKUP });
    inp.platform.status = { backup: { timeline: 4 } };
    expect(backupStatus(inp, obs(runs.slice(0, 1)), now).backup.timeline).toBe(4);
    expect(
      backupStatus(inputs({ backup: TEST_BACKUP }), obs(runs.slice(0, 1)), now).backup.timeline,
    ).toBeUndefined();
  });

  it("the newest run failing on the repository turns it False with RepositoryUnreachable", () => {
    const failed = summary({ ok: false, error: "ERROR: [049]: HTTP request failed with 403 (Forbidden)" });
    const s = backupStatus(
      inputs({ backup: TEST_BACKUP }),
      obs([
        run("j2", "2026-01-01T03:05:00Z", false, failed),
        run("j1", "2026-01-01T03:01:10Z", true, summary()),
      ]),
      now,
    );
    expect(s.healthy).toMatchObject({ status: "False", reason: "RepositoryUnreachable" });
    expect(s.backup.lastFailedBackup).toMatchObject({ job: "j2" });
    expect(failureReason("ERROR: [025]: backup and archive info files exist but do not match")).toBe(
      "LastBackupFailed",
    );
  });

  it("overdue, archiving failing, key missing, stopped", () => {
    const inp = inputs({ backup: TEST_BACKUP });
    const ok = [run("j1", "2026-01-01T03:01:10Z", true, summary())];
    expect(backupStatus(inp, obs(ok), new Date("2026-01-01T04:31:00Z")).healthy.reason).toBe("BackupOverdue");
    const arch = summary({ archiver: { lastArchived: 1767236500, failedCount: 3, lastFailed: 1767236600 } });
    expect(backupStatus(inp, obs([run("j1", "2026-01-01T03:01:10Z", true, arch)]), now).healthy.reason).toBe(
      "ArchivingFailing",
    );
    expect(backupStatus(inp, obs(ok, false), now).healthy.reason).toBe("EncryptionKeyMissing");
    const stopped = inputs({ backup: TEST_BACKUP, stopped: true });
    expect(backupStatus(stopped, obs(ok), new Date("2026-01-09T00:00:00Z")).healthy).toMatchObject({
      status: "True",
      reason: "PlatformStopped",
    });
  });

  it("without spec.backup: NotConfigured and no status.backup", () => {
    const inp = inputs();
    const s = withBackupStatus(inp, { backup: { repository: "s3://old" } }, undefined, now);
    expect(s.backup).toBeUndefined();
    expect(s.conditions?.find((c) => c.type === "BackupHealthy")).toMatchObject({ reason: "NotConfigured" });
  });

  it("reads runs from Jobs and the runner's termination message, newest first", () => {
    const job = (name: string, type: string, done?: string) => ({
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: {
        name,
        labels: { "cronscale.io/backup-type": type },
        creationTimestamp: "2026-01-01T00:00:00Z",
      },
      status: done
        ? { conditions: [{ type: done, status: "True", lastTransitionTime: "2026-01-01T01:00:00Z" }] }
        : {},
    });
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p", labels: { "batch.kubernetes.io/job-name": "a" } },
      status: { containerStatuses: [{ name: "backup", state: { terminated: { message: summary() } } }] },
    };
    const runs = jobRuns([job("a", "full", "Complete"), job("b", "incr")], [pod]);
    expect(runs.map((r) => [r.job, r.type, r.succeeded, r.finishedAt !== undefined])).toEqual([
      ["b", "incr", false, false],
      ["a", "full", true, true],
    ]);
    expect(runs[1]?.summary?.backups).toHaveLength(2);
    expect(parseSummary("not json")).toBeUndefined();
  });
});

describe("backup events", () => {
  it("announce a new backup, a failed run, a problem and the recovery once each", () => {
    const healthy = (status: "True" | "False", reason: string) => ({
      type: "BackupHealthy",
      status,
      reason,
      message: reason,
      lastTransitionTime: "2026-01-01T00:00:00Z",
    });
    const ok = { label: "L1", type: "full" as const, startTime: "a", stopTime: "b" };
    const failed = { time: "2026-01-01T03:05:00Z", job: "j2", message: "HTTP 403" };
    const s1 = { backup: { lastSuccessfulBackup: ok }, conditions: [healthy("True", "BackupsCurrent")] };
    const s2 = {
      backup: { lastSuccessfulBackup: ok, lastFailedBackup: failed },
      conditions: [healthy("False", "RepositoryUnreachable")],
    };
    const s3 = {
      backup: { lastSuccessfulBackup: { ...ok, label: "L2" } },
      conditions: [healthy("True", "BackupsCurrent")],
    };
    expect(backupEvents(undefined, s1).map((e) => e.reason)).toEqual(["BackupSucceeded"]);
    expect(backupEvents(s1, s2).map((e) => e.reason)).toEqual(["BackupFailed", "RepositoryUnreachable"]);
    expect(backupEvents(s2, s2)).toEqual([]);
    expect(backupEvents(s2, s3).map((e) => e.reason)).toEqual(["BackupSucceeded", "BackupRecovered"]);
  });
});

describe("ScalePlatformBackup status", () => {
  const req = {
    apiVersion: "cronscale.io/v1alpha1",
    kind: "ScalePlatformBackup",
    metadata: { name: "before-upgrade", namespace: "ns", generation: 1 },
    spec: { platformName: "shop", type: "full" as const },
  };
  const now = new Date("2026-01-01T03:10:00Z");
  const job = { apiVersion: "batch/v1", kind: "Job", metadata: { name: "before-upgrade-bk" }, status: {} };

  it("Pending with the reason, Running while the Job runs, Succeeded with the label, Failed with the error", () => {
    expect(
      requestStatus(req, undefined, undefined, "ScalePlatform shop has no spec.backup", now),
    ).toMatchObject({
      phase: "Pending",
      message: "ScalePlatform shop has no spec.backup",
    });
    expect(requestStatus(req, run("before-upgrade-bk", undefined, false), job, undefined, now).phase).toBe(
      "Running",
    );
    const done = requestStatus(
      req,
      run("before-upgrade-bk", "2026-01-01T03:05:00Z", true, summary()),
      job,
      undefined,
      now,
    );
    expect(done).toMatchObject({ phase: "Succeeded", backupLabel: "20260101-020000F_20260101-030000I" });
    expect(done.conditions?.[0]).toMatchObject({ type: "Complete", status: "True" });
    const skipped = summary({ skipped: "another backup of this database is running" });
    expect(
      requestStatus(req, run("x", "2026-01-01T03:05:00Z", true, skipped), job, undefined, now).phase,
    ).toBe("Failed");
    const err = summary({ ok: false, error: "ERROR: [049]: HTTP 403" });
    expect(
      requestStatus(req, run("x", "2026-01-01T03:05:00Z", false, err), job, undefined, now),
    ).toMatchObject({
      phase: "Failed",
      message: "ERROR: [049]: HTTP 403",
    });
    // The result stays when the Job is gone later.
    expect(requestStatus({ ...req, status: done }, undefined, undefined, undefined, now)).toBe(done);
  });
});
