import { describe, expect, it } from "vitest";
import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import type { ScheduledTask } from "../../api/v1alpha1/scheduledtask.ts";
import type { TaskExecution } from "../../api/v1alpha1/taskexecution.ts";
import { MemoryExecutionArchive } from "../../archive/memory.ts";
import { planHistory } from "./history.ts";
import { ScheduledTaskReconciler } from "./reconciler.ts";
import { makeCtx, makeTask, TEST_CONFIG } from "./testing.ts";

const config = { ...TEST_CONFIG, archiveWindow: 5, maxExecutionsPerTask: 12 };
const NOW = new Date("2026-11-01T01:00:00Z");

/** Run i of task hello, finished i minutes past midnight. */
function exec(i: number): TaskExecution {
  const completion = new Date(Date.UTC(2026, 10, 1, 0, i)).toISOString().replace(".000", "");
  return {
    apiVersion: API_VERSION,
    kind: "TaskExecution",
    metadata: {
      name: `hello-${String(100 - i).padStart(3, "0")}`,
      namespace: "ns",
      labels: { "cronscale.io/task": "hello" },
    },
    spec: {
      taskName: "hello",
      trigger: "Schedule",
      jobName: `hello-${i}`,
      language: "Bash",
      plan: "Micro",
      completionTime: completion,
      durationSeconds: 1,
      billedSeconds: 1,
      cost: "0.000004",
      currency: "USD",
      result: "Succeeded",
      reason: "Completed",
      message: "exit code 0",
      output: `run ${i}\n`,
      outputTruncated: false,
      expiresAt: "2026-11-08T00:00:00Z",
    },
  };
}

const task = makeTask("hello", { language: "Bash", script: "true", plan: "Micro" });
const runs = (n: number) => Array.from({ length: n }, (_, i) => exec(i + 1));

describe("planHistory with an archive", () => {
  it("archives every record and keeps only the window in etcd", async () => {
    const archive = new MemoryExecutionArchive();
    const plan = await planHistory(task, runs(15), NOW, config, archive);
    expect(archive.runs.size).toBe(15);
    expect(plan.keep.map((e) => e.spec.jobName)).toEqual([
      "hello-15",
      "hello-14",
      "hello-13",
      "hello-12",
      "hello-11",
    ]);
    expect(plan.remove).toHaveLength(10);
    expect(plan.archived).toMatchObject({ status: "True", reason: "Archived" });
    expect(plan.usage).toEqual({
      month: "2026-11",
      runs: 15,
      billedSeconds: 15,
      cost: "0.00006",
      currency: "USD",
    });
  });

  it("deletes nothing unarchived while the archive is down (up to the bound), then catches up once", async () => {
    const archive = new MemoryExecutionArchive();
    archive.down = true;
    const prior = {
      ...task,
      status: { usage: { month: "2026-11", runs: 3, billedSeconds: 3, cost: "0.000012", currency: "USD" } },
    } as ScheduledTask;
    const down = await planHistory(prior, runs(8), NOW, config, archive);
    expect(down.remove).toEqual([]);
    expect(down.keep).toHaveLength(8);
    expect(down.archived).toMatchObject({ status: "False", reason: "ArchiveUnreachable" });
    expect(down.archived?.message).toMatch(/3 run\(s\) beyond the window of 5/);
    expect(down.usage).toEqual(prior.status?.usage);
    expect(down.retryAfterMs).toBe(30_000);
    // Past the bound the oldest go.
    expect(
      (await planHistory(prior, runs(14), NOW, config, archive)).remove.map((e) => e.spec.jobName),
    ).toEqual(["hello-2", "hello-1"]);
    archive.down = false;
    const up = await planHistory(prior, runs(8), NOW, config, archive);
    expect(archive.runs.size).toBe(8);
    expect(up.remove).toHaveLength(3);
    // Again: nothing doubled.
    await planHistory(prior, runs(8), NOW, config, archive);
    expect((await archive.usage("ns", "2026-11", "hello"))[0]?.runs).toBe(8);
  });
});

describe("ScheduledTaskReconciler with an archive", () => {
  it("deletes archived records beyond the window and says so in a condition", async () => {
    const { ctx, client } = makeCtx([task], NOW.toISOString());
    for (const e of runs(7)) client.seed(e);
    const archive = new MemoryExecutionArchive();
    await new ScheduledTaskReconciler(config, new Set(), archive).reconcile(
      { namespace: "ns", name: "hello" },
      ctx,
    );
    expect(client.all<TaskExecution>(API_VERSION, "TaskExecution")).toHaveLength(5);
    const live = await client.get<ScheduledTask>(API_VERSION, "ScheduledTask", "ns", "hello");
    expect(live?.status?.conditions?.find((c) => c.type === "Archived")).toMatchObject({ status: "True" });
    expect(live?.status?.usage).toMatchObject({ runs: 7, billedSeconds: 7 });
    // Steady state: no more writes.
    client.clearWrites();
    await new ScheduledTaskReconciler(config, new Set(), archive).reconcile(
      { namespace: "ns", name: "hello" },
      ctx,
    );
    expect(client.writes).toEqual([]);
  });
});
