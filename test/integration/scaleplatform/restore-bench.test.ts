// Restore benchmark on the local cluster, not a test: it runs only from `npm run bench:restore`
// (CRONSCALE_BENCH=1; KUBECONFIG of a cluster started with ADDONS=platform). A platform with
// backups to the s3 add-on; a pgbench database of about 1 GB (BENCH_SCALE, 68 by default: pgbench
// keeps ~15 MB per scale unit); a full backup; BENCH_WAL_SECONDS of pgbench writes after it (WAL
// to replay); then a ScalePlatformRestore to the latest state, timed. The restore Job reports the
// restored bytes, the pgBackRest restore and the WAL replay seconds (its termination message):
// throughput and replay rate come from those, extrapolated to each plan's storage against the
// spec's RTO of 4 hours. Prints the figures and appends them to docs/benchmarks.md.
import { appendFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PLAN_TABLE } from "../../../src/api/plans.ts";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { skipReason } from "../addons/support.ts";
import { applyPlatform, createS3Secret, getObj, s3Repository, waitBackupHealthy } from "./helpers.ts";
import { usePlatformOperator } from "./operator.ts";

const reason = process.env.CRONSCALE_BENCH === "1" ? await skipReason("dns", "storage", "s3") : "a benchmark";
const SCALE = Number(process.env.BENCH_SCALE ?? 68);
const WAL_SECONDS = Number(process.env.BENCH_WAL_SECONDS ?? 60);
const RTO_SECONDS = 4 * 3600;
const NAME = "bench";
const DB = `${NAME}-db-0`;
const MB = 1e6;

type Status = { status?: Record<string, string | number> };

/** Runs a shell command in the database container, as the database user (password from its env). */
async function inDb(ns: string, cmd: string): Promise<string> {
  const script = `export PGHOST=127.0.0.1 PGUSER="$POSTGRES_USER" PGDATABASE="$POSTGRES_DB" PGPASSWORD="$POSTGRES_PASSWORD"; ${cmd}`;
  const r = await kubectl(["exec", DB, "-c", "postgres", "--", "bash", "-c", script], {
    namespace: ns,
    timeoutMs: 3_600_000,
  });
  return r.stdout.trim();
}
const sql = (ns: string, q: string) => inDb(ns, `psql -qAtX -c "${q}"`);

async function finished(ns: string, kind: string, name: string, timeoutMs: number): Promise<Status> {
  const done = await waitFor(
    async () => {
      const cur = await getObj<Status>(ns, kind, name);
      const phase = cur?.status?.phase;
      return phase === "Succeeded" || phase === "Failed" ? cur : undefined;
    },
    { timeoutMs, intervalMs: 2000, what: `${kind} ${name}` },
  );
  if (done.status?.phase !== "Succeeded") throw new Error(`${kind} ${name}: ${done.status?.message}`);
  return done;
}

const seconds = (s: Status, from: string, to: string) =>
  (Date.parse(String(s.status?.[to])) - Date.parse(String(s.status?.[from]))) / 1000;
const hms = (s: number) =>
  `${Math.floor(s / 3600)} h ${String(Math.round((s % 3600) / 60)).padStart(2, "0")} min`;

