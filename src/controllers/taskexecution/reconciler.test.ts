import { describe, expect, it } from "vitest";
import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import type { TaskExecution } from "../../api/v1alpha1/taskexecution.ts";
import { MemoryExecutionArchive } from "../../archive/memory.ts";
import type { KubeObject } from "../../runtime/types.ts";
import { makeCtx, makeTask, TEST_CONFIG } from "../scheduledtask/testing.ts";
import { MemoryPodLogReader } from "./logs.ts";
import { TaskExecutionReconciler } from "./reconciler.ts";

const SECRET = "hunter2-very-secret";

function seedRun(
  client: ReturnType<typeof makeCtx>["client"],
  exitCode: number,
  seconds: number,
  message = "cronscale-runner/v1 run-ms=2403 compile-ms=\n",
) {
  client.seed({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "hello-env-1", namespace: "ns" },
    data: { TOKEN: Buffer.from(SECRET).toString("base64") },
  });
  client.seed({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: "hello-29000000",
      namespace: "ns",
      creationTimestamp: "2026-01-01T00:00:00Z",
      labels: {
        "cronscale.io/task": "hello",
        "cronscale.io/trigger": "Schedule",
        "app.kubernetes.io/managed-by": "cronscale",
      },
    },
    spec: {
      template: {
        metadata: {
          // The revision that ran was Python on Small; the task is Bash on Micro by now.
          annotations: {
            "cronscale.io/config-revision": "1",
            "cronscale.io/timeout-seconds": "30",
            "cronscale.io/task-language": "Python",
            "cronscale.io/task-plan": "Small",
          },
        },
      },
    },
    status: {
      startTime: "2026-01-01T00:00:00Z",
      conditions: [
        { type: exitCode === 0 ? "Complete" : "Failed", status: "True", reason: "BackoffLimitExceeded" },
      ],
    },
  });
  const end = new Date(Date.parse("2026-01-01T00:00:01Z") + seconds * 1000).toISOString().replace(".000", "");
  client.seed({
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "hello-29000000-abcde",
      namespace: "ns",
      labels: { "batch.kubernetes.io/job-name": "hello-29000000" },
    },
    spec: {
      containers: [
        {
          name: "script",
          env: [{ name: "TOKEN", valueFrom: { secretKeyRef: { name: "hello-env-1", key: "TOKEN" } } }],
        },
      ],
    },
    status: {
      containerStatuses: [
        {
          name: "script",
          state: { terminated: { exitCode, message, startedAt: "2026-01-01T00:00:01Z", finishedAt: end } },
        },
      ],
    },
  });
}

/** A finished run as the cluster shows it: its Job (completed a moment after its container) and pod. */
function seedFinished(
  client: ReturnType<typeof makeCtx>["client"],
  job: string,
  t: { created: string; finished: string; jobCompleted: string },
) {
  client.seed({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: job,
      namespace: "ns",
      creationTimestamp: t.created,
      labels: { "cronscale.io/task": "hello", "app.kubernetes.io/managed-by": "cronscale" },
    },
    status: {
      startTime: t.created,
      completionTime: t.jobCompleted,
      conditions: [{ type: "Complete", status: "True" }],
    },
  } as KubeObject);
  client.seed({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: `${job}-abcde`, namespace: "ns", labels: { "batch.kubernetes.io/job-name": job } },
    spec: { containers: [{ name: "script" }] },
    status: {
      containerStatuses: [
        {
          name: "script",
          state: { terminated: { exitCode: 0, startedAt: t.created, finishedAt: t.finished } },
        },
      ],
    },
  } as KubeObject);
}

