import { afterEach, describe, expect, it, vi } from "vitest";
import { API_VERSION } from "../api/v1alpha1/kind.ts";
import {
  ANNOTATION_CONFIG_REVISION,
  LABEL_MANAGED_BY,
  LABEL_TASK,
  MANAGED_BY,
} from "../api/v1alpha1/labels.ts";
import type { ScheduledTask } from "../api/v1alpha1/scheduledtask.ts";
import { silentLogger } from "../log.ts";
import { FakeKubeClient } from "../runtime/fake-client.ts";
import { FakeListWatch, goneError } from "../runtime/fake-listwatch.ts";
import { Manager } from "../runtime/manager.ts";
import type { KubeObject } from "../runtime/types.ts";
import { makeTask, TEST_CONFIG } from "./scheduledtask/testing.ts";
import { MemoryPodLogReader } from "./taskexecution/logs.ts";
import { registerScheduledTaskControllers } from "./tasks.ts";

// The task controllers wired on a Manager over fake list/watch sources: what the API server
// sees (client reads and writes) when caches sync, tasks are created, the operator restarts.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The tasks here run yearly, so status.nextRunTime cannot move while a test runs. With the default
// "* * * * *" a minute passing between two passes (e.g. across the restart) changes it: one
// legitimate status write per task, which the write counts below would take for a regression
// whenever a run straddles a minute boundary.
const YEARLY = "0 0 1 1 *";

/** Waits until no write happened for `quietMs` (at most 5 s). */
async function settle(client: FakeKubeClient, quietMs = 300): Promise<void> {
  const end = Date.now() + 5000;
  let seen = -1;
  while (Date.now() < end) {
    if (client.writes.length === seen) return;
    seen = client.writes.length;
    await sleep(quietMs);
  }
  throw new Error("writes did not settle");
}

interface Run {
  manager: Manager;
  sources: FakeListWatch[];
}

const running: Manager[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((m) => m.stop()));
});

/** Starts a manager with the task controllers; `hold` delays the first LIST of these kinds. */
async function startOperator(
  client: FakeKubeClient,
  hold: { kinds: string[]; until?: Promise<void> } = { kinds: [] },
): Promise<Run> {
  const sources: FakeListWatch[] = [];
  const manager = new Manager({
    client,
    sourceFor: (t, ns, o) => {
      const src = new FakeListWatch(client, t.apiVersion, t.kind, ns, o?.metadataOnly);
      if (hold.kinds.includes(t.kind) && hold.until) {
        const list = src.list.bind(src);
        const gate = hold.until;
        src.list = async (p) => {
          await gate;
          return list(p);
        };
      }
      sources.push(src);
      return src;
    },
    log: silentLogger(),
    http: false,
    leaderElection: false,
  });
  registerScheduledTaskControllers(manager, { config: TEST_CONFIG, logs: new MemoryPodLogReader() });
  running.push(manager);
  await manager.start();
  return { manager, sources };
}

async function stopOperator(run: Run): Promise<void> {
  await run.manager.stop();
  running.splice(running.indexOf(run.manager), 1);
}

/** The stored task (read with all(), which FakeKubeClient.reads does not count). */
function task(client: FakeKubeClient, name = "hello"): ScheduledTask {
  return client
    .all<ScheduledTask>(API_VERSION, "ScheduledTask")
    .find((t) => t.metadata.name === name) as ScheduledTask;
}

async function editScript(client: FakeKubeClient, script: string, value: string): Promise<void> {
  const t = task(client);
  await client.replace({ ...t, spec: { ...t.spec, script, env: [{ name: "TOKEN", value }] } });
}

/** An unfinished Job of the task, created by its CronJob at revision `rev`. */
function runningJob(rev: string): KubeObject {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: `hello-run-${rev}`,
      namespace: "ns",
      labels: { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_TASK]: "hello" },
    },
    spec: { template: { metadata: { annotations: { [ANNOTATION_CONFIG_REVISION]: rev } } } },
    status: { startTime: "2026-01-01T00:00:00Z", active: 1 },
  };
}

function execution(): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: "TaskExecution",
    metadata: {
      name: "hello-1",
      namespace: "ns",
      labels: { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_TASK]: "hello" },
    },
    spec: {
      taskName: "hello",
      result: "Succeeded",
      message: "exit code 0",
      startTime: "2026-01-01T00:00:00Z",
      completionTime: "2026-01-01T00:00:05Z",
      expiresAt: "2999-01-01T00:00:00Z",
      output: "x".repeat(1000),
    },
  };
}

