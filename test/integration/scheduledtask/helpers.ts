import { stringify } from "yaml";
import type { ScheduledTask } from "../../../src/api/v1alpha1/scheduledtask.ts";
import type { TaskExecution } from "../../../src/api/v1alpha1/taskexecution.ts";
import { kubectl, waitFor } from "../../support/cluster.ts";

// Small kubectl-based helpers: the tests use the same interface users do.

/** Applies a ScheduledTask (server-side, as a user would with kubectl apply). */
export async function applyTask(
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
  annotations?: Record<string, string>,
) {
  const doc = {
    apiVersion: "cronscale.io/v1alpha1",
    kind: "ScheduledTask",
    metadata: { name, annotations },
    spec,
  };
  await kubectl(["apply", "-f", "-"], { namespace, input: stringify(doc) });
}

/** Reads a task, or undefined when it does not exist. */
export async function getTask(namespace: string, name: string): Promise<ScheduledTask | undefined> {
  const r = await kubectl(["get", "stask", name, "-o", "json"], { namespace, allowFailure: true });
  return r.code === 0 ? (JSON.parse(r.stdout) as ScheduledTask) : undefined;
}

/** Waits until the task's status satisfies `pred`. */
export async function waitTask(
  namespace: string,
  name: string,
  pred: (t: ScheduledTask) => boolean,
  what: string,
  timeoutMs = 60_000,
) {
  return waitFor(
    async () => {
      const t = await getTask(namespace, name);
      return t && pred(t) ? t : undefined;
    },
    { timeoutMs, intervalMs: 500, what: `${name}: ${what}` },
  );
}

/** The task's execution records, in the order `kubectl get texec -l` lists them. */
export async function executions(namespace: string, task: string): Promise<TaskExecution[]> {
  const r = await kubectl(["get", "texec", "-l", `cronscale.io/task=${task}`, "-o", "json"], { namespace });
  return (JSON.parse(r.stdout) as { items: TaskExecution[] }).items;
}

/** Waits until the task has at least `count` records satisfying `pred`; returns them. */
export async function waitExecutions(
  namespace: string,
  task: string,
  pred: (e: TaskExecution) => boolean,
  count = 1,
  timeoutMs = 150_000,
): Promise<TaskExecution[]> {
  return waitFor(
    async () => {
      const list = (await executions(namespace, task)).filter(pred);
      return list.length >= count ? list : undefined;
    },
    { timeoutMs, intervalMs: 1000, what: `${count} execution(s) of ${task}` },
  );
}

/** Starts a run now (the run-now annotation with a fresh token). */
export async function runNow(namespace: string, task: string, token: string) {
  await kubectl(["annotate", "--overwrite", "stask", task, `cronscale.io/run-now=${token}`], { namespace });
}

/** Names of objects of a kind labelled with the task. */
export async function childNames(namespace: string, kind: string, task: string): Promise<string[]> {
  const r = await kubectl(
    ["get", kind, "-l", `cronscale.io/task=${task}`, "-o", "jsonpath={.items[*].metadata.name}"],
    { namespace },
  );
  return r.stdout.split(" ").filter(Boolean);
}
