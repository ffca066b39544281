import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgExecutionArchive } from "../../../src/archive/store.ts";
import { useNamespace, waitFor } from "../../support/cluster.ts";
import { startPostgres, type TestPostgres } from "../../support/postgres.ts";
import { applyTask, executions } from "../scheduledtask/helpers.ts";
import { installCrds, localTaskConfig, startOperator, type TestOperator } from "../scheduledtask/operator.ts";

// Drill (not part of the suite; hack/bench/archive-window.sh runs it, the suite has the short
// form in test/integration/archive): a task scheduled every minute for MINUTES minutes with the
// recent window set to WINDOW keeps WINDOW TaskExecutions in etcd and every run, with its output,
// in the archive. Samples the number of records in etcd each 10 s and prints the figures.

const DRILL = process.env.CRONSCALE_DRILL === "archive-window";
const MINUTES = Number(process.env.DRILL_MINUTES ?? 15);
const WINDOW = Number(process.env.DRILL_WINDOW ?? 5);
const TASK = "every-minute";

describe.runIf(DRILL)("drill: an every-minute task's history", () => {
  const ns = useNamespace("drill-archive", { "pod-security.kubernetes.io/enforce": "restricted" });
  let pg: TestPostgres;
  let archive: PgExecutionArchive;
  let op: TestOperator;

  beforeAll(async () => {
    await installCrds();
    pg = await startPostgres();
    archive = new PgExecutionArchive(pg.dsn);
    await archive.migrate();
    op = await startOperator(ns.name, localTaskConfig({ archiveWindow: WINDOW }, ["Bash"]), { archive });
  }, 900_000);
  afterAll(async () => {
    await op?.stop();
    await archive?.close();
    await pg?.destroy();
  });

  it(`keeps ${WINDOW} records in etcd and all ${MINUTES} runs in the archive with their output`, async () => {
    const t0 = Date.now();
    await applyTask(ns.name, TASK, {
      schedule: "* * * * *",
      language: "Bash",
      plan: "Micro",
      timeoutSeconds: 30,
      script: 'echo "run at $(date -u +%H:%M:%S)"; seq 1 50 | sed "s/^/line /"\n',
    });
    const history = () => archive.history({ namespace: ns.name, taskName: TASK, limit: 1000 });
    let maxEtcd = 0;
    const samples: number[] = [];
    await waitFor(
      async () => {
        const inEtcd = (await executions(ns.name, TASK)).length;
        maxEtcd = Math.max(maxEtcd, inEtcd);
        samples.push(inEtcd);
        return (await history()).length >= MINUTES ? true : undefined;
      },
      { timeoutMs: (MINUTES + 3) * 60_000, intervalMs: 10_000, what: `${MINUTES} runs archived` },
    );
    // No further runs: the figures are about these MINUTES.
    await applyTask(ns.name, TASK, {
      schedule: "* * * * *",
      suspend: true,
      language: "Bash",
      plan: "Micro",
      timeoutSeconds: 30,
      script: 'echo "run at $(date -u +%H:%M:%S)"; seq 1 50 | sed "s/^/line /"\n',
    });
    await new Promise((r) => setTimeout(r, 15_000));
    const inEtcd = await waitFor(
      async () => {
        const list = await executions(ns.name, TASK);
        return list.length <= WINDOW ? list : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 2000, what: `the window of ${WINDOW}` },
    );
    const runs = await history();
    const outputs = await Promise.all(runs.map((r) => archive.run(ns.name, TASK, r.name)));
    const withOutput = outputs.filter((o) =>
      /^run at \d\d:\d\d:\d\d\nline 1\n[\s\S]*line 50\n$/.test(o?.spec.output ?? ""),
    );
    const jobs = new Set(runs.map((r) => r.spec.jobName));
    process.stderr.write(
      [
        `drill archive-window: ${MINUTES} min, window ${WINDOW}, ${((Date.now() - t0) / 60_000).toFixed(1)} min wall`,
        `  runs in the archive: ${runs.length} (${jobs.size} distinct Jobs), with their whole output: ${withOutput.length}`,
        `  TaskExecutions in etcd at the end: ${inEtcd.length}; most seen at once: ${maxEtcd}; samples: ${samples.join(" ")}`,
        "",
      ].join("\n"),
    );
    expect(inEtcd).toHaveLength(WINDOW);
    expect(runs.length).toBeGreaterThanOrEqual(MINUTES);
    expect(jobs.size).toBe(runs.length);
    expect(withOutput).toHaveLength(runs.length);
    // Every record in etcd is also in the archive (it leaves etcd only once archived).
    expect(inEtcd.every((e) => jobs.has(e.spec.jobName))).toBe(true);
  });
});
