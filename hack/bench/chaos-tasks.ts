// The operator as a child process, churn on ScheduledTasks, and the check that the cluster holds
// exactly what the live tasks need: shared by the chaos benchmarks and test/integration/chaos.
import { type ChildProcess, spawn } from "node:child_process";
import { API_VERSION } from "../../src/api/v1alpha1/kind.ts";
import { taskCronJobName } from "../../src/api/v1alpha1/names.ts";
import type { KubeClient } from "../../src/runtime/client.ts";
import type { KubeObject } from "../../src/runtime/types.ts";

/** One parsed JSON log line of the operator. */
export type LogLine = Record<string, unknown> & { msg?: string };

/** A running operator process and what it logged. */
export interface OperatorProcess {
  proc: ChildProcess;
  identity: string;
  lines: LogLine[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>;
  /** Resolves with the first line matching `pred` (already logged ones included). */
  waitForLine(pred: (l: LogLine) => boolean, timeoutMs: number, what: string): Promise<LogLine>;
  signal(sig: NodeJS.Signals): void;
}

/** How to start one operator replica. */
export interface OperatorOptions {
  /** dist/main.js (as shipped) or src/main.ts. */
  entry: string;
  namespace: string;
  kubeconfig: string;
  identity: string;
  /** Lease name (in `namespace`) and timings in seconds; no leader election when absent. */
  lease?: { name: string; durationS: number; renewS: number; retryS: number };
  shutdownTimeoutS?: number;
  nodeOptions?: string;
}

export function startOperator(o: OperatorOptions): OperatorProcess {
  const args = [
    o.entry,
    `--kubeconfig=${o.kubeconfig}`,
    `--namespace=${o.namespace}`,
    "--metrics-port=0",
    "--metrics-bind-address=127.0.0.1",
    "--log-level=info",
  ];
  if (o.lease)
    args.push(
      "--leader-elect=true",
      `--leader-election-namespace=${o.namespace}`,
      `--leader-election-id=${o.lease.name}`,
      `--leader-election.identity=${o.identity}`,
      `--leader-election.lease-duration-seconds=${o.lease.durationS}`,
      `--leader-election.renew-deadline-seconds=${o.lease.renewS}`,
      `--leader-election.retry-period-seconds=${o.lease.retryS}`,
    );
  if (o.shutdownTimeoutS) args.push(`--shutdown-timeout-seconds=${o.shutdownTimeoutS}`);
  const proc = spawn(process.execPath, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NODE_OPTIONS: o.nodeOptions ?? "" },
  });
  const lines: LogLine[] = [];
  const listeners = new Set<() => void>();
  let buf = "";
  let stderr = "";
  proc.stdout!.on("data", (d: Buffer) => {
    buf += d.toString();
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      try {
        lines.push(JSON.parse(line) as LogLine);
      } catch {
        lines.push({ msg: `(raw) ${line}` });
      }
    }
    for (const l of listeners) l();
  });
  proc.stderr!.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>((r) =>
    proc.once("exit", (code, signal) => {
      r({ code, signal, atMs: Date.now() });
      for (const l of listeners) l();
    }),
  );
  return {
    proc,
    identity: o.identity,
    lines,
    exited,
    signal: (sig) => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(sig);
    },
    waitForLine: (pred, timeoutMs, what) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const hit = lines.find(pred);
          if (hit) done(() => resolve(hit));
          else if (proc.exitCode !== null || proc.signalCode !== null)
            done(() => reject(new Error(`${o.identity} exited before ${what}: ${stderr}`)));
        };
        const timer = setTimeout(
          () =>
            done(() =>
              reject(
                new Error(`${o.identity}: no ${what} in ${timeoutMs} ms; ${JSON.stringify(lines.slice(-5))}`),
              ),
            ),
          timeoutMs,
        );
        const done = (f: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          f();
        };
        listeners.add(check);
        check();
      }),
  };
}

export const msg = (m: string) => (l: LogLine) => l.msg === m;

/** A task whose script names its revision, so an update missed by the operator shows. */
export function taskObject(ns: string, name: string, rev: number): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: "ScheduledTask",
    metadata: { name, namespace: ns },
    spec: { schedule: "0 0 1 1 *", language: "Bash", plan: "Micro", script: `echo ${name} ${rev}` },
  };
}

