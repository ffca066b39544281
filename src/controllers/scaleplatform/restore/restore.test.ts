import { describe, expect, it } from "vitest";
import { checkTarget, servingTimeline } from "../../../api/restore-target.ts";
import type { ScalePlatformSpec } from "../../../api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformRestore } from "../../../api/v1alpha1/scaleplatformrestore.ts";
import { platformInputs } from "../desired/common.ts";
import { desiredDatabaseStatefulSet } from "../desired/database.ts";
import { makePlatform, TEST_BACKUP, TEST_CONFIG } from "../testing.ts";
import { desiredRestoreJob } from "./desired.ts";
import { dbServesFrom, jobOutcome, restoredTimeline, withPhase } from "./status.ts";

const backup = {
  recoverableFrom: "2026-01-01T02:00:00Z",
  lastSuccessfulBackup: { label: "20260101-020000F", type: "full" as const, startTime: "a", stopTime: "b" },
  recentBackups: [{ label: "20260101-020000F", type: "full" as const, startTime: "a", stopTime: "b" }],
};
const now = new Date("2026-01-01T05:00:00Z");
const base = {
  platformName: "shop",
  releaseOldVolume: false,
  oldVolumeTTLHours: 72,
  cutoverTimeoutSeconds: 300,
};

describe("restore target", () => {
  it("a time inside the window becomes pgBackRest's time target, promoted", () => {
    const c = checkTarget({ ...base, targetTime: "2026-01-01T04:00:00Z" }, backup, now);
    expect(c).toMatchObject({
      ok: true,
      args: ["--type=time", "--target=2026-01-01 04:00:00.000+00", "--target-action=promote"],
    });
  });

  it("a time outside the window is refused with the window", () => {
    for (const t of ["2026-01-01T01:59:59Z", "2026-01-01T05:00:01Z"]) {
      const c = checkTarget({ ...base, targetTime: t }, backup, now);
      expect(c.ok).toBe(false);
      if (!c.ok)
        expect(c.message).toBe(
          `spec.targetTime ${t} is outside the recoverable window 2026-01-01T02:00:00Z to 2026-01-01T05:00:00Z`,
        );
    }
  });

  it("a named backup must be one of the platform's; latest has no options; no backup refuses", () => {
    expect(checkTarget({ ...base, backupLabel: "20260101-020000F" }, backup, now)).toMatchObject({
      ok: true,
      args: ["--set=20260101-020000F", "--type=immediate", "--target-action=promote"],
    });
    const unknown = checkTarget({ ...base, backupLabel: "20250101-020000F" }, backup, now);
    expect(unknown.ok ? "" : unknown.message).toContain("is not one of the platform's backups");
    expect(checkTarget(base, backup, now)).toMatchObject({ ok: true, target: "latest", args: [] });
    // A backup label names its backup; an unknown timeline leaves the choice to pgBackRest.
    expect(checkTarget({ ...base, backupLabel: "20260101-020000F" }, backup, now, 3)).not.toHaveProperty(
      "pick",
    );
    expect(checkTarget(base, backup, now)).not.toHaveProperty("pick");
    expect(checkTarget(base, undefined, now)).toMatchObject({ ok: false, window: "none (no backup yet)" });
  });

  it("latest and a time follow the serving timeline, not the newest one in the repository", () => {
    expect(checkTarget(base, backup, now, 3)).toMatchObject({
      args: ["--target-timeline=3"],
      pick: { timeline: 3 },
    });
    expect(checkTarget({ ...base, targetTime: "2026-01-01T04:00:00Z" }, backup, now, 3)).toMatchObject({
      // The Job starts from the newest ancestor of timeline 3 that ended before the target (pick.ts).
      pick: { timeline: 3, before: Date.parse("2026-01-01T04:00:00Z") / 1000 },
      args: [
        "--type=time",
        "--target=2026-01-01 04:00:00.000+00",
        "--target-action=promote",
        "--target-timeline=3",
      ],
    });
    // The backup runner saw timeline 2; a restore since cut over to 5 (an abandoned one took 4).
    expect(servingTimeline({ ...backup, timeline: 2 }, [5, 0])).toBe(5);
    expect(servingTimeline({ ...backup, timeline: 6 }, [5])).toBe(6);
    expect(servingTimeline(backup, [])).toBeUndefined();
    expect(restoredTimeline('{"ok":true,"bytes":1,"restoreSeconds":2,"replaySeconds":3,"timeline":4}')).toBe(
      4,
    );
    expect(restoredTimeline("ERROR: [075]: no backup set found")).toBeUndefined();
  });
});

