import { describe, expect, it } from "vitest";
import type { ScalePlatform } from "../../../src/api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformRestore } from "../../../src/api/v1alpha1/scaleplatformrestore.ts";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { addonEnv, skipReason } from "../addons/support.ts";
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
import { servedViaIngress, usePlatformOperator, viaIngress } from "./operator.ts";

// Restores on the real cluster (real PostgreSQL with pgBackRest, versitygw over TLS): a target
// outside the recoverable window is refused with the window; a point-in-time restore brings back
// the rows written before the chosen time and not those after, while the shop keeps answering
// (/healthz queries the database) through the Ingress until the cutover, whose downtime is
// reported; a restore whose Job fails leaves the shop serving; a cutover that cannot finish (no
// node takes the new database pod) rolls back to the old data, and the next restore to latest
// follows the serving timeline, not the one the abandoned restore left in the repository; a
// restore to a named backup brings back that backup's rows.

const reason = await skipReason("dns", "storage", "s3", "ingress");
const NAME = "rewind";
const HOST = "rewind.platform.test";
const DB = `${NAME}-db-0`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function applyRestore(ns: string, name: string, spec: Record<string, unknown>, allowFailure = false) {
  const obj = {
    apiVersion: "cronscale.io/v1alpha1",
    kind: "ScalePlatformRestore",
    metadata: { name },
    spec: { platformName: NAME, ...spec },
  };
  return kubectl(["apply", "--server-side", "--field-manager=test", "-f", "-"], {
    namespace: ns,
    input: JSON.stringify(obj),
    allowFailure,
  });
}

async function waitRestore(
  ns: string,
  name: string,
  phase: "Succeeded" | "Failed",
): Promise<ScalePlatformRestore> {
  const r = await waitFor(
    async () => {
      const cur = await getObj<ScalePlatformRestore>(ns, "scaleplatformrestore", name);
      const end = cur?.status?.phase;
      return end === "Succeeded" || end === "Failed" ? cur : undefined;
    },
    { timeoutMs: 300_000, intervalMs: 500, what: `ScalePlatformRestore ${name} finished` },
  ).catch(async (err: Error) => {
    const cur = await getObj<ScalePlatformRestore>(ns, "scaleplatformrestore", name);
    throw new Error(`${err.message}: ${cur?.status?.phase}: ${cur?.status?.message}`);
  });
  expect(r.status?.phase, `ScalePlatformRestore ${name}: ${r.status?.message}`).toBe(phase);
  return r;
}

/**
 * Closes the current WAL segment and waits until it is in the repository, so "latest" and a time
 * just past includes what was written (otherwise the archive timeout, a minute, decides). Its own
 * statement: pg_switch_wal in the writing transaction would switch before the commit.
 */
async function archiveNow(ns: string): Promise<void> {
  const segment = await psql(ns, DB, "select pg_walfile_name(pg_switch_wal())");
  await waitFor(
    async () => (await psql(ns, DB, "select last_archived_wal from pg_stat_archiver")) >= segment,
    {
      timeoutMs: 30_000,
      intervalMs: 500,
      what: "the WAL segment archived",
    },
  );
}

/** Reads the shop's /healthz through the Ingress every 200 ms until stopped; returns when each read failed. */
function watchShop(): { stop(): Promise<number[]> } {
  const outages: number[] = [];
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const ok = await viaIngress(HOST, "/healthz", { timeoutMs: 2000 })
        .then((r) => r.status === 200)
        .catch(() => false);
      if (!ok) outages.push(Date.now());
      await sleep(200);
    }
  })();
  return {
    stop: async () => {
      polling = false;
      await poller;
      return outages;
    },
  };
}

/** Requests a manual full backup `name` and waits until it succeeded. */
async function requestBackup(ns: string, name: string): Promise<void> {
  await applyBackupRequest(ns, name, NAME);
  await waitFor(
    async () =>
      (await getObj<{ status?: { phase?: string } }>(ns, "scaleplatformbackup", name))?.status?.phase ===
      "Succeeded",
    { timeoutMs: 240_000, intervalMs: 1000, what: `backup ${name}` },
  );
}

/** Rows of probe by tag, read as the app's user on the current database pod. */
async function tags(ns: string): Promise<string> {
  return psql(ns, DB, "select string_agg(tag, ',' order by tag) from (select distinct tag from probe) t");
}

