import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_VERSION } from "../../../src/api/v1alpha1/kind.ts";
import type { ScheduledTask } from "../../../src/api/v1alpha1/scheduledtask.ts";
import { kubeConnection } from "../../../src/runtime/kube.ts";
import type { KubeObject } from "../../../src/runtime/types.ts";
import { kubeConfig, kubeconfigPath, useNamespace, waitFor } from "../../support/cluster.ts";
import { installCrds } from "./operator.ts";

// The operator process (src/main.ts) killed with SIGKILL again and again while it converges:
// each restart resumes from the API server's state, and in the end every task has exactly its
// children — one CronJob, one script ConfigMap — and nothing is left without its task.

const ns = useNamespace("stask-chaos");
const { client } = kubeConnection(kubeConfig());
const COUNT = 40;
const KILLS = 5;
const main = fileURLToPath(new URL("../../../src/main.ts", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let proc: ChildProcess | undefined;
function startOperator(): ChildProcess {
  return spawn(
    process.execPath,
    [
      main,
      "--namespace",
      ns.name,
      "--metrics-port",
      "0",
      "--metrics-bind-address",
      "127.0.0.1",
      "--log-level",
      "warn",
    ],
    { env: { ...process.env, KUBECONFIG: kubeconfigPath() }, stdio: ["ignore", "ignore", "inherit"] },
  );
}
async function kill(p: ChildProcess): Promise<void> {
  const exited = new Promise((r) => p.once("exit", r));
  p.kill("SIGKILL");
  await exited;
}

beforeAll(async () => {
  await installCrds();
}, 120_000);
afterAll(async () => {
  if (proc) await kill(proc);
});

describe("operator killed during convergence", () => {
  it(`${KILLS} SIGKILLs while ${COUNT} tasks converge: exactly one CronJob and ConfigMap per task, no orphans`, async () => {
    proc = startOperator();
    const creating = (async () => {
      for (let i = 0; i < COUNT; i++) {
        await client.apply({
          apiVersion: API_VERSION,
          kind: "ScheduledTask",
          metadata: { name: `c${i}`, namespace: ns.name },
          spec: { schedule: "0 0 1 1 *", language: "Bash", plan: "Micro", script: `echo ${i}` },
        });
      }
    })();
    for (let k = 0; k < KILLS; k++) {
      await sleep(300 + Math.floor(Math.random() * 900));
      await kill(proc);
      proc = startOperator();
    }
    await creating;
    const tasks = await waitFor(
      async () => {
        const all = await client.list<ScheduledTask>(API_VERSION, "ScheduledTask", ns.name);
        return all.length === COUNT && all.every((t) => t.status?.phase === "Running") && all;
      },
      { timeoutMs: 90_000, what: `${COUNT} tasks Running` },
    );
    const uids = new Set(tasks.map((t) => t.metadata.uid));
    const owner = (o: KubeObject) => o.metadata.ownerReferences?.find((r) => r.controller)?.uid;
    const cronJobs = await client.list("batch/v1", "CronJob", ns.name);
    const configMaps = (await client.list("v1", "ConfigMap", ns.name)).filter(
      (c) => c.metadata.name !== "kube-root-ca.crt",
    );
    for (const [kind, list] of [
      ["CronJob", cronJobs],
      ["ConfigMap", configMaps],
    ] as const) {
      expect(
        list.filter((o) => !uids.has(owner(o))).map((o) => o.metadata.name),
        `${kind} orphans`,
      ).toEqual([]);
      const perTask = new Map<string | undefined, number>();
      for (const o of list) perTask.set(owner(o), (perTask.get(owner(o)) ?? 0) + 1);
      expect(
        [...perTask.values()].every((n) => n === 1),
        `one ${kind} per task`,
      ).toBe(true);
      expect(perTask.size, `${kind} count`).toBe(COUNT);
    }
  }, 180_000);
});
