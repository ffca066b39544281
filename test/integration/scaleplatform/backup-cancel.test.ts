import { describe, expect, it } from "vitest";
import type { ScalePlatformBackup } from "../../../src/api/v1alpha1/scaleplatformbackup.ts";
import { CANCEL_BOUND_SECONDS } from "../../../src/controllers/scaleplatform/backup/runner.ts";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { skipReason } from "../addons/support.ts";
import {
  applyBackupRequest,
  applyPlatform,
  createS3Secret,
  getObj,
  psql,
  s3Repository,
  waitBackupHealthy,
} from "./helpers.ts";
import { usePlatformOperator } from "./operator.ts";

// Deleting a running ScalePlatformBackup cancels it for real: the pgBackRest backup processes in
// the database pod are gone within the stated bound, the aborted backup is not listed as a backup,
// WAL archiving keeps working, and the next manual backup succeeds (no "lock held").

const reason = await skipReason("dns", "storage", "s3");
const NAME = "cancel";
const POD = `${NAME}-db-0`;

/** `sh` in the database container; its output. */
async function inDb(ns: string, script: string): Promise<string> {
  const r = await kubectl(["exec", POD, "-c", "postgres", "--", "bash", "-c", script], { namespace: ns });
  return r.stdout.trim();
}

/**
 * The pgBackRest backup processes of the database container (pid and command line), from /proc
 * (the image has no ps). The command line must start with pgbackrest, so this shell is not listed.
 */
function backupProcesses(ns: string): Promise<string> {
  return inDb(
    ns,
    `for d in /proc/[0-9]*; do c=$(tr '\\0' ' ' < $d/cmdline 2>/dev/null) || continue; ` +
      `case "$c" in pgbackrest*backup*|/usr/bin/pgbackrest*backup*) echo "\${d#/proc/} $c";; esac; done`,
  );
}

function applyRequest(ns: string, name: string) {
  return applyBackupRequest(ns, name, NAME);
}

/** Names of the pods of a request's Job. */
async function runnerPods(ns: string, req: string): Promise<string> {
  const r = await kubectl(["get", "pods", "-l", `cronscale.io/backup-request=${req}`, "-o", "name"], {
    namespace: ns,
  });
  return r.stdout.trim();
}

function request(ns: string, name: string) {
  return getObj<ScalePlatformBackup>(ns, "scaleplatformbackup", name);
}

/** Labels of the full backups pgBackRest lists in the repository (a scheduled incremental may come in between). */
async function listedBackups(ns: string): Promise<string[]> {
  const out = await inDb(ns, "pgbackrest info --output=json --log-level-console=warn");
  const info = JSON.parse(out) as { backup?: { label: string }[] }[];
  return (info[0]?.backup ?? []).map((b) => b.label).filter((l) => l.endsWith("F"));
}

describe.skipIf(reason)("cancelling a running manual backup", () => {
  const ns = useNamespace("splbkc", { "pod-security.kubernetes.io/enforce": "restricted" });
  usePlatformOperator(ns);

  it("deleting the request stops pgBackRest in the database pod; the next backup succeeds", async () => {
    await createS3Secret(ns.name, "s3");
    const spec = {
      plan: "Standard",
      domains: { platform: "cancel.platform.test" },
      backup: { repository: s3Repository("s3") },
    };
    expect((await applyPlatform(ns.name, NAME, spec)).code).toBe(0);
    await waitBackupHealthy(ns.name, NAME, { status: "True", reason: "BackupsCurrent", timeoutMs: 150_000 });
    const before = await listedBackups(ns.name);

    // Enough data that a full backup runs for several seconds even on a quiet machine (md5 text
    // compresses poorly; 1M rows, about 130 MB, were copied in under a second there, before the
    // cancel could arrive).
    await psql(
      ns.name,
      POD,
      "create table filler as select i, md5(i::text) || md5((i+1)::text) || md5((i+2)::text) as t from generate_series(1, 4000000) i",
    );

    // Cancelled at once, while the runner is still at stanza-create (no backup started yet): no
    // backup may start afterwards.
    await applyRequest(ns.name, "early");
    await waitFor(
      async () => ((await request(ns.name, "early"))?.status?.phase === "Running" ? true : undefined),
      {
        timeoutMs: 30_000,
        intervalMs: 100,
        what: "request early Running",
      },
    );
    await kubectl(["delete", "scaleplatformbackup", "early", "--wait=true"], { namespace: ns.name });
    await waitFor(async () => ((await runnerPods(ns.name, "early")) === "" ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: "the runner pod of early to be gone",
    });
    await new Promise((r) => setTimeout(r, 3000));
    expect(await backupProcesses(ns.name), "a backup ran after its request was deleted").toBe("");
    expect(await listedBackups(ns.name), "a backup was taken after its request was deleted").toEqual(before);

    // Cancelled while copying files.
    await applyRequest(ns.name, "doomed");
    const running = await waitFor(
      async () => {
        const r = await request(ns.name, "doomed");
        if (r?.status?.phase === "Succeeded" || r?.status?.phase === "Failed")
          throw new Error(`backup ended ${r.status.phase} before it could be cancelled: ${r.status.message}`);
        const procs = await backupProcesses(ns.name);
        return procs.includes("backup:local") ? procs : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: "the backup to copy files in the database pod" },
    );
    console.log(`running:\n${running}`);

    const t0 = Date.now();
    await kubectl(["delete", "scaleplatformbackup", "doomed", "--wait=false"], { namespace: ns.name });
    await waitFor(async () => ((await backupProcesses(ns.name)) === "" ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: "no pgBackRest backup process in the database pod",
    });
    const stopped = (Date.now() - t0) / 1000;
    console.log(`pgBackRest backup gone ${stopped.toFixed(1)} s after the request was deleted`);
    const cancelLog = await inDb(ns.name, "cat /tmp/pgbackrest/log/cancel.log 2>/dev/null || true");
    // Either stop is a cancel: the cancel script the runner execs on SIGTERM (cancel.log says so),
    // or the end of the runner's exec session, when the node's runtime ends the processes it started.
    console.log(cancelLog || "(no cancel.log: the processes ended with the runner's exec session)");
    expect(stopped).toBeLessThan(CANCEL_BOUND_SECONDS);
    expect(
      await listedBackups(ns.name),
      "the backup finished before its cancel arrived (not a cancel; the test's data is too small)",
    ).toEqual(before);

    // The aborted backup is not listed; the next backup starts at once (no "lock held"); WAL
    // archiving still works (check switches a segment and waits for archive-push to store it).
    expect(await listedBackups(ns.name)).toEqual(before);
    await applyRequest(ns.name, "after");
    await inDb(ns.name, "pgbackrest check --log-level-console=warn");
    const done = await waitFor(
      async () => {
        const r = await request(ns.name, "after");
        if (r?.status?.phase === "Failed")
          throw new Error(`backup after the cancel failed: ${r.status.message}`);
        return r?.status?.phase === "Succeeded" ? r : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000, what: "the next manual backup to succeed" },
    );
    console.log(`next backup ${done.status?.backupLabel}`);
    const logs = await kubectl(["logs", "job/after-bk"], { namespace: ns.name, allowFailure: true });
    console.log(`next backup's log:\n${logs.stdout}`);
    expect(await listedBackups(ns.name)).toEqual(
      expect.arrayContaining([...before, done.status?.backupLabel]),
    );
    await waitBackupHealthy(ns.name, NAME, { status: "True", reason: "BackupsCurrent", timeoutMs: 30_000 });
  }, 400_000);
});