describe.skipIf(reason)("restore benchmark: a ~1 GB pgbench database", () => {
  const nsRef = useNamespace("rbench", { "pod-security.kubernetes.io/enforce": "restricted" });
  usePlatformOperator(nsRef);
  it("restores, timed, extrapolated to each plan against the RTO", async () => {
    const ns = nsRef.name;
    const t0 = Date.now();
    const log = (m: string) => process.stderr.write(`bench: ${Math.round((Date.now() - t0) / 1000)}s ${m}\n`);
    await createS3Secret(ns);
    const r = await applyPlatform(ns, NAME, {
      plan: "Standard",
      domains: { platform: "bench.platform.test" },
      backup: {
        repository: s3Repository(),
      },
    });
    if (r.code !== 0) throw new Error(r.stderr);
    await waitBackupHealthy(ns, NAME, { timeoutMs: 900_000, intervalMs: 2000 });
    log(`platform up; pgbench -i -s ${SCALE}`);
    const initStart = Date.now();
    await inDb(ns, `pgbench -i -q -s ${SCALE} -I dtgvp`);
    const initSeconds = (Date.now() - initStart) / 1000;
    const dbBytes = Number(await sql(ns, "select pg_database_size(current_database())"));
    log(`database ${Math.round(dbBytes / MB)} MB in ${initSeconds}s; full backup`);

    const apply = (obj: object) =>
      kubectl(["apply", "--server-side", "--field-manager=bench", "-f", "-"], {
        namespace: ns,
        input: JSON.stringify(obj),
      });
    await apply({
      apiVersion: "cronscale.io/v1alpha1",
      kind: "ScalePlatformBackup",
      metadata: { name: "bench-full" },
      spec: { platformName: NAME, type: "full" },
    });
    const backup = await finished(ns, "scaleplatformbackup", "bench-full", 1_800_000);
    log(`full backup done; ${WAL_SECONDS}s of pgbench writes`);

    const lsn0 = await sql(ns, "select pg_current_wal_lsn()");
    await inDb(ns, `pgbench -n -c 2 -j 2 -T ${WAL_SECONDS} >/dev/null`);
    const walBytes = Number(await sql(ns, `select pg_wal_lsn_diff(pg_current_wal_lsn(), '${lsn0}')`));
    const segment = await sql(ns, "select pg_walfile_name(pg_switch_wal())");
    await waitFor(async () => (await sql(ns, "select last_archived_wal from pg_stat_archiver")) >= segment, {
      timeoutMs: 600_000,
      intervalMs: 2000,
      what: "the WAL archived",
    });
    log(`${Math.round(walBytes / MB)} MB of WAL archived; restore to latest`);

    await apply({
      apiVersion: "cronscale.io/v1alpha1",
      kind: "ScalePlatformRestore",
      metadata: { name: "latest" },
      spec: { platformName: NAME },
    });
    const done = await finished(ns, "scaleplatformrestore", "latest", 3_600_000);
    const term = await kubectl(
      ["get", "pods", "-l", "cronscale.io/restore=latest", "-o", "jsonpath={..state.terminated.message}"],
      { namespace: ns },
    );
    const job = JSON.parse(term.stdout) as { bytes: number; restoreSeconds: number; replaySeconds: number };
    const restoreMBps = job.bytes / MB / Math.max(job.restoreSeconds, 1);
    const replayMBps = walBytes / MB / Math.max(job.replaySeconds, 1);
    const figures = {
      pgbenchScale: SCALE,
      databaseMB: Math.round(dbBytes / MB),
      pgbenchInitSeconds: initSeconds,
      fullBackupSeconds: seconds(backup, "startTime", "completionTime"),
      walMB: Math.round(walBytes / MB),
      restoredMB: Math.round(job.bytes / MB),
      pgbackrestRestoreSeconds: job.restoreSeconds,
      walReplaySeconds: job.replaySeconds,
      restoreMBps: Math.round(restoreMBps * 10) / 10,
      walReplayMBps: Math.round(replayMBps * 10) / 10,
      restoreTotalSeconds: seconds(done, "startTime", "completionTime"),
      cutoverDowntimeSeconds: done.status?.downtimeSeconds,
    };
    // Each plan's full storage restored at the measured rate; what the RTO leaves for WAL replay
    // (with hourly incrementals, a restore to latest replays at most about an hour of WAL).
    const plans = Object.entries(PLAN_TABLE).map(([plan, f]) => {
      const restore = (f.storageGiB * 1024 ** 3) / MB / restoreMBps;
      const leftGB = (Math.max(RTO_SECONDS - restore, 0) * replayMBps * MB) / 1e9;
      return { plan, storageGiB: f.storageGiB, restore, leftGB };
    });
    console.log(JSON.stringify({ ...figures, plans }, null, 2));
    const rows = plans
      .map(
        (p) =>
          `| ${p.plan} | ${p.storageGiB} GiB | ${hms(p.restore)} | ${p.restore < RTO_SECONDS ? "yes" : "**no**"} | ${Math.round(p.leftGB)} GB |`,
      )
      .join("\n");
    const when = new Date().toISOString().slice(0, 16).replace("T", " ");
    appendFileSync(
      "docs/benchmarks.md",
      `
### Run of ${when} UTC (appended by \`npm run bench:restore\`)

| figure | value |
| --- | --- |
| database (pgbench scale ${SCALE}) | ${figures.databaseMB} MB (initialised in ${Math.round(initSeconds)} s) |
| full backup (ScalePlatformBackup) | ${figures.fullBackupSeconds} s |
| WAL written after the backup (${WAL_SECONDS} s of pgbench) | ${figures.walMB} MB |
| pgbackrest restore (${figures.restoredMB} MB restored) | ${job.restoreSeconds} s: **${figures.restoreMBps} MB/s** |
| WAL replay, start to promoted | ${job.replaySeconds} s: **${figures.walReplayMBps} MB/s** |
| restore total (Job start → app ready on the restored data) | ${figures.restoreTotalSeconds} s |
| cutover downtime (\`status.downtimeSeconds\`) | ${figures.cutoverDowntimeSeconds} s |

| plan | storage | full storage restored at ${figures.restoreMBps} MB/s | within the 4 h RTO | WAL the rest of the 4 h replays at ${figures.walReplayMBps} MB/s |
| --- | --- | --- | --- | --- |
${rows}
`,
    );
    expect(job.bytes).toBeGreaterThan(dbBytes / 2);
  }, 3_600_000);
});
