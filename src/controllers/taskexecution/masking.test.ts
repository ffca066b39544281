import { describe, expect, it } from "vitest";
import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import type { TaskExecution } from "../../api/v1alpha1/taskexecution.ts";
import { SecretRegistry } from "../../log.ts";
import { ScheduledTaskReconciler } from "../scheduledtask/reconciler.ts";
import { makeCtx, makeTask, TEST_CONFIG } from "../scheduledtask/testing.ts";
import { MemoryPodLogReader } from "./logs.ts";
import { TaskExecutionReconciler } from "./reconciler.ts";

// What captured output shows: values from the user's Secrets (valueFrom.secretKeyRef) are
// masked; inline values are configuration written in the task itself and show as written.

const TOKEN = "s3cr3t-from-a-secret";

/** A task with one inline and one Secret-backed variable, its children, and one finished run. */
async function finishedRun() {
  const task = makeTask("hello", {
    language: "Bash",
    script: 'echo "$GREETING $TOKEN"',
    plan: "Micro",
    env: [
      { name: "GREETING", value: "hello" },
      { name: "TOKEN", valueFrom: { secretKeyRef: { name: "api", key: "token" } } },
    ],
  });
  const env = makeCtx([task]);
  env.client.seed({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "api", namespace: "ns" },
    data: { token: Buffer.from(TOKEN).toString("base64") },
  });
  // The task controller writes the inline values' Secret and the CronJob the Job comes from.
  await new ScheduledTaskReconciler(TEST_CONFIG).reconcile({ namespace: "ns", name: "hello" }, env.ctx);
  const cronJob = await env.client.get("batch/v1", "CronJob", "ns", "hello");
  if (!cronJob) throw new Error("no CronJob");
  const jobTemplate = (cronJob.spec as { jobTemplate: { spec: { template: { spec: unknown } } } })
    .jobTemplate;
  env.client.seed({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: "hello-29000000",
      namespace: "ns",
      creationTimestamp: "2026-01-01T00:00:00Z",
      labels: { "cronscale.io/task": "hello", "app.kubernetes.io/managed-by": "cronscale" },
    },
    spec: jobTemplate.spec,
    status: { startTime: "2026-01-01T00:00:00Z", conditions: [{ type: "Complete", status: "True" }] },
  });
  env.client.seed({
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "hello-29000000-abcde",
      namespace: "ns",
      labels: { "batch.kubernetes.io/job-name": "hello-29000000" },
    },
    spec: jobTemplate.spec.template.spec,
    status: {
      containerStatuses: [
        {
          name: "script",
          state: {
            terminated: {
              exitCode: 0,
              startedAt: "2026-01-01T00:00:01Z",
              finishedAt: "2026-01-01T00:00:02Z",
            },
          },
        },
      ],
    },
  });
  return env;
}

describe("captured output masking", () => {
  it("masks values from Secrets, shows inline values, and keeps no value after the pass", async () => {
    const { ctx, client } = await finishedRun();
    const secrets = new SecretRegistry();
    const registeredDuringRead: number[] = [];
    const logs = new MemoryPodLogReader();
    logs.logs.set("ns/hello-29000000-abcde/script", `hello ${TOKEN}\n`);
    const head = logs.head.bind(logs);
    logs.head = async (...args) => {
      registeredDuringRead.push(secrets.size);
      return head(...args);
    };
    await new TaskExecutionReconciler(TEST_CONFIG, logs, new Set(), { secrets }).reconcile(
      { namespace: "ns", name: "hello" },
      ctx,
    );
    const [rec] = client.all<TaskExecution>(API_VERSION, "TaskExecution");
    expect(rec?.spec.output).toBe("hello ****\n");
    // The Secret's value is masked in log lines while the capture runs, then dropped.
    expect(registeredDuringRead).toEqual([1]);
    expect(secrets.size).toBe(0);
  });
});
