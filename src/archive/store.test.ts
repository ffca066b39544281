import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresMissing, startPostgres, type TestPostgres } from "../../test/support/postgres.ts";
import type { TaskExecutionSpec } from "../api/v1alpha1/taskexecution.ts";
import {
  type ArchivedRun,
  decodeCursor,
  encodeCursor,
  PgExecutionArchive,
  positionOf,
  type RunPosition,
  type RunSummary,
} from "./store.ts";

// Against a real PostgreSQL server (Debian's postgresql-15, started by the test as a host process).

const missing = postgresMissing();
if (missing) console.warn(`skipping the archive tests: ${missing}`);

function run(task: string, n: number, over: Partial<TaskExecutionSpec> = {}): ArchivedRun {
  const completion = new Date(Date.UTC(2026, 10, 1, 0, n)).toISOString().replace(".000", "");
  return {
    namespace: "ns",
    name: `${task}-${String(9_999_999_999 - n)}-${n}`,
    taskUid: `uid-${task}`,
    spec: {
      taskName: task,
      trigger: "Schedule",
      jobName: `${task}-${n}`,
      language: "Bash",
      plan: "Micro",
      completionTime: completion,
      durationSeconds: 2,
      billedSeconds: 2,
      cost: "0.000008",
      currency: "USD",
      result: "Succeeded",
      reason: "Completed",
      message: "exit code 0",
      output: `run ${n}\n`,
      outputTruncated: false,
      expiresAt: completion,
      ...over,
    },
  };
}