describe("TaskExecutionReconciler", () => {
  it("records a finished run once: result, exit code, duration, masked output, owned by the task", async () => {
    const task = makeTask("hello", {
      language: "Bash",
      script: "echo $TOKEN; exit 3",
      plan: "Micro",
      timeoutSeconds: 30,
    });
    const { ctx, client, events } = makeCtx([task]);
    seedRun(client, 3, 2);
    const logs = new MemoryPodLogReader();
    logs.logs.set("ns/hello-29000000-abcde/script", `token is ${SECRET}\nboom\n`);
    const r = new TaskExecutionReconciler(TEST_CONFIG, logs);
    await r.reconcile({ namespace: "ns", name: "hello" }, ctx);
    await r.reconcile({ namespace: "ns", name: "hello" }, ctx);
    const recs = client.all<TaskExecution>(API_VERSION, "TaskExecution");
    expect(recs).toHaveLength(1);
    const rec = recs[0] as TaskExecution;
    expect(rec.metadata.name).toBe("hello-8232774399-29000000");
    expect(rec.metadata.ownerReferences?.[0]?.uid).toBe("uid-hello");
    expect(rec.metadata.labels).toMatchObject({
      "cronscale.io/task": "hello",
      "cronscale.io/result": "Failed",
    });
    expect(rec.spec).toMatchObject({
      trigger: "Schedule",
      result: "Failed",
      exitCode: 3,
      durationSeconds: 2,
      language: "Python",
      plan: "Small",
      measuredBy: "Runner",
      runMilliseconds: 2403,
      billedSeconds: 2,
      cost: "0.000016",
      currency: "USD",
      output: "token is ****\nboom\n",
      outputTruncated: false,
      expiresAt: "2026-01-08T00:00:03Z",
    });
    expect(JSON.stringify(events.events)).not.toContain(SECRET);
    expect(events.withReason("ExecutionFailed")).toHaveLength(1);
  });

  it("bills by the container's times when the runner left no report", async () => {
    const task = makeTask("hello", { language: "Bash", script: "true", plan: "Micro", timeoutSeconds: 30 });
    const { ctx, client } = makeCtx([task]);
    seedRun(client, 0, 3, "");
    await new TaskExecutionReconciler(TEST_CONFIG, new MemoryPodLogReader()).reconcile(
      { namespace: "ns", name: "hello" },
      ctx,
    );
    const rec = client.all<TaskExecution>(API_VERSION, "TaskExecution")[0];
    expect(rec?.spec).toMatchObject({ measuredBy: "ContainerTimes", billedSeconds: 3, cost: "0.000024" });
  });

  it("archives the run with more output than etcd keeps, keyed by the run", async () => {
    const task = makeTask("hello", { language: "Bash", script: "true", plan: "Micro", timeoutSeconds: 30 });
    const { ctx, client } = makeCtx([task]);
    seedRun(client, 0, 2);
    const logs = new MemoryPodLogReader();
    const big = `${"x".repeat(99)}\n`.repeat(2000); // 200,000 characters
    logs.logs.set("ns/hello-29000000-abcde/script", big);
    const archive = new MemoryExecutionArchive();
    const r = new TaskExecutionReconciler(TEST_CONFIG, logs, new Set(), { archive });
    await r.reconcile({ namespace: "ns", name: "hello" }, ctx);
    const stored = await archive.run("ns", "hello");
    expect(stored).toMatchObject({ name: "hello-8232774399-29000000", taskUid: "uid-hello" });
    expect(stored?.spec.output).toBe(big);
    const rec = client.all<TaskExecution>(API_VERSION, "TaskExecution")[0];
    expect(rec?.spec.output.length).toBeLessThan(65536 + 200);
    expect(rec?.spec.outputTruncated).toBe(true);
  });

  it("does not capture again a run the archive has after its record left etcd", async () => {
    const task = makeTask("hello", { language: "Bash", script: "true", plan: "Micro", timeoutSeconds: 30 });
    const { ctx, client } = makeCtx([task]);
    seedRun(client, 0, 2);
    const archive = new MemoryExecutionArchive();
    const r = new TaskExecutionReconciler(TEST_CONFIG, new MemoryPodLogReader(), new Set(), { archive });
    await r.reconcile({ namespace: "ns", name: "hello" }, ctx);
    // The window moved on: the record is deleted from etcd while the Job still lingers.
    await client.delete(API_VERSION, "TaskExecution", "ns", "hello-8232774399-29000000");
    client.clearWrites();
    await r.reconcile({ namespace: "ns", name: "hello" }, ctx);
    expect(client.writes).toEqual([]);
    // Without an answer from the archive it is captured (the archive's insert is idempotent).
    archive.down = true;
    await r.reconcile({ namespace: "ns", name: "hello" }, ctx);
    expect(client.all<TaskExecution>(API_VERSION, "TaskExecution")).toHaveLength(1);
  });

  it("does not capture again, while the archive is down, a run that left the window in the second its successor finished", async () => {
    const task = makeTask("hello", { language: "Bash", script: "true", plan: "Micro", timeoutSeconds: 30 });
    const { ctx, client } = makeCtx([task]);
    // Three runs one after the other: each Job completes 2 s after its container (as on a real
    // node), the next run starts at once and finishes within the same second.
    seedFinished(client, "hello-m-1", {
      created: "2026-01-01T00:00:00Z",
      finished: "2026-01-01T00:00:01Z",
      jobCompleted: "2026-01-01T00:00:03Z",
    });
    seedFinished(client, "hello-m-2", {
      created: "2026-01-01T00:00:03Z",
      finished: "2026-01-01T00:00:03Z",
      jobCompleted: "2026-01-01T00:00:05Z",
    });
    seedFinished(client, "hello-m-3", {
      created: "2026-01-01T00:00:05Z",
      finished: "2026-01-01T00:00:06Z",
      jobCompleted: "2026-01-01T00:00:08Z",
    });
    const archive = new MemoryExecutionArchive();
    const config = { ...TEST_CONFIG, archiveWindow: 2 };
    const r = new TaskExecutionReconciler(config, new MemoryPodLogReader(), new Set(), { archive });
    await r.reconcile({ namespace: "ns", name: "hello" }, ctx);
    expect(archive.runs.size).toBe(3);
    // The window of 2 moved on: run 1 left etcd (it is archived); its Job lingers.
    const first = client
      .all<TaskExecution>(API_VERSION, "TaskExecution")
      .find((e) => e.spec.jobName === "hello-m-1");
    await client.delete(API_VERSION, "TaskExecution", "ns", first?.metadata.name ?? "");
    // The archive goes down. Run 1's Job completed in the second run 2's container finished: it is
    // still older than the window, and is not recorded again.
    archive.down = true;
    client.clearWrites();
    await r.reconcile({ namespace: "ns", name: "hello" }, ctx);
    expect(client.writes).toEqual([]);
    expect(
      client
        .all<TaskExecution>(API_VERSION, "TaskExecution")
        .map((e) => e.spec.jobName)
        .sort(),
    ).toEqual(["hello-m-2", "hello-m-3"]);
  });

  it("ignores Jobs that are still running or not the operator's", async () => {
    const { ctx, client } = makeCtx([makeTask("hello", { language: "Bash", script: "true", plan: "Micro" })]);
    client.seed({
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "other", namespace: "ns" },
      status: {},
    } as KubeObject);
    await new TaskExecutionReconciler(TEST_CONFIG, new MemoryPodLogReader()).reconcile(
      { namespace: "ns", name: "other" },
      ctx,
    );
    expect(client.writes).toEqual([]);
  });
});
