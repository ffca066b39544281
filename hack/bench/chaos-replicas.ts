// The two-replica chaos drills (leader frozen; leader drained by SIGTERM), shared by
// hack/bench/chaos-leader.ts and their short versions in test/integration/chaos. Each returns
// what it measured and a verdict; the caller prints or asserts.
import { writeFileSync } from "node:fs";
import type { KubeClient } from "../../src/runtime/client.ts";
import type { KubeObject } from "../../src/runtime/types.ts";
import {
  type AuditEvent,
  auditEvents,
  auditLogPath,
  ensureAuditLog,
  type LocalCluster,
  serviceAccountKubeconfig,
} from "./chaos-cluster.ts";
import {
  Churn,
  type LogLine,
  msg,
  type OperatorProcess,
  startOperator,
  taskState,
  waitConverged,
} from "./chaos-tasks.ts";

/** What both drills need. */
export interface DrillOptions {
  client: KubeClient;
  cluster: LocalCluster;
  ns: string;
  /** A private directory for the replicas' kubeconfigs. */
  dir: string;
  entry: string;
  nodeOptions?: string;
  count: number;
  lease: { name: string; durationS: number; renewS: number; retryS: number };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const received = (e: AuditEvent) => Date.parse(e.requestReceivedTimestamp);
const succeeded = (e: AuditEvent) => (e.responseStatus?.code ?? 0) < 400;
const lineTime = (l: LogLine) => Date.parse(String(l.time));

/** One operator replica and the user it writes as. */
export interface Replica {
  proc: OperatorProcess;
  user: string;
}

/** Starts replica `id` as its own ServiceAccount (so the audit log tells the replicas apart). */
async function startReplica(o: DrillOptions, id: string): Promise<Replica> {
  await ensureAuditLog(o.cluster);
  const kubeconfig = `${o.dir}/${o.ns}-${id}.kubeconfig`;
  const user = await serviceAccountKubeconfig(o.cluster, `replica-${id}-${o.ns.slice(-6)}`, kubeconfig);
  const proc = startOperator({
    entry: o.entry,
    namespace: o.ns,
    kubeconfig,
    identity: `replica-${id}`,
    lease: o.lease,
    nodeOptions: o.nodeOptions,
  });
  return { proc, user };
}

/** Starts replica `leaderId`, waits for it to lead, then the standby, and waits for its caches. */
async function startPair(o: DrillOptions, leaderId: string, standbyId: string): Promise<[Replica, Replica]> {
  const leader = await startReplica(o, leaderId);
  await leader.proc.waitForLine(msg("became leader"), 120_000, `leadership of replica ${leaderId}`);
  const standby = await startReplica(o, standbyId);
  await waitReady(standby.proc);
  return [leader, standby];
}

/** Waits until the standby's caches are synced (its /readyz), i.e. it could lead at once. */
async function waitReady(p: OperatorProcess): Promise<void> {
  const port = Number((await p.waitForLine(msg("probe server listening"), 120_000, "probe server")).port);
  for (let i = 0; ; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
    if (res?.ok) return;
    if (i > 1200) throw new Error(`${p.identity} not ready in 120 s`);
    await sleep(100);
  }
}

/** With CHAOS_LOG_DIR set, each replica's log lines are written there (for a failed run). */
function dumpLogs(...rs: Replica[]): void {
  const dir = process.env.CHAOS_LOG_DIR;
  if (!dir) return;
  for (const { proc: p } of rs)
    writeFileSync(`${dir}/${p.identity}.log`, p.lines.map((l) => JSON.stringify(l)).join("\n"));
}

/** Stops replicas (a frozen one is resumed first). */
export async function stopAll(...replicas: Replica[]): Promise<void> {
  const ps = replicas.map((r) => r.proc);
  for (const p of ps) {
    p.signal("SIGCONT");
    p.signal("SIGTERM");
  }
  await Promise.all(ps.map((p) => p.exited));
}

/**
 * Leader frozen (SIGSTOP) during churn until the standby leads and `lease + retry` seconds have
 * passed, then resumed. Counts, from the audit log, the writes of the resumed process. With
 * `keepSurvivor`, the new leader is left running and returned (for {@link runDrain}).
 */
export async function runFreeze(o: DrillOptions, opts: { keepSurvivor?: boolean } = {}) {
  const [a, b] = await startPair(o, "a", "b");
  const churn = new Churn(o.client, o.ns, "f");
  let keep = false;
  try {
    const t0 = performance.now();
    await churn.seed(o.count);
    const cold = await waitConverged(o.client, o.ns, o.count, 600_000);
    const coldMs = performance.now() - t0;
    churn.start(4, 100);
    await sleep(1000 + Math.random() * 2000);
    const stoppedAt = Date.now();
    a.proc.signal("SIGSTOP");
    const took = await b.proc.waitForLine(msg("became leader"), (o.lease.durationS + 60) * 1000, "takeover");
    const takeoverMs = lineTime(took) - stoppedAt;
    // Keep it frozen past the lease as the new leader saw it, so the takeover is settled.
    await sleep(Math.max(0, stoppedAt + (o.lease.durationS + o.lease.retryS) * 1000 - Date.now()));
    const resumedAt = Date.now();
    a.proc.signal("SIGCONT");
    const exit = await Promise.race([a.proc.exited, sleep(60_000).then(() => undefined)]);
    await churn.stop();
    const converged = await waitConverged(o.client, o.ns, churn.live.size, 60_000, churn.live);
    // The audit log is written before each response: nothing more of a's can arrive now.
    const auditA = auditEvents(auditLogPath(o.cluster), a.user);
    const aAfterResume = auditA.filter((e) => received(e) >= resumedAt);
    const aWhileFrozen = auditA.filter((e) => received(e) >= stoppedAt && received(e) < resumedAt);
    const bWrites = auditEvents(auditLogPath(o.cluster), b.user, stoppedAt);
    const firstB = Math.min(...bWrites.map(received));
    dumpLogs(a, b);
    const limitMs = (o.lease.durationS + o.lease.retryS * 1.2 + 2) * 1000;
    const result = {
      tasksSeeded: o.count,
      lease: o.lease,
      coldConvergenceSeconds: +(coldMs / 1000).toFixed(1),
      tasksAtFreeze: cold.state.tasks,
      churn: churn.stats,
      frozenSeconds: +((resumedAt - stoppedAt) / 1000).toFixed(1),
      takeoverSecondsAfterFreeze: +(takeoverMs / 1000).toFixed(1),
      takeoverLimitSeconds: limitMs / 1000,
      firstWriteOfNewLeaderSecondsAfterFreeze: Number.isFinite(firstB)
        ? +((firstB - stoppedAt) / 1000).toFixed(1)
        : null,
      auditWritesOfFrozenBeforeFreeze: auditA.filter((e) => received(e) < stoppedAt).length,
      // Requests already sent when the signal came, received by the server just after it.
      auditWritesOfFrozenWhileFrozen: aWhileFrozen.map(
        (e) => `${e.verb} ${e.objectRef?.resource} +${received(e) - stoppedAt} ms`,
      ),
      auditWriteAttemptsOfFrozenAfterResume: aAfterResume.length,
      auditSuccessfulWritesOfFrozenAfterResume: aAfterResume.filter(succeeded).length,
      auditWritesAfterResume: aAfterResume
        .slice(0, 10)
        .map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name} ${e.responseStatus?.code}`),
      auditWritesOfNewLeader: bWrites.length,
      writesRefusedByFenceAfterResume: a.proc.lines.filter(
        (l) => Date.parse(String(l.time)) >= resumedAt && String(l.err).includes("not the leader"),
      ).length,
      resumedExit: exit
        ? { code: exit.code, secondsAfterResume: +((exit.atMs - resumedAt) / 1000).toFixed(1) }
        : null,
      resumedLoggedLeaseLost: a.proc.lines.some(msg("leader lease lost")),
      secondsToConvergedAfterChurn: +(converged.ms / 1000).toFixed(1),
      liveTasks: converged.state.tasks,
      deletedTasks: churn.deleted.size,
      orphans: converged.state.orphans.length,
    };
    const ok =
      takeoverMs <= limitMs &&
      aAfterResume.length === 0 &&
      exit?.code === 1 &&
      result.auditWritesOfFrozenBeforeFreeze > 0 &&
      bWrites.length > 0;
    keep = opts.keepSurvivor === true;
    return { result, ok, survivor: keep ? b : undefined };
  } finally {
    await churn.stop();
    await stopAll(...(keep ? [a] : [a, b]));
  }
}

/**
 * A leader (started here, or `leader` from {@link runFreeze}) and a fresh standby; `count` new
 * tasks are created and the leader gets SIGTERM once `convergedBeforeTerm` of them are done. It
 * must drain, release the Lease and exit 0 within the grace period; the standby takes over at its
 * next retry and finishes.
 */
export async function runDrain(
  o: DrillOptions & { graceSeconds: number; convergedBeforeTerm?: number; leader?: Replica },
) {
  let leader = o.leader;
  let standby: Replica;
  if (leader) {
    standby = await startReplica(o, "c");
    await waitReady(standby.proc);
  } else [leader, standby] = await startPair(o, "a", "b");
  try {
    const existing = (await taskState(o.client, o.ns)).tasks;
    const churn = new Churn(o.client, o.ns, "d");
    const seeding = churn.seed(o.count);
    // In the middle of the convergence: some tasks done, more to go.
    const want = existing + (o.convergedBeforeTerm ?? Math.ceil(o.count / 5));
    // Polled often and signalled at once: a fast leader converges a few dozen tasks in well under
    // a second, and a second LIST before the signal let it finish them all.
    let before: Awaited<ReturnType<typeof taskState>>;
    for (let i = 0; ; i++) {
      before = await taskState(o.client, o.ns);
      if (before.converged >= want) break;
      if (i > 6000) throw new Error(`only ${before.converged} tasks converged in 10 min`);
      await sleep(100);
    }
    const termAt = Date.now();
    leader.proc.signal("SIGTERM");
    const exit = await Promise.race([
      leader.proc.exited,
      sleep((o.graceSeconds + 30) * 1000).then(() => undefined),
    ]);
    const lease = await o.client.get<KubeObject>("coordination.k8s.io/v1", "Lease", o.ns, o.lease.name);
    const took = await standby.proc.waitForLine(
      msg("became leader"),
      (o.lease.durationS + 30) * 1000,
      "takeover",
    );
    await seeding;
    const converged = await waitConverged(o.client, o.ns, existing + o.count, 600_000);
    const drained = auditEvents(auditLogPath(o.cluster), leader.user, termAt);
    dumpLogs(leader, standby);
    const leaseSpec = lease?.spec as { holderIdentity?: string } | undefined;
    const exitMs = exit ? exit.atMs - termAt : undefined;
    const takeoverLimitMs = (o.lease.retryS * 1.2 + 2) * 1000;
    const result = {
      tasksCreated: o.count,
      convergedWhenTerminated: before.converged - existing,
      exit: exit
        ? { code: exit.code, signal: exit.signal, secondsAfterSigterm: +(exitMs! / 1000).toFixed(1) }
        : null,
      graceSeconds: o.graceSeconds,
      writesBetweenSigtermAndExit: drained.length,
      failedWritesBetweenSigtermAndExit: drained.filter((e) => !succeeded(e)).length,
      drainTimedOut: leader.proc.lines.some(msg("in-flight reconciles did not finish in time")),
      leaseReleased: leader.proc.lines.some(msg("leader lease released")),
      leaseHolderAfterExit: leaseSpec?.holderIdentity ?? null,
      takeoverSecondsAfterSigterm: +((lineTime(took) - termAt) / 1000).toFixed(1),
      takeoverSecondsAfterExit: exit ? +((lineTime(took) - exit.atMs) / 1000).toFixed(1) : null,
      takeoverLimitSecondsAfterExit: takeoverLimitMs / 1000,
      secondsToConvergedAfterSigterm: +((Date.now() - termAt) / 1000).toFixed(1),
      tasks: converged.state.tasks,
      orphans: converged.state.orphans.length,
    };
    // Released: holder cleared (or already the successor's), not the exiting replica's.
    const ok =
      exit?.code === 0 &&
      exitMs! <= o.graceSeconds * 1000 &&
      result.leaseReleased &&
      leaseSpec?.holderIdentity !== leader.proc.identity &&
      lineTime(took) - exit.atMs <= takeoverLimitMs &&
      result.failedWritesBetweenSigtermAndExit === 0;
    return { result, ok };
  } finally {
    await stopAll(leader, standby);
  }
}