describe("restore children and status", () => {
  const p = makePlatform("shop", { backup: TEST_BACKUP } as unknown as Partial<ScalePlatformSpec>);
  const inp = platformInputs(p, p.spec, TEST_CONFIG, { certManager: false, customMetrics: false });
  const r: ScalePlatformRestore = {
    apiVersion: "cronscale.io/v1alpha1",
    kind: "ScalePlatformRestore",
    metadata: { name: "pitr", namespace: "ns", generation: 1, uid: "u1" },
    spec: base,
  };

  it("the Job mounts the new volume, runs the database image with the repository's environment, one option a line", () => {
    const job = desiredRestoreJob(inp, r, "pitr-restore", "shop-db-pitr", ["--type=time", "--target=a b"]);
    const pod = (job.spec as { template: { spec: Record<string, unknown> } }).template.spec as {
      containers: { image: string; env: { name: string; value?: string }[] }[];
      volumes: { name: string; persistentVolumeClaim?: { claimName: string } }[];
    };
    expect(pod.volumes[0]).toEqual({ name: "data", persistentVolumeClaim: { claimName: "shop-db-pitr" } });
    const env = Object.fromEntries(pod.containers[0]?.env.map((e) => [e.name, e.value]) ?? []);
    expect(env.RESTORE_ARGS).toBe("--type=time\n--target=a b");
    expect(env.RESTORE_PICK_TIMELINE).toBe("");
    const picking = desiredRestoreJob(inp, r, "pitr-restore", "shop-db-pitr", ["--target-timeline=2"], {
      timeline: 2,
      before: 1767240000,
      target: "time 2026-01-01T04:00:00Z",
      window: "w",
    });
    const penv = Object.fromEntries(
      (
        picking.spec as { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } }
      ).template.spec.containers[0]?.env.map((e) => [e.name, e.value]) ?? [],
    );
    expect(penv).toMatchObject({
      RESTORE_PICK_TIMELINE: "2",
      RESTORE_PICK_BEFORE: "1767240000",
      RESTORE_TARGET: "time 2026-01-01T04:00:00Z",
      RESTORE_WINDOW: "w",
    });
    expect(env.PGBACKREST_REPO1_TYPE).toBe("s3");
    expect(job.metadata.ownerReferences?.[0]).toMatchObject({ kind: "ScalePlatformRestore", name: "pitr" });
  });

  it("after a cutover the StatefulSet mounts the restored claim and records it", () => {
    const sts = desiredDatabaseStatefulSet(inp, undefined, "shop-db-pitr") as unknown as {
      metadata: { annotations?: Record<string, string> };
      spec: {
        template: {
          spec: {
            containers: { volumeMounts: { name: string; mountPath: string }[] }[];
            volumes: { name: string }[];
          };
        };
      };
    };
    expect(sts.metadata.annotations).toEqual({ "cronscale.io/data-claim": "shop-db-pitr" });
    const mount = sts.spec.template.spec.containers[0]?.volumeMounts[0];
    expect(mount).toEqual({ name: "restored-data", mountPath: "/var/lib/postgresql/data" });
    expect(sts.spec.template.spec.volumes).toContainEqual({
      name: "restored-data",
      persistentVolumeClaim: { claimName: "shop-db-pitr" },
    });
    const plain = desiredDatabaseStatefulSet(inp) as unknown as typeof sts;
    expect(plain.metadata.annotations).toBeUndefined();
    expect(plain.spec.template.spec.containers[0]?.volumeMounts[0]?.name).toBe("data");
  });

  it("phases set Complete with observedGeneration; a Job's outcome and the database on the new claim are read", () => {
    const s = withPhase(
      r,
      "Failed",
      "refused: x",
      now,
      {},
      { status: "False", reason: "TargetOutsideWindow", message: "x" },
    );
    expect(s.conditions?.map((c) => [c.type, c.status, c.reason, c.observedGeneration])).toEqual([
      ["Valid", "False", "TargetOutsideWindow", 1],
      ["Complete", "False", "Failed", 1],
    ]);
    expect(s.completionTime).toBe("2026-01-01T05:00:00Z");
    const job = { apiVersion: "batch/v1", kind: "Job", metadata: { name: "j" }, status: {} };
    expect(jobOutcome(job, [])).toEqual({ done: false });
    const failed = {
      ...job,
      status: { conditions: [{ type: "Failed", status: "True", message: "BackoffLimitExceeded" }] },
    };
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      status: {
        containerStatuses: [{ state: { terminated: { message: "ERROR: [075]: no backup set found" } } }],
      },
    };
    expect(jobOutcome(failed, [pod])).toEqual({
      done: true,
      ok: false,
      message: "ERROR: [075]: no backup set found",
    });
    const db = (claim: string, created: string, ready: boolean) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "shop-db-0", creationTimestamp: created },
      spec: { volumes: [{ name: "restored-data", persistentVolumeClaim: { claimName: claim } }] },
      status: { conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
    });
    const since = Date.parse("2026-01-01T05:00:00Z");
    expect(dbServesFrom(db("shop-db-pitr", "2026-01-01T05:00:03Z", true), "shop-db-pitr", since)).toBe(true);
    expect(dbServesFrom(db("shop-db-pitr", "2026-01-01T05:00:03Z", false), "shop-db-pitr", since)).toBe(
      false,
    );
    expect(dbServesFrom(db("data-shop-db-0", "2026-01-01T05:00:03Z", true), "shop-db-pitr", since)).toBe(
      false,
    );
    expect(dbServesFrom(db("shop-db-pitr", "2026-01-01T04:00:00Z", true), "shop-db-pitr", since)).toBe(false);
  });
});
