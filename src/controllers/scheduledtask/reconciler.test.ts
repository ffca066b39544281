import { describe, expect, it } from "vitest";
import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import type { ScheduledTask } from "../../api/v1alpha1/scheduledtask.ts";
import type { TaskExecution } from "../../api/v1alpha1/taskexecution.ts";
import type { KubeObject } from "../../runtime/types.ts";
import { ScheduledTaskReconciler } from "./reconciler.ts";
import { makeCtx, makeTask, TEST_CONFIG } from "./testing.ts";

const key = { namespace: "ns", name: "hello" };
const bash = { language: "Bash" as const, script: "echo hi", plan: "Micro" as const };

async function getTask(client: ReturnType<typeof makeCtx>["client"], name = "hello") {
  return (await client.get<ScheduledTask>(API_VERSION, "ScheduledTask", "ns", name)) as ScheduledTask;
}

describe("ScheduledTaskReconciler", () => {
  it("creates the script ConfigMap and the CronJob, and reports Running with the next run", async () => {
    const { ctx, client } = makeCtx([makeTask("hello", { ...bash, schedule: "*/5 * * * *" })]);
    const r = new ScheduledTaskReconciler(TEST_CONFIG);
    const res = await r.reconcile(key, ctx);
    const kinds = client.changedWrites().map((w) => `${w.verb} ${w.kind} ${w.name}`);
    expect(kinds).toEqual([
      "apply ConfigMap hello-script-1",
      "apply CronJob hello",
      "applyStatus ScheduledTask hello",
    ]);
    const task = await getTask(client);
    expect(task.status?.phase).toBe("Running");
    expect(task.status?.nextRunTime).toBe("2026-01-01T00:05:00Z");
    expect(task.status?.resources).toEqual({ vcpu: "0.25", memory: "256 MB" });
    expect(task.status?.conditions?.find((c) => c.type === "Ready")?.reason).toBe("Scheduled");
    // Requeued just after the next due time, to refresh nextRunTime.
    expect(res.requeueAfter).toBe(271_000);
  });

  it("reports Running on the first pass even while the informer cache has not seen the CronJob yet", async () => {
    const { ctx, client } = makeCtx([makeTask("hello", { ...bash, schedule: "*/5 * * * *" })]);
    // A cache that never catches up: the task comes from the API server, children from the cache.
    const lagging = { get: () => undefined, list: () => [] };
    const r = new ScheduledTaskReconciler(TEST_CONFIG, new Set(["batch/v1|CronJob", "v1|ConfigMap"]));
    await r.reconcile(key, { ...ctx, cache: lagging as unknown as typeof ctx.cache });
    const statusWrites = client.changedWrites().filter((w) => w.verb === "applyStatus");
    expect(statusWrites).toHaveLength(1);
    expect((await getTask(client)).status?.phase).toBe("Running");
  });

  it("makes zero writes at steady state", async () => {
    const { ctx, client } = makeCtx([
      makeTask("hello", { ...bash, env: [{ name: "A", value: "secret-a" }] }),
    ]);
    const r = new ScheduledTaskReconciler(TEST_CONFIG);
    await r.reconcile(key, ctx);
    client.clearWrites();
    await r.reconcile(key, ctx);
    await r.reconcile(key, ctx);
    expect(client.writes).toEqual([]);
  });

  it("sets Ready=False/InvalidSchedule, emits a Warning and creates no children for an invalid schedule", async () => {
    const task = makeTask("hello", bash);
    task.spec.schedule = "61 * * * *";
    const { ctx, client, events } = makeCtx([task]);
    const res = await new ScheduledTaskReconciler(TEST_CONFIG).reconcile(key, ctx);
    expect(res).toEqual({});
    expect(client.changedWrites().map((w) => w.kind)).toEqual(["ScheduledTask"]);
    const live = await getTask(client);
    expect(live.status?.phase).toBe("Failed");
    const ready = live.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "InvalidSchedule" });
    expect(ready?.message).toMatch(/minute value 61 is out of range 0-59/);
    expect(events.withReason("InvalidSchedule")).toHaveLength(1);
    // A second pass neither writes nor repeats the event.
    client.clearWrites();
    await new ScheduledTaskReconciler(TEST_CONFIG).reconcile(key, ctx);
    expect(client.writes).toEqual([]);
    expect(events.withReason("InvalidSchedule")).toHaveLength(1);
  });

  it("refuses a task whose CronJob name is taken by another owner, writing no child", async () => {
    const { ctx, client } = makeCtx([makeTask("hello", bash)]);
    client.seed({
      apiVersion: "batch/v1",
      kind: "CronJob",
      metadata: { name: "hello", namespace: "ns" },
      spec: {},
    });
    await new ScheduledTaskReconciler(TEST_CONFIG).reconcile(key, ctx);
    expect(client.changedWrites().map((w) => w.kind)).toEqual(["ScheduledTask"]);
    expect((await getTask(client)).status?.conditions?.[0]?.reason).toBe("NameConflict");
  });

  it("retries a name conflict with growing backoff and takes the name once the foreign object is gone", async () => {
    const { ctx, client } = makeCtx([makeTask("hello", bash)]);
    client.seed({
      apiVersion: "batch/v1",
      kind: "CronJob",
      metadata: { name: "hello", namespace: "ns" },
      spec: {},
    });
    // No jitter: the nominal delays 5 s, 10 s, 20 s.
    const r = new ScheduledTaskReconciler(TEST_CONFIG, new Set(), undefined, () => 0.5);
    const delays = [];
    for (let i = 0; i < 3; i++) delays.push((await r.reconcile(key, ctx)).requeueAfter);
    expect(delays).toEqual([5_000, 10_000, 20_000]);
    // Removing the foreign object fires no informer event; the requeued pass finds the name free.
    await client.delete("batch/v1", "CronJob", "ns", "hello");
    await r.reconcile(key, ctx);
    const cj = await client.get<KubeObject>("batch/v1", "CronJob", "ns", "hello");
    expect(cj?.metadata.ownerReferences?.[0]?.uid).toBe("uid-hello");
    expect((await getTask(client)).status?.phase).toBe("Running");
  });

  it("suspends the CronJob and reports Stopped without a next run", async () => {
    const { ctx, client } = makeCtx([makeTask("hello", { ...bash, suspend: true })]);
    await new ScheduledTaskReconciler(TEST_CONFIG).reconcile(key, ctx);
    const cj = await client.get<KubeObject>("batch/v1", "CronJob", "ns", "hello");
    expect((cj?.spec as { suspend?: boolean } | undefined)?.suspend).toBe(true);
    const task = await getTask(client);
    expect(task.status?.phase).toBe("Stopped");
    expect(task.status?.nextRunTime).toBeUndefined();
  });

  it("on update points the CronJob at a new revision and keeps the old one while a Job uses it", async () => {
    const { ctx, client } = makeCtx([makeTask("hello", bash)]);
    const r = new ScheduledTaskReconciler(TEST_CONFIG);
    await r.reconcile(key, ctx);
    // A run of revision 1 is under way.
    client.seed({
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "hello-29000000", namespace: "ns", labels: { "cronscale.io/task": "hello" } },
      spec: { template: { metadata: { annotations: { "cronscale.io/config-revision": "1" } } } },
    });
    for (const gen of [2, 3]) {
      client.seed({
        ...makeTask("hello", { ...bash, script: `echo v${gen}` }, { generation: gen }),
        status: (await getTask(client)).status,
      });
      await r.reconcile(key, ctx);
    }
    const cms = client.all<KubeObject>("v1", "ConfigMap").map((c) => c.metadata.name);
    expect(cms.sort()).toEqual(["hello-script-1", "hello-script-2", "hello-script-3"]);
    const cj = await client.get<KubeObject>("batch/v1", "CronJob", "ns", "hello");
    expect(JSON.stringify(cj?.spec)).toContain("hello-script-3");
    // The run finished and its Job is gone: revision 1 goes, 2 stays as the previous one.
    await client.delete("batch/v1", "Job", "ns", "hello-29000000");
    await r.reconcile(key, ctx);
    expect(
      client
        .all<KubeObject>("v1", "ConfigMap")
        .map((c) => c.metadata.name)
        .sort(),
    ).toEqual(["hello-script-2", "hello-script-3"]);
  });

  it("starts one Manual Job per run-now token", async () => {
    const annotations = { "cronscale.io/run-now": "t1" };
    const { ctx, client, events } = makeCtx([makeTask("hello", bash, { annotations })]);
    const r = new ScheduledTaskReconciler(TEST_CONFIG);
    await r.reconcile(key, ctx);
    await r.reconcile(key, ctx);
    const jobs = client.all<KubeObject>("batch/v1", "Job");
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.metadata.labels?.["cronscale.io/trigger"]).toBe("Manual");
    expect((await getTask(client)).status?.lastManualRunToken).toBe("t1");
    expect(events.withReason("ManualRun")).toHaveLength(1);
  });

  it("stores inline env values in a Secret only, never in status, events or logs", async () => {
    const secret = "s3cr3t-value-xyz";
    const task = makeTask("hello", {
      ...bash,
      env: [
        { name: "TOKEN", value: secret },
        { name: "FROM_REF", valueFrom: { secretKeyRef: { name: "theirs", key: "k" } } },
      ],
    });
    const { ctx, client, events, lines } = makeCtx([task]);
    await new ScheduledTaskReconciler(TEST_CONFIG).reconcile(key, ctx);
    const s = await client.get<KubeObject>("v1", "Secret", "ns", "hello-env-1");
    expect((s?.data as Record<string, string> | undefined)?.TOKEN).toBe(
      Buffer.from(secret).toString("base64"),
    );
    const cj = JSON.stringify(await client.get("batch/v1", "CronJob", "ns", "hello"));
    expect(cj).not.toContain(secret);
    expect(cj).toContain('"secretKeyRef":{"name":"hello-env-1","key":"TOKEN"}');
    expect(cj).toContain('"secretKeyRef":{"name":"theirs","key":"k"}');
    expect(JSON.stringify((await getTask(client)).status)).not.toContain(secret);
    expect(JSON.stringify(events.events)).not.toContain(secret);
    expect(lines.join("")).not.toContain(secret);
  });

  it("follows the last execution: Failed after a failed run, Running after a success", async () => {
    const { ctx, client } = makeCtx([makeTask("hello", bash)]);
    const r = new ScheduledTaskReconciler(TEST_CONFIG);
    const exec = (name: string, result: "Succeeded" | "Failed", completion: string): TaskExecution => ({
      apiVersion: API_VERSION,
      kind: "TaskExecution",
      metadata: { name, namespace: "ns", labels: { "cronscale.io/task": "hello" } },
      spec: {
        taskName: "hello",
        trigger: "Schedule",
        jobName: name,
        language: "Bash",
        plan: "Micro",
        completionTime: completion,
        startTime: completion,
        durationSeconds: 1,
        billedSeconds: 2,
        cost: "0.000008",
        result,
        reason: result === "Failed" ? "Error" : "Completed",
        message: result === "Failed" ? "exit code 3" : "exit code 0",
        output: "",
        outputTruncated: false,
        expiresAt: "2026-01-08T00:00:00Z",
      },
    });
    client.seed(exec("hello-a", "Failed", "2026-01-01T00:00:10Z"));
    await r.reconcile(key, ctx);
    expect((await getTask(client)).status).toMatchObject({ phase: "Failed", lastResult: "Failed" });
    client.seed(exec("hello-b", "Succeeded", "2026-01-01T00:00:20Z"));
    await r.reconcile(key, ctx);
    expect((await getTask(client)).status).toMatchObject({
      phase: "Running",
      lastResult: "Succeeded",
      lastExecution: "hello-b",
      usage: { month: "2026-01", runs: 2, billedSeconds: 4, cost: "0.000016", currency: "USD" },
    });
    // Refused for an invalid spec: the last run and the usage stay in status.
    const live = await getTask(client);
    live.spec.schedule = "61 * * * *";
    live.metadata.generation = 2;
    client.seed(live);
    await r.reconcile(key, ctx);
    expect((await getTask(client)).status).toMatchObject({
      phase: "Failed",
      lastResult: "Succeeded",
      lastExecution: "hello-b",
      usage: { runs: 2, billedSeconds: 4 },
    });
    const lastRun = (await getTask(client)).status?.conditions?.find((c) => c.type === "LastRunSucceeded");
    expect(lastRun).toMatchObject({ status: "True", reason: "Succeeded" });
  });

  it("deletes executions older than 7 days and beyond the per-task limit", async () => {
    const { ctx, client, clock } = makeCtx([makeTask("hello", bash)], "2026-01-10T00:00:00Z");
    for (let i = 0; i < 5; i++) {
      client.seed({
        apiVersion: API_VERSION,
        kind: "TaskExecution",
        metadata: { name: `hello-${i}`, namespace: "ns", labels: { "cronscale.io/task": "hello" } },
        spec: {
          completionTime: `2026-01-0${i + 1}T00:00:00Z`,
          expiresAt: `2026-01-${String(i + 8).padStart(2, "0")}T00:00:00Z`,
          result: "Succeeded",
        },
      });
    }
    const r = new ScheduledTaskReconciler({ ...TEST_CONFIG, maxExecutionsPerTask: 1 });
    await r.reconcile(key, ctx);
    // 0,1,2 expired (8th, 9th, 10th); of 3 and 4 only the newest is kept.
    expect(client.all<KubeObject>(API_VERSION, "TaskExecution").map((e) => e.metadata.name)).toEqual([
      "hello-4",
    ]);
    expect(clock.now().toISOString()).toBe("2026-01-10T00:00:00.000Z");
  });
});