describe.skipIf(missing)("PgExecutionArchive", () => {
  let pg: TestPostgres;
  let archive: PgExecutionArchive;
  beforeAll(async () => {
    pg = await startPostgres();
    archive = new PgExecutionArchive(pg.dsn);
    // Two replicas starting at once: the advisory lock lets one migrate, the other sees it done.
    const other = new PgExecutionArchive(pg.dsn);
    const [a, b] = await Promise.all([archive.migrate(), other.migrate()]);
    expect([...a, ...b]).toEqual(["0001_executions_and_usage", "0002_history_paging_indexes"]);
    await other.close();
  }, 60_000);
  afterAll(async () => {
    await archive?.close();
    await pg?.destroy();
  });

  it("stores a run once however often it is inserted, and counts its usage once", async () => {
    expect(await archive.insert([run("a", 1), run("a", 2)])).toBe(2);
    expect(
      await archive.insert([
        run("a", 2),
        run("a", 3, { result: "Failed", billedSeconds: 3, cost: "0.000012" }),
      ]),
    ).toBe(1);
    expect(await archive.archived("ns", "uid-a", [run("a", 1).name, run("a", 9).name])).toEqual(
      new Set([run("a", 1).name]),
    );
    expect(await archive.usage("ns", "2026-11", "a")).toEqual([
      {
        namespace: "ns",
        taskName: "a",
        month: "2026-11",
        currency: "USD",
        runs: 3,
        billedSeconds: 7,
        cost: "0.000028",
      },
    ]);
  });

  it("lists a task's history newest first, since a time, failed only", async () => {
    const all = await archive.history({ namespace: "ns", taskName: "a", limit: 10 });
    expect(all.map((r) => r.spec.jobName)).toEqual(["a-3", "a-2", "a-1"]);
    expect(all[0]?.spec).not.toHaveProperty("output");
    const since = await archive.history({
      namespace: "ns",
      taskName: "a",
      since: new Date("2026-11-01T00:02:00Z"),
      limit: 10,
    });
    expect(since.map((r) => r.spec.jobName)).toEqual(["a-3", "a-2"]);
    const failed = await archive.history({ namespace: "ns", taskName: "a", failedOnly: true, limit: 10 });
    expect(failed.map((r) => r.spec.jobName)).toEqual(["a-3"]);
  });

  it("pages a history by keyset, by result too, and reads each page as one index range", async () => {
    // A namespace of its own: these runs stay out of the other tests' usage.
    const many = Array.from({ length: 25 }, (_, i) => ({
      ...run("p", i, i % 5 === 0 ? { result: "Failed" } : {}),
      namespace: "paging",
    }));
    // Two runs completing in the same second: the name orders them.
    many.push({ ...run("p", 24), namespace: "paging", name: "p-twin" });
    await archive.insert(many);
    const seen: string[] = [];
    let after: RunPosition | undefined;
    for (;;) {
      const page = await archive.history({ namespace: "paging", taskName: "p", after, limit: 7 });
      seen.push(...page.map((r) => r.name));
      const last = page.at(-1);
      if (page.length < 7 || !last) break;
      after = decodeCursor(encodeCursor(positionOf(last)));
    }
    const expected = [...many]
      .sort(
        (a, b) => b.spec.completionTime.localeCompare(a.spec.completionTime) || (a.name < b.name ? 1 : -1),
      )
      .map((r) => r.name);
    expect(seen).toEqual(expected);
    expect(new Set(seen).size).toBe(26);
    const failed = await archive.history({ namespace: "paging", taskName: "p", result: "Failed", limit: 3 });
    expect(failed.map((r) => r.spec.jobName)).toEqual(["p-20", "p-15", "p-10"]);
    const rest = await archive.history({
      namespace: "paging",
      taskName: "p",
      result: "Failed",
      after: positionOf(failed[2] as RunSummary),
      limit: 3,
    });
    expect(rest.map((r) => r.spec.jobName)).toEqual(["p-5", "p-0"]);
    // The plan: an index scan of the paging index, no sort.
    const plan = await sql<{ "QUERY PLAN": string }>`explain select name from cronscale_executions
      where namespace = 'paging' and task_name = 'p' and result = 'Failed'
        and (completion_time, name) < ('2026-11-01T00:20:00Z'::timestamptz, 'x')
      order by completion_time desc, name desc limit 50`.execute(archive.db);
    const text = plan.rows.map((r) => r["QUERY PLAN"]).join("\n");
    expect(text).toContain("cronscale_executions_task_result");
    expect(text).not.toMatch(/Sort/);
    await archive.db.deleteFrom("cronscale_executions").where("task_name", "=", "p").execute();
  });

  it("refuses a cursor it did not make", () => {
    expect(decodeCursor("not-a-cursor")).toBeUndefined();
    expect(decodeCursor(Buffer.from('["x","y"]').toString("base64url"))).toBeUndefined();
    const p = { completionTime: "2026-11-01T00:00:00Z", name: "a" };
    expect(decodeCursor(encodeCursor(p))).toEqual(p);
  });

  it("keeps large output compressed and gives it back whole", async () => {
    const big = "line of output that repeats\n".repeat(40_000); // ~1.1 MB
    await archive.insert([run("b", 1, { output: big })]);
    expect((await archive.run("ns", "b"))?.spec.output).toBe(big);
    const size = await archive.db
      .selectFrom("cronscale_executions")
      .select((eb) => eb.fn<number>("octet_length", ["output_gz"]).as("n"))
      .where("task_name", "=", "b")
      .executeTakeFirst();
    expect(Number(size?.n)).toBeLessThan(big.length / 50);
    expect((await archive.run("ns", "a", run("a", 1).name))?.spec.output).toBe("run 1\n");
  });

  it("totals usage per task for the namespace, beyond the runs' retention", async () => {
    expect(await archive.prune(new Date("2026-11-01T00:02:30Z"))).toBe(3); // a-1, a-2, b-1
    expect(
      (await archive.history({ namespace: "ns", taskName: "a", limit: 10 })).map((r) => r.spec.jobName),
    ).toEqual(["a-3"]);
    const usage = await archive.usage("ns", "2026-11");
    expect(usage.map((u) => [u.taskName, u.runs, u.billedSeconds, u.cost])).toEqual([
      ["a", 3, 7, "0.000028"],
      ["b", 1, 2, "0.000008"],
    ]);
    expect(await archive.usage("ns", "2026-10")).toEqual([]);
    // A pruned run sent again (from an etcd copy) is stored again, but not billed twice.
    expect(await archive.insert([run("a", 1)])).toBe(1);
    expect((await archive.usage("ns", "2026-11", "a"))[0]?.runs).toBe(3);
  });

  it("fails while the server is down and works again when it returns", async () => {
    const quick = new PgExecutionArchive(pg.dsn, { connectTimeoutMs: 1000 });
    await pg.stop();
    await expect(quick.insert([run("c", 1)])).rejects.toThrow();
    await pg.start();
    expect(await quick.insert([run("c", 1)])).toBe(1);
    await quick.close();
  }, 60_000);
});
