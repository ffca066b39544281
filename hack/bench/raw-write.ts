// The raw writer of the task benchmark (tasks.ts): per task, exactly the requests the end state
// needs (the script ConfigMap, the CronJob with its ownerReference, the status), built by the
// controller's own functions, and nothing else. tasks.ts runs it bundled in a process of its own
// (raw-writer-main.mjs), started at t0 as the operator is: the floor; and in its own, already
// running process: the warm raw writer, the second figure. The benchmarks' yearly task spec, the
// ScheduledTask kind and `pool` are shared with chaos-kill.ts.
import { API_VERSION } from "../../src/api/v1alpha1/kind.ts";
import { type ScheduledTask, scheduledTaskSpecSchema } from "../../src/api/v1alpha1/scheduledtask.ts";
import { DEFAULT_TASK_CONTROLLER_CONFIG } from "../../src/controllers/scheduledtask/config.ts";
import { desiredCronJob, desiredScriptConfigMap } from "../../src/controllers/scheduledtask/desired.ts";
import { computeStatus } from "../../src/controllers/scheduledtask/status.ts";
import type { RealKubeClient } from "../../src/runtime/client.ts";

export const TASK_KIND = { apiVersion: API_VERSION, kind: "ScheduledTask" };

/** The benchmark's task spec: a yearly schedule, so no pod runs. */
export const spec = () =>
  scheduledTaskSpecSchema.parse({
    schedule: "0 0 1 1 *",
    language: "Bash",
    plan: "Micro",
    script: "echo hi",
  });

/** Runs `fn` for 0..n-1 with `workers` in flight. */
export async function pool(n: number, workers: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

export async function rawWrite(raw: RealKubeClient, task: ScheduledTask): Promise<void> {
  const s = spec();
  await raw.apply(desiredScriptConfigMap(task, s));
  const cronJob = await raw.apply(desiredCronJob(task, s, DEFAULT_TASK_CONTROLLER_CONFIG));
  const status = computeStatus({ task, spec: s, cronJob, executions: [], now: new Date() });
  await raw.applyStatus({
    ...TASK_KIND,
    metadata: { name: task.metadata.name, namespace: task.metadata.namespace },
    status,
  });
}

/** One LIST of the tasks of `namespace` (for their uids), then rawWrite for each, `workers` at a time. */
export async function rawWriteAll(raw: RealKubeClient, namespace: string, workers: number): Promise<void> {
  const tasks = await raw.list<ScheduledTask>(TASK_KIND.apiVersion, TASK_KIND.kind, namespace);
  await pool(tasks.length, workers, (i) => rawWrite(raw, tasks[i]!));
}
