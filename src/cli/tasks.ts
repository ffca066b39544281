import { randomUUID } from "node:crypto";
import { API_VERSION } from "../api/v1alpha1/kind.ts";
import { ANNOTATION_RUN_NOW, LABEL_TASK } from "../api/v1alpha1/labels.ts";
import { taskManualJobName } from "../api/v1alpha1/names.ts";
import type { ScheduledTask } from "../api/v1alpha1/scheduledtask.ts";
import type { TaskExecution } from "../api/v1alpha1/taskexecution.ts";
import {
  type CliIO,
  connect,
  guarded,
  KUBE_USAGE,
  type Kube,
  parseCommand,
  pollUntil,
  printData,
} from "./common.ts";

// `cronscale run|suspend|resume <task>`: the same requests the dashboard sends, as the
// kubeconfig's user. Run now sets the annotation cronscale.io/run-now to a new value (the
// operator starts one manual Job per value, named after it); suspend and resume set
// spec.suspend. Merge patches, so nothing else of the task is touched.

const RUN_USAGE = `usage: cronscale run <task> [-n ns] [--wait [--timeout 10m]] [-o json|yaml]

Starts one run of the task now (the annotation cronscale.io/run-now, as the dashboard's Run now).
With --wait, waits for the run to finish, prints its console output and exits with its result
(0 Succeeded, 1 otherwise).

      --wait        wait for the run's TaskExecution record
      --timeout     longest wait (default: the task's timeout plus 5 minutes; 30s, 10m, 1h)
${KUBE_USAGE}`;

const SUSPEND_USAGE = (verb: "suspend" | "resume") => `usage: cronscale ${verb} <task> [-n ns] [-o json|yaml]

${verb === "suspend" ? "Stops the task's schedule (spec.suspend: true); runs under way finish." : "Starts the task's schedule again (spec.suspend: false)."}

${KUBE_USAGE}`;

const TASK_PATH = (k: Kube, name: string) =>
  k.transport.path({ apiVersion: API_VERSION, kind: "ScheduledTask" }, k.namespace, name);

/** Merge-patches one task as the kubeconfig's user; returns the task as the API server has it then. */
export async function patchTask(k: Kube, name: string, patch: unknown): Promise<ScheduledTask> {
  return k.transport.request<ScheduledTask>("PATCH", await TASK_PATH(k, name), {
    body: patch,
    contentType: "application/merge-patch+json",
  });
}

/** "30s", "10m", "1h" → milliseconds; undefined when unreadable. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+)(s|m|h)$/.exec(text);
  if (!m) return undefined;
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[m[2] as "s" | "m" | "h"];
}

export async function runCommand(argv: string[], io: CliIO, env: NodeJS.ProcessEnv = process.env) {
  const p = parseCommand(
    argv,
    io,
    RUN_USAGE,
    { wait: { type: "boolean" }, timeout: { type: "string" } },
    { min: 1, max: 1, what: "the task's name" },
  );
  if (typeof p === "number") return p;
  const timeoutText = p.values.timeout as string | undefined;
  const timeoutMs = timeoutText === undefined ? undefined : parseDuration(timeoutText);
  if (timeoutText !== undefined && timeoutMs === undefined) {
    io.err(`error: --timeout must be a duration such as 30s, 10m or 1h, got "${timeoutText}"`);
    return 2;
  }
  const name = p.positionals[0] ?? "";
  return guarded(io, async () => {
    const k = connect(p.values, env);
    const token = randomUUID();
    const task = await patchTask(k, name, { metadata: { annotations: { [ANNOTATION_RUN_NOW]: token } } });
    const job = taskManualJobName(name, token);
    if (!p.values.wait) {
      if (!printData(io, p.output, { task: name, namespace: k.namespace, runNowToken: token, jobName: job }))
        io.out(`scheduledtask/${name} run requested (job ${job})`);
      return 0;
    }
    io.err(`scheduledtask/${name} run requested (job ${job}); waiting for it to finish`);
    const limit = timeoutMs ?? ((task.spec.timeoutSeconds ?? 3600) + 300) * 1000;
    const execution = await pollUntil(async () => {
      const list = await k.client.list<TaskExecution>(
        API_VERSION,
        "TaskExecution",
        k.namespace,
        `${LABEL_TASK}=${name}`,
      );
      return list.find((e) => e.spec.jobName === job);
    }, limit);
    if (!execution) {
      io.err(`error: the run (job ${job}) did not finish within ${Math.round(limit / 1000)} s`);
      return 1;
    }
    if (!printData(io, p.output, execution)) {
      const output = execution.spec.output ?? "";
      if (output !== "") io.out(output.replace(/\n$/, ""));
      const exit = execution.spec.exitCode === undefined ? "" : `, exit code ${execution.spec.exitCode}`;
      io.err(`${execution.metadata.name}: ${execution.spec.result}${exit}`);
    }
    return execution.spec.result === "Succeeded" ? 0 : 1;
  });
}

export function suspendCommand(verb: "suspend" | "resume") {
  return (argv: string[], io: CliIO, env: NodeJS.ProcessEnv = process.env) => {
    const p = parseCommand(argv, io, SUSPEND_USAGE(verb), {}, { min: 1, max: 1, what: "the task's name" });
    if (typeof p === "number") return p;
    const name = p.positionals[0] ?? "";
    return guarded(io, async () => {
      const k = connect(p.values, env);
      const task = await patchTask(k, name, { spec: { suspend: verb === "suspend" } });
      if (!printData(io, p.output, task))
        io.out(`scheduledtask/${name} ${verb === "suspend" ? "suspended" : "resumed"}`);
      return 0;
    });
  };
}