const secretNames = (client: FakeKubeClient) =>
  client
    .all("v1", "Secret")
    .map((s) => s.metadata.name)
    .sort();

describe("task controllers on a manager", () => {
  it("a new task costs its two children and one status write; no read reaches the API server", async () => {
    const client = new FakeKubeClient();
    await startOperator(client);
    await settle(client);
    client.clearWrites();
    await client.create(
      makeTask("hello", { language: "Bash", script: "echo hi", plan: "Micro", schedule: YEARLY }),
    );
    await settle(client);
    expect(task(client).status?.phase).toBe("Running");
    expect(client.writes.map((w) => `${w.verb} ${w.kind}`)).toEqual([
      "create ScheduledTask",
      "apply ConfigMap",
      "apply CronJob",
      "applyStatus ScheduledTask",
    ]);
    // Every read is answered by the synced caches: no GET that answers 404 for a new child.
    expect(client.reads).toEqual([]);
  });

  it("workers wait for every cache: an unsynced Job cache neither prunes a revision a running Job needs nor flips status", async () => {
    const client = new FakeKubeClient();
    client.seed(
      makeTask("hello", {
        schedule: YEARLY,
        language: "Bash",
        script: "echo 1",
        plan: "Micro",
        env: [{ name: "TOKEN", value: "one" }],
      }),
    );
    const first = await startOperator(client);
    await settle(client);
    // Revision 1 is running when the script changes twice; the run's Secret must stay.
    client.seed(runningJob("1"));
    client.seed(execution());
    await editScript(client, "echo 2", "two");
    await settle(client);
    await editScript(client, "echo 3", "three");
    await settle(client);
    expect(secretNames(client)).toEqual(["hello-env-1", "hello-env-2", "hello-env-3"]);
    expect(task(client).status?.lastResult).toBe("Succeeded");
    await stopOperator(first);

    // Restart with the Job and TaskExecution caches slow to sync.
    client.clearWrites();
    let release = () => {};
    const until = new Promise<void>((r) => {
      release = r;
    });
    await startOperator(client, { kinds: ["Job", "TaskExecution"], until });
    await sleep(200);
    expect(client.writes).toEqual([]);
    release();
    await settle(client);
    expect(client.writes).toEqual([]);
    expect(secretNames(client)).toEqual(["hello-env-1", "hello-env-2", "hello-env-3"]);

    // Once the run is over, revision 1 goes.
    await client.delete("batch/v1", "Job", "ns", "hello-run-1");
    await settle(client);
    expect(secretNames(client)).toEqual(["hello-env-2", "hello-env-3"]);
  });

  it("zero writes at steady state, across a restart and a forced relist; Secret values and scripts stay out of the cache", async () => {
    const client = new FakeKubeClient();
    for (const n of ["a", "b", "c"])
      client.seed(
        makeTask(n, {
          schedule: YEARLY,
          language: "Python",
          script: "print(1)",
          plan: "Small",
          env: [{ name: "K", value: "v" }],
        }),
      );
    const first = await startOperator(client);
    // Quiet time alone is no proof on a loaded machine: the first pass may not have begun yet.
    await vi.waitFor(() => expect(client.all("batch/v1", "CronJob")).toHaveLength(3), { timeout: 10_000 });
    await settle(client);
    await stopOperator(first);
    client.clearWrites();

    const second = await startOperator(client);
    await settle(client);
    expect(client.writes).toEqual([]);
    for (const s of second.sources) {
      s.failNext.push(goneError()); // the watch that follows answers 410: relist
      s.breakWatches();
      s.reconnect();
    }
    await sleep(1500); // the informers' first retry after a broken watch (backoff base 800 ms ±50 %)
    await settle(client);
    expect(second.sources.every((s) => s.calls.list >= 2)).toBe(true);
    expect(client.writes).toEqual([]);
    expect(client.reads).toEqual([]);

    const secret = second.manager.cache.get("v1", "Secret", "ns", "a-env-1");
    expect(secret?.metadata.name).toBe("a-env-1");
    expect(secret?.data).toBeUndefined();
    expect(second.manager.cache.get("v1", "ConfigMap", "ns", "a-script-1")?.data).toBeUndefined();
    expect(
      second.manager.cache.get("batch/v1", "CronJob", "ns", "a")?.metadata.managedFields,
    ).toBeUndefined();
  });
});