describe.skipIf(reason)("ScalePlatformRestore (pgBackRest PITR into a new volume)", () => {
  const ns = useNamespace("splrs", { "pod-security.kubernetes.io/enforce": "restricted" });
  // No drain sleep before an app pod stops (operator setting drainSeconds, default 5): every
  // cutover waits for the app's pods to be gone, and what these tests check of the shop is that
  // it serves until the cutover starts, not how its pods stop after that.
  usePlatformOperator(ns, { drainSeconds: 0 });
  const spec = {
    plan: "Standard",
    domains: { platform: HOST },
    backup: {
      repository: s3Repository(),
    },
  };
  let firstBackup = "";

  it("a target outside the recoverable window is refused with the window in the message", async () => {
    await createS3Secret(ns.name);
    expect((await applyPlatform(ns.name, NAME, spec)).code).toBe(0);
    const p = await waitBackupHealthy(ns.name, NAME, { timeoutMs: 480_000 });
    firstBackup = p.status?.backup?.lastSuccessfulBackup?.label ?? "";
    // The backup run read the database's timeline (its system identifier is the repository's).
    expect(p.status?.backup?.timeline).toBe(1);
    // The probes (pg_isready every 10 s since the pod started) log in as the platform's user: no
    // failed password logins of a user "postgres" in the server's log.
    const log = await kubectl(["logs", DB, "-c", "postgres"], { namespace: ns.name });
    expect(log.stdout + log.stderr).not.toContain("password authentication failed");
    await psql(
      ns.name,
      DB,
      "create table probe(tag text, at timestamptz default now()); insert into probe(tag) values ('base')",
    );

    expect((await applyRestore(ns.name, "too-old", { targetTime: "2020-01-01T00:00:00Z" })).code).toBe(0);
    const refused = await waitRestore(ns.name, "too-old", "Failed");
    expect(refused.status?.message).toMatch(
      new RegExp(
        `spec.targetTime 2020-01-01T00:00:00Z is outside the recoverable window ${p.status?.backup?.recoverableFrom} to `,
      ),
    );
    expect(refused.status?.conditions?.find((c) => c.type === "Valid")).toMatchObject({
      status: "False",
      reason: "TargetOutsideWindow",
      observedGeneration: 1,
    });
    // Both target kinds at once are refused at admission.
    const both = await applyRestore(
      ns.name,
      "both",
      {
        targetTime: "2026-01-01T00:00:00Z",
        backupLabel: firstBackup,
      },
      true,
    );
    expect(both.stderr).toContain("spec.targetTime and spec.backupLabel are exclusive");
  }, 600_000);

  it("a restore whose Job fails leaves the shop serving and the platform untouched", async () => {
    // The repository refuses the restore Job (its S3 secret key is wrong when the Job's pod
    // starts; the database pod keeps the key it started with, so archiving goes on): pgBackRest
    // fails inside the running Job, before any new timeline exists — the real failure path once
    // the Job has started, and one that leaves nothing in the repository.
    const key = (secretKey: string) =>
      kubectl(
        ["patch", "secret", "s3", "-p", JSON.stringify({ stringData: { secretAccessKey: secretKey } })],
        {
          namespace: ns.name,
        },
      );
    await key("not-the-secret-key");
    const shop = watchShop();
    expect((await applyRestore(ns.name, "denied", {})).code).toBe(0);
    const failed = await waitRestore(ns.name, "denied", "Failed");
    await key(addonEnv("s3.env")?.S3_SECRET_KEY ?? "");
    const outages = await shop.stop();
    expect(failed.status?.message).toMatch(/^restore failed, platform untouched: /);
    expect(failed.status?.cutoverStartTime).toBeUndefined();
    expect(outages, "failed reads through the Ingress during the failed restore").toEqual([]);
    // Untouched: same volume, app not held, the new volume deleted.
    const sts = await getObj(ns.name, "statefulset", `${NAME}-db`);
    expect(sts?.metadata.annotations?.["cronscale.io/data-claim"]).toBeUndefined();
    const app = await getObj(ns.name, "deployment", NAME);
    expect(app?.metadata.annotations?.["cronscale.io/restore-hold"]).toBeUndefined();
    await waitFor(async () => !(await getObj(ns.name, "pvc", `${NAME}-db-denied`)), {
      timeoutMs: 30_000,
      intervalMs: 500,
      what: "the failed restore's volume deleted",
    });
    expect(await tags(ns.name)).toBe("base");
  }, 600_000);

  it("a cutover that cannot finish rolls back to the old data; a later restore to latest follows the serving timeline, not the abandoned one", async () => {
    // The abandoned restore goes back to before 'served': its Job promotes a new timeline without
    // it and archives that timeline to the repository before the cutover starts.
    await sleep(1500);
    const target = new Date().toISOString();
    await sleep(1500);
    await psql(ns.name, DB, "insert into probe(tag) values ('served')");
    await archiveNow(ns.name);
    const started = Date.now();
    expect(
      (await applyRestore(ns.name, "abandoned", { targetTime: target, cutoverTimeoutSeconds: 40 })).code,
    ).toBe(0);
    // Once the restore Job's pod has its node, the node takes no new pod (cordoned, as for
    // maintenance): the database pod on the restored volume never starts, and the cutover
    // times out. The node takes pods again as soon as the rollback starts.
    await waitFor(
      async () => {
        const r = await kubectl(
          ["get", "pods", "-l", "cronscale.io/restore=abandoned", "-o", "jsonpath={.items[*].spec.nodeName}"],
          { namespace: ns.name },
        );
        return r.stdout.trim() || undefined;
      },
      { timeoutMs: 120_000, intervalMs: 300, what: "the restore Job's pod scheduled" },
    );
    const node = (await kubectl(["get", "nodes", "-o", "jsonpath={.items[0].metadata.name}"])).stdout.trim();
    await kubectl(["cordon", node]);
    try {
      await waitFor(
        async () =>
          (await getObj<ScalePlatformRestore>(ns.name, "scaleplatformrestore", "abandoned"))?.status
            ?.rollbackStartTime,
        { timeoutMs: 300_000, intervalMs: 300, what: "the cutover rolling back" },
      );
    } finally {
      await kubectl(["uncordon", node]);
    }
    const failed = await waitRestore(ns.name, "abandoned", "Failed");
    console.log(
      `cutover timed out and rolled back: ${(Date.now() - started) / 1000}s after the restore was created`,
    );
    expect(failed.status?.conditions?.find((c) => c.type === "Complete")).toMatchObject({
      status: "False",
      reason: "CutoverTimedOut",
    });
    // It timed out on the database: the app was at zero and the database had been switched to
    // the restored volume, whose pod the cordoned node never started.
    const rollingBack = await kubectl(
      [
        "get",
        "events",
        "--field-selector",
        "reason=CutoverRollingBack,involvedObject.name=abandoned",
        "-o",
        "jsonpath={.items[*].message}",
      ],
      { namespace: ns.name },
    );
    expect(rollingBack.stdout).toMatch(
      new RegExp(`waiting for the database (ready|to restart) on ${NAME}-db-abandoned\\)`),
    );
    // The shop serves the data it had before, through the Ingress, from the old volume.
    expect((await servedViaIngress(HOST, "/healthz", { timeoutMs: 5000 })).status).toBe(200);
    const sts = await getObj(ns.name, "statefulset", `${NAME}-db`);
    expect(sts?.metadata.annotations?.["cronscale.io/data-claim"]).toBeUndefined();
    expect(await tags(ns.name)).toBe("base,served");
    await psql(ns.name, DB, "insert into probe(tag) values ('later')");

    // The next restore (latest) follows the serving database's timeline: PostgreSQL's default,
    // the newest timeline in the repository, would replay the abandoned one (only 'base').
    await archiveNow(ns.name);
    expect((await applyRestore(ns.name, "latest", {})).code).toBe(0);
    const done = await waitRestore(ns.name, "latest", "Succeeded");
    expect(done.status?.volumeClaimName).toBe(`${NAME}-db-latest`);
    expect(await tags(ns.name)).toBe("base,later,served");
    // The abandoned restore's Job did promote (its timeline is in the repository); this one
    // promoted past it.
    expect(failed.status?.timeline).toBeGreaterThan(1);
    expect(done.status?.timeline).toBeGreaterThan(failed.status?.timeline ?? 0);
    console.log(`restore latest after a rolled-back one: downtime ${done.status?.downtimeSeconds}s`);
  }, 600_000);

  it("PITR brings back the rows before the time, not after; the shop serves until the cutover", async () => {
    await psql(ns.name, DB, "insert into probe(tag) values ('before')");
    await sleep(1500);
    const target = new Date().toISOString();
    await sleep(1500);
    await psql(ns.name, DB, "insert into probe(tag) values ('after')");
    expect(await tags(ns.name)).toBe("after,base,before,later,served");
    await archiveNow(ns.name);

    // The shop answers through the Ingress (/healthz queries the database) all along.
    const shop = watchShop();
    expect((await applyRestore(ns.name, "pitr", { targetTime: target })).code).toBe(0);
    const done = await waitRestore(ns.name, "pitr", "Succeeded");
    const outages = await shop.stop();
    const cutover = Date.parse(done.status?.cutoverStartTime ?? "");
    expect(
      outages.filter((t) => t < cutover - 1000),
      "failed reads before the cutover",
    ).toEqual([]);
    expect(done.status?.downtimeSeconds).toBeGreaterThan(0);
    // App to zero, database restarted, app started again: tens of seconds on a loaded 2-core node.
    expect(done.status?.downtimeSeconds).toBeLessThan(180);
    expect(done.status?.oldVolumeClaimName).toBe(`${NAME}-db-latest`);
    console.log(`restore pitr: downtime ${done.status?.downtimeSeconds}s (${outages.length} failed reads)`);

    expect(await tags(ns.name)).toBe("base,before,later,served");
    // The database answers with the current Secret's password (psql above), and the restore's
    // follow-up full backup of the new timeline lands.
    await waitFor(
      async () => {
        const b = await getObj<{ status?: { phase?: string } }>(ns.name, "scaleplatformbackup", `pitr-after`);
        return b?.status?.phase === "Succeeded";
      },
      { timeoutMs: 240_000, intervalMs: 1000, what: "the full backup after the restore" },
    );
    const printed = await kubectl(["get", "splrs", "pitr"], { namespace: ns.name });
    expect(printed.stdout).toMatch(/DOWNTIME/);
  }, 420_000);

  it("a restore to a named backup brings back that backup's state; the old volume is released on confirmation", async () => {
    // A backup of the timeline served now, taken before the restore under the name of its
    // follow-up full backup: the restore requests nothing new, and the repository's newest backup
    // stays one of the branch it leaves (the next test restores from there).
    await requestBackup(ns.name, "to-first-after");
    expect((await applyRestore(ns.name, "to-first", { backupLabel: firstBackup })).code).toBe(0);
    const done = await waitRestore(ns.name, "to-first", "Succeeded");
    expect(done.status?.oldVolumeClaimName).toBe(`${NAME}-db-pitr`);
    // The first backup was taken before the probe table existed.
    expect(await psql(ns.name, DB, "select to_regclass('probe') is null")).toBe("t");
    expect(
      (await applyRestore(ns.name, "to-first", { backupLabel: firstBackup, releaseOldVolume: true })).code,
    ).toBe(0);
    await waitFor(
      async () => {
        const r = await getObj<ScalePlatformRestore>(ns.name, "scaleplatformrestore", "to-first");
        const pvc = await getObj(ns.name, "pvc", `${NAME}-db-pitr`);
        return r?.status?.oldVolumeReleased && (!pvc || pvc.metadata.deletionTimestamp);
      },
      { timeoutMs: 30_000, intervalMs: 1000, what: "the old volume released" },
    );
    const p: ScalePlatform = await getPlatform(ns.name, NAME);
    expect(p.metadata.name).toBe(NAME);
  }, 420_000);

  it("right after a restore, latest starts from the newest backup of the serving timeline's history, not the newer one of the branch left", async () => {
    // The newest backup in the repository (to-first-after) is on the timeline the restore to the
    // first backup left; pgBackRest alone would start from it and recovery would fail ("not a
    // child of this server's history"). The serving timeline's ancestors: the first backup only.
    const info = await kubectl(
      ["exec", DB, "-c", "postgres", "--", "pgbackrest", "info", "--output=json", "--log-level-console=warn"],
      { namespace: ns.name },
    );
    const backups = (
      JSON.parse(info.stdout) as { backup: { label: string; archive: { start: string } }[] }[]
    )[0]?.backup;
    const newest = backups?.at(-1);
    const branchLeft = (
      await getObj<{ status?: { backupLabel?: string } }>(ns.name, "scaleplatformbackup", "to-first-after")
    )?.status?.backupLabel;
    expect(newest?.label).toBe(branchLeft);
    const first = backups?.find((b) => b.label === firstBackup);
    expect(newest?.archive.start.slice(0, 8)).not.toBe(first?.archive.start.slice(0, 8));

    await psql(ns.name, DB, "create table kept(tag text); insert into kept values ('after the restore')");
    await archiveNow(ns.name);
    expect((await applyRestore(ns.name, "again", {})).code).toBe(0);
    const done = await waitRestore(ns.name, "again", "Succeeded");
    expect(await psql(ns.name, DB, "select string_agg(tag, ',') from kept")).toBe("after the restore");
    const job = await kubectl(["logs", "-l", "cronscale.io/restore=again", "--tail=-1"], {
      namespace: ns.name,
      allowFailure: true,
    });
    if (job.code === 0) expect(job.stdout).toContain(`--set=${firstBackup}`);
    console.log(`restore latest right after a restore: downtime ${done.status?.downtimeSeconds}s`);
  }, 300_000);
});