/** Retries a request while the API server is away (restart) — churn must go on through it. */
async function persist<T>(f: () => Promise<T>, stats: { failures: number }): Promise<T> {
  for (;;) {
    try {
      return await f();
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) throw err;
      stats.failures++;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Creates, updates and deletes tasks at random until `stop()`; names are never reused. */
export class Churn {
  readonly live = new Map<string, number>();
  readonly deleted = new Set<string>();
  readonly stats = { creates: 0, updates: 0, deletes: 0, failures: 0 };
  private running = true;
  private next = 0;
  /** Names an operation is under way on: never picked twice at once (an update racing a delete
   * would re-create the task). */
  private readonly busy = new Set<string>();
  private done: Promise<void> | undefined;

  private readonly client: KubeClient;
  private readonly ns: string;
  private readonly prefix: string;

  constructor(client: KubeClient, ns: string, prefix = "c") {
    this.client = client;
    this.ns = ns;
    this.prefix = prefix;
  }

  /** Stores `n` tasks before any fault. */
  async seed(n: number, concurrency = 16): Promise<void> {
    const names = Array.from({ length: n }, () => `${this.prefix}${this.next++}`);
    let i = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (i < names.length) {
          const name = names[i++]!;
          await persist(() => this.client.apply(taskObject(this.ns, name, 0)), this.stats);
          this.live.set(name, 0);
        }
      }),
    );
  }

  /** Starts `workers` loops doing one operation every `pauseMs` each (40% update, 30% create, 30% delete). */
  start(workers: number, pauseMs: number, random: () => number = Math.random): void {
    this.done = Promise.all(
      Array.from({ length: workers }, async () => {
        while (this.running) {
          await this.step(random);
          await new Promise((r) => setTimeout(r, pauseMs));
        }
      }),
    ).then(() => {});
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  private async step(random: () => number): Promise<void> {
    const r = random();
    const names = [...this.live.keys()].filter((n) => !this.busy.has(n));
    const pick = names[Math.floor(random() * names.length)];
    if (pick) this.busy.add(pick);
    try {
      await this.operate(r, pick);
    } finally {
      if (pick) this.busy.delete(pick);
    }
  }

  private async operate(r: number, pick: string | undefined): Promise<void> {
    if (r < 0.3 || !pick) {
      const name = `${this.prefix}${this.next++}`;
      await persist(() => this.client.apply(taskObject(this.ns, name, 0)), this.stats);
      this.live.set(name, 0);
      this.stats.creates++;
    } else if (r < 0.7) {
      const rev = (this.live.get(pick) ?? 0) + 1;
      this.live.set(pick, rev);
      await persist(() => this.client.apply(taskObject(this.ns, pick, rev)), this.stats);
      this.stats.updates++;
    } else {
      this.live.delete(pick);
      this.deleted.add(pick);
      await persist(() => this.client.delete(API_VERSION, "ScheduledTask", this.ns, pick), this.stats).catch(
        () => {},
      );
      this.stats.deletes++;
    }
  }
}

/** What the cluster holds against what the live tasks need. */
export interface TaskState {
  tasks: number;
  converged: number;
  /** Live tasks not (yet) Running at their generation with exactly their children. */
  pending: string[];
  /** Children of a deleted task (or of no live task). */
  orphans: string[];
}

const controllerUid = (o: KubeObject) => o.metadata.ownerReferences?.find((r) => r.controller)?.uid;

/**
 * Checks every live task: status Running at its generation, exactly one CronJob of its own whose
 * script volume names an existing ConfigMap of its own holding the current script. Any CronJob
 * or script ConfigMap without a live owner is an orphan.
 */
export async function taskState(
  client: KubeClient,
  ns: string,
  scripts?: Map<string, number>,
): Promise<TaskState> {
  const [tasks, cronJobs, configMaps] = await Promise.all([
    client.list(API_VERSION, "ScheduledTask", ns),
    client.list("batch/v1", "CronJob", ns),
    client.list("v1", "ConfigMap", ns),
  ]);
  const live = tasks.filter((t) => !t.metadata.deletionTimestamp);
  const uids = new Set(live.map((t) => t.metadata.uid));
  const cmByName = new Map(configMaps.map((c) => [c.metadata.name, c]));
  const pending: string[] = [];
  for (const t of live) {
    const name = t.metadata.name ?? "";
    const status = t.status as { phase?: string; observedGeneration?: number } | undefined;
    const mine = cronJobs.filter((c) => controllerUid(c) === t.metadata.uid);
    const spec = t.spec as { script: string };
    const expected = scripts?.has(name) ? `echo ${name} ${scripts.get(name)}` : spec.script;
    const cj = mine[0];
    const vol = (
      cj?.spec as
        | {
            jobTemplate?: {
              spec?: { template?: { spec?: { volumes?: { name: string; configMap?: { name: string } }[] } } };
            };
          }
        | undefined
    )?.jobTemplate?.spec?.template?.spec?.volumes?.find((v) => v.name === "script")?.configMap?.name;
    const cm = vol ? cmByName.get(vol) : undefined;
    const ok =
      status?.phase === "Running" &&
      status.observedGeneration === t.metadata.generation &&
      spec.script === expected &&
      mine.length === 1 &&
      cj?.metadata.name === taskCronJobName(name) &&
      cm !== undefined &&
      controllerUid(cm) === t.metadata.uid &&
      Object.values((cm.data as Record<string, string> | undefined) ?? {}).includes(expected);
    if (!ok) pending.push(name);
  }
  const orphans = [
    ...cronJobs.filter((c) => !uids.has(controllerUid(c))).map((c) => `CronJob ${c.metadata.name}`),
    ...configMaps
      .filter((c) => c.metadata.name?.includes("-script-") && !uids.has(controllerUid(c)))
      .map((c) => `ConfigMap ${c.metadata.name}`),
  ];
  return { tasks: live.length, converged: live.length - pending.length, pending, orphans };
}

/** Polls {@link taskState} until converged with no orphan; resolves with the time it took. */
export async function waitConverged(
  client: KubeClient,
  ns: string,
  expectedTasks: number,
  timeoutMs: number,
  scripts?: Map<string, number>,
): Promise<{ ms: number; state: TaskState }> {
  const t0 = performance.now();
  for (;;) {
    let state: TaskState | undefined;
    try {
      state = await taskState(client, ns, scripts);
    } catch {
      // The API server may be restarting.
    }
    const ms = Math.round(performance.now() - t0);
    if (state && state.tasks === expectedTasks && state.pending.length === 0 && state.orphans.length === 0)
      return { ms, state };
    if (ms > timeoutMs) {
      const err = new Error(
        `not converged in ${timeoutMs} ms: ${JSON.stringify(state && { ...state, pending: state.pending.slice(0, 10), orphans: state.orphans.slice(0, 10) })}`,
      );
      throw Object.assign(err, { state });
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}
