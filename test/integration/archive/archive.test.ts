import type { AddressInfo } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { taskManualJobName } from "../../../src/api/v1alpha1/names.ts";
import { KubeAuthorizer, startHistoryServer } from "../../../src/archive/http.ts";
import { startArchiveMaintenance } from "../../../src/archive/maintenance.ts";
import { PgExecutionArchive } from "../../../src/archive/store.ts";
import { archiveCommand } from "../../../src/cli/history.ts";
import { loadConfig } from "../../../src/config.ts";
import { sumCosts } from "../../../src/controllers/scheduledtask/billing.ts";
import { RealKubeClient } from "../../../src/runtime/client.ts";
import { KubeTransport } from "../../../src/runtime/rest.ts";
import { kubeConfig, kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { postgresMissing, startPostgres, type TestPostgres } from "../../support/postgres.ts";
import { makeTestTls } from "../../support/tls.ts";
import { applyTask, executions, getTask, runNow, waitTask } from "../scheduledtask/helpers.ts";
import { installCrds, localTaskConfig, startOperator, type TestOperator } from "../scheduledtask/operator.ts";
import { diagnose } from "./diagnose.ts";

// The execution archive with real pods and a real PostgreSQL (a host process): runs beyond the
// window leave etcd only once archived; an archive outage keeps them in etcd and says so; all
// land once it returns, none doubled, and the month's totals are the sum of the records; the
// history endpoint (over TLS) answers history, logs and usage with 401/403/200 to real tokens;
// the retention, set as a user sets it, prunes the older runs from the archive, not the usage.

const missing = postgresMissing();
if (missing) console.warn(`skipping the archive integration test: ${missing}`);

const ns = useNamespace("archive", { "pod-security.kubernetes.io/enforce": "restricted" });
const TASK = "every-run";
const WINDOW = 2;
let pg: TestPostgres;
let archive: PgExecutionArchive;
let op: TestOperator;

beforeAll(async () => {
  if (missing) return;
  await installCrds();
  pg = await startPostgres();
  archive = new PgExecutionArchive(pg.dsn, { connectTimeoutMs: 2000 });
  await archive.migrate();
  const config = localTaskConfig({ archiveWindow: WINDOW, maxExecutionsPerTask: 10 }, ["Bash"]);
  op = await startOperator(ns.name, config, { archive });
}, 900_000);
afterAll(async () => {
  await op?.stop();
  await archive?.close();
  await pg?.destroy();
});

/** One manual run, waited for until the operator has acted on its token. */
async function run(token: string) {
  await runNow(ns.name, TASK, token);
  await waitTask(ns.name, TASK, (t) => t.status?.lastManualRunToken === token, `run-now ${token} taken`);
}

const archived = async () =>
  (await archive.history({ namespace: ns.name, taskName: TASK, limit: 100 })).length;

describe.skipIf(missing)("execution archive", () => {
  it("keeps the window in etcd and every run in the archive, across an outage, nothing lost or doubled", async () => {
    await applyTask(ns.name, TASK, {
      schedule: "0 0 1 1 *",
      language: "Bash",
      plan: "Micro",
      timeoutSeconds: 30,
      // 0.6 s: each run is billed 1 s, so the month's totals are a sum of something.
      script: 'sleep 0.6\necho "run at $(date +%s%N)"\n',
    });
    await waitTask(ns.name, TASK, (t) => t.status?.phase === "Running", "Running");
    const tokens = ["1", "2", "3", "4", "5", "6"];
    const job = (token: string) => taskManualJobName(TASK, token);
    const jobs = (...ts: string[]) => ts.map(job).sort();
    // A Job's or a record's name ends with the Job's suffix ("m-" and the token's hash).
    const runOf = (name: string) => {
      const token = tokens.find((t) => name.endsWith(job(t).slice(TASK.length + 1)));
      return token ? `run ${token}` : name;
    };
    // Job names as listed (sorted), duplicates kept: a run doubled shows twice.
    const inArchive = async () =>
      (await archive.history({ namespace: ns.name, taskName: TASK, limit: 100 }))
        .map((r) => r.spec.jobName)
        .sort();
    const inEtcd = async () => (await executions(ns.name, TASK)).map((e) => e.spec.jobName).sort();
    const etcdHolds = (want: string[]) => async () => {
      const names = await inEtcd();
      return names.join() === want.join() ? names : undefined;
    };
    let down = false;
    try {
      for (const token of ["1", "2", "3", "4"]) {
        await run(token);
        await waitFor(async () => ((await inArchive()).includes(job(token)) ? true : undefined), {
          timeoutMs: 120_000,
          what: `run ${token} archived`,
        });
      }
      // By name, not by count: a run reaches the archive before its TaskExecution is created, so
      // right after run 4 is archived etcd may still hold the previous window (runs 2 and 3), and
      // run 2 would then be pruned only once the archive can confirm it has it, after the outage.
      await waitFor(etcdHolds(jobs("3", "4")), { timeoutMs: 60_000, what: "the window of runs 3 and 4" });
      const t = await getTask(ns.name, TASK);
      expect(t?.status?.conditions?.find((c) => c.type === "Archived")).toMatchObject({ status: "True" });

      // Outage: new runs stay in etcd beside the window, nothing is pruned or captured twice (a
      // run that left the window, whose Job still lingers, is not recorded again while the
      // archive cannot say it has it), and the condition says why.
      await pg.stop();
      down = true;
      for (const token of ["5", "6"]) {
        await run(token);
        await waitFor(async () => ((await inEtcd()).includes(job(token)) ? true : undefined), {
          timeoutMs: 120_000,
          what: `run ${token} recorded in etcd`,
        });
      }
      await waitFor(etcdHolds(jobs("3", "4", "5", "6")), {
        timeoutMs: 30_000,
        what: "the window (runs 3, 4) and the 2 unarchived runs (5, 6) in etcd",
      });
      await waitTask(
        ns.name,
        TASK,
        (x) =>
          x.status?.conditions?.some((c) => c.type === "Archived" && c.reason === "ArchiveUnreachable") ??
          false,
        "Archived=False",
        60_000,
      );
      // Back: everything lands, once, and the window shrinks again.
      await pg.start();
      down = false;
      await waitFor(async () => ((await inArchive()).length >= 6 ? true : undefined), {
        timeoutMs: 120_000,
        what: "all 6 runs archived",
      });
      await waitFor(etcdHolds(jobs("5", "6")), {
        timeoutMs: 60_000,
        what: "the window of runs 5 and 6 again",
      });
      expect(await inArchive()).toEqual(jobs(...tokens));
      // The month's totals are the sum of the archived records, each counted once.
      const records = await archive.history({ namespace: ns.name, taskName: TASK, limit: 100 });
      const usage = await archive.usage(ns.name, new Date().toISOString().slice(0, 7), TASK);
      expect(usage[0]).toMatchObject({
        runs: 6,
        billedSeconds: records.reduce((n, r) => n + (r.spec.billedSeconds ?? 0), 0),
        cost: sumCosts(records.map((r) => r.spec.cost ?? "0")),
      });
      expect(usage[0]?.billedSeconds).toBeGreaterThanOrEqual(6);
      const back = await waitTask(ns.name, TASK, (x) => x.status?.usage?.runs === 6, "usage of 6 runs");
      expect(back.status?.usage).toMatchObject({
        billedSeconds: usage[0]?.billedSeconds,
        cost: usage[0]?.cost,
      });
      expect(back.status?.conditions?.find((c) => c.type === "Archived")).toMatchObject({ status: "True" });
      const newest = await archive.run(ns.name, TASK);
      expect(newest?.spec.output).toMatch(/^run at \d+\n$/);
    } catch (err) {
      // Read while the failure's state lasts (the archive may still be stopped).
      const state = await diagnose({ namespace: ns.name, task: TASK, archive, logLines: op.logLines, runOf });
      if (err instanceof Error) err.message += `\n${state}`;
      throw err;
    } finally {
      // The tests below read the archive: one failure here must not leave it stopped for them.
      if (down) await pg.start();
    }
  });

  it("serves history, logs and usage to a token that may get the task: 401 without, 403 for another, 200 for it", async () => {
    await kubectl(["create", "serviceaccount", "reader"], { namespace: ns.name });
    await kubectl(["create", "serviceaccount", "stranger"], { namespace: ns.name });
    await kubectl(["create", "role", "read-tasks", "--verb=get", "--resource=scheduledtasks.cronscale.io"], {
      namespace: ns.name,
    });
    await kubectl(
      ["create", "rolebinding", "reader", "--role=read-tasks", `--serviceaccount=${ns.name}:reader`],
      {
        namespace: ns.name,
      },
    );
    const token = async (sa: string) =>
      (await kubectl(["create", "token", sa, "--duration=10m"], { namespace: ns.name })).stdout.trim();
    // Over TLS, as the chart serves it: the CLI trusts the endpoint's CA with --ca-file.
    const tls = makeTestTls();
    const server = await startHistoryServer(
      { host: "127.0.0.1", port: 0, log: pino({ level: "silent" }), tls },
      { archive, authorizer: new KubeAuthorizer(new RealKubeClient(KubeTransport.create(kubeConfig()))) },
    );
    try {
      const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const untrusted = await archiveCommand(
        "history",
        [TASK, "-n", ns.name, "--server", url, "--token", await token("reader")],
        {
          out: () => undefined,
          err: (l) => expect(l).toMatch(/cannot reach .*certificate/),
          now: () => new Date(),
        },
        { KUBECONFIG: "/nonexistent" },
      );
      expect(untrusted).toBe(1);
      const cli = async (...argv: string[]) => {
        const out: string[] = [];
        const err: string[] = [];
        const code = await archiveCommand(
          argv[0] as "history",
          [...argv.slice(1), "-n", ns.name, "--server", url, "--ca-file", tls.caFile],
          { out: (l) => out.push(l), err: (l) => err.push(l), now: () => new Date() },
          { KUBECONFIG: "/nonexistent" },
        );
        return { code, out: out.join("\n"), err: err.join("\n") };
      };
      expect((await cli("history", TASK)).err).toMatch(/^error: 401/);
      expect((await cli("history", TASK, "--token", await token("stranger"))).err).toMatch(/^error: 403/);
      const ok = await cli("history", TASK, "--token", await token("reader"), "--output", "json");
      expect(ok.code).toBe(0);
      // What the archive holds (all 6 runs of the test above when it passed).
      expect(JSON.parse(ok.out).items).toHaveLength(await archived());
      expect(await archived()).toBeGreaterThan(0);
      const logs = await cli("logs", TASK, "--token", await token("reader"));
      expect(logs.out).toMatch(/^run at \d+$/);
      expect((await cli("logs", TASK)).err).toMatch(/^error: 401/);
      expect((await cli("logs", TASK, "--token", await token("stranger"))).err).toMatch(/^error: 403/);
      // A task's usage needs `get` on it; the namespace's needs `list` (the reader has not).
      const usage = await cli("usage", "--task", TASK, "--token", await token("reader"), "--output", "json");
      expect(usage.code).toBe(0);
      const items = JSON.parse(ok.out).items as { spec: { billedSeconds?: number; cost?: string } }[];
      expect(JSON.parse(usage.out).items).toMatchObject([
        {
          taskName: TASK,
          billedSeconds: items.reduce((n, r) => n + (r.spec.billedSeconds ?? 0), 0),
          cost: sumCosts(items.map((r) => r.spec.cost ?? "0")),
        },
      ]);
      expect((await cli("usage", "--token", await token("reader"))).err).toMatch(/^error: 403/);
      expect((await cli("usage", "--task", TASK, "--token", await token("stranger"))).err).toMatch(
        /^error: 403/,
      );
      expect((await cli("usage", "--task", TASK)).err).toMatch(/^error: 401/);
    } finally {
      server.close();
      tls.remove();
    }
  });

  it("prunes runs older than the retention from the archive, keeping newer runs and the month's usage", async () => {
    const month = new Date().toISOString().slice(0, 7);
    const before = (await archive.usage(ns.name, month, TASK))[0];
    // Oldest first; a cut halfway between the oldest half and the rest (runs are seconds apart).
    const runs = (await archive.history({ namespace: ns.name, taskName: TASK, limit: 100 })).reverse();
    expect(runs.length).toBeGreaterThanOrEqual(2);
    const half = Math.floor(runs.length / 2);
    const times = runs.map((r) => Date.parse(r.spec.completionTime));
    expect(times[half]).toBeGreaterThan(times[half - 1] ?? 0);
    const cut = ((times[half - 1] ?? 0) + (times[half] ?? 0)) / 2;
    // The retention as a user sets it (the chart's archive.retentionDays becomes this variable),
    // in days, so that its cut falls there; one prune at once, none after.
    const cfg = loadConfig([], {
      CRONSCALE_CONTROLLERS__TASK_EXECUTION__RETENTION_DAYS: String((Date.now() - cut) / 86_400_000),
    });
    const stop = startArchiveMaintenance(archive, {
      retentionDays: cfg.controllers.taskExecution.retentionDays,
      intervalMs: 3_600_000,
      log: pino({ level: "silent" }),
      isLeader: () => true,
    });
    try {
      await waitFor(async () => ((await archived()) < runs.length ? true : undefined), {
        timeoutMs: 30_000,
        what: "pruned",
      });
    } finally {
      stop();
    }
    const left = await archive.history({ namespace: ns.name, taskName: TASK, limit: 100 });
    expect(left.map((r) => r.name).sort()).toEqual(
      runs
        .slice(half)
        .map((r) => r.name)
        .sort(),
    );
    // The month's usage (6 runs after the test above) is the same before and after the prune.
    expect(before?.runs).toBeGreaterThan(0);
    expect((await archive.usage(ns.name, month, TASK))[0]).toEqual(before);
  });
});
