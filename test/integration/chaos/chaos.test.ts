import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  auditArgs,
  compactEtcd,
  localClusterOf,
  restartApiserver,
} from "../../../hack/bench/chaos-cluster.ts";
import { runDrain, runFreeze, stopAll } from "../../../hack/bench/chaos-replicas.ts";
import { Churn, startOperator, waitConverged } from "../../../hack/bench/chaos-tasks.ts";
import { kubeConnection } from "../../../src/runtime/kube.ts";
import { kubeConfig, kubeconfigPath, useNamespace } from "../../support/cluster.ts";
import { installCrds } from "../scheduledtask/operator.ts";

// Short versions of the chaos benchmarks (hack/bench/chaos-*.ts, docs/benchmarks.md) against the
// operator process (src/main.ts): apiserver restarted and etcd compacted during churn; the leader
// frozen past its lease; the leader terminated during convergence. They restart the apiserver, so
// they run only on the test run's own local cluster (or with CRONSCALE_TEST_RESTART_APISERVER=1).

const cluster = localClusterOf(kubeconfigPath());
const own =
  cluster !== undefined &&
  (cluster.CLUSTER_NAME.startsWith("cronscale-test-") ||
    process.env.CRONSCALE_TEST_RESTART_APISERVER === "1");
const entry = fileURLToPath(new URL("../../../src/main.ts", import.meta.url));
const { client } = kubeConnection(kubeConfig());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Short timings, so that the drills fit in the suite's budget.
const lease = { name: "chaos-leader", durationS: 4, renewS: 3, retryS: 1 };

const apiNs = useNamespace("chaos-api");
const leaderNs = useNamespace("chaos-leader");
let dir = "";
beforeAll(async () => {
  dir = mkdtempSync(`${tmpdir()}/chaos-`);
  if (own) await installCrds();
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!own)("chaos", () => {
  it("apiserver SIGKILLed and etcd compacted during churn: relists after 410, converges within 60 s, no orphan", async () => {
    const c = cluster!;
    const ns = apiNs.name;
    const churn = new Churn(client, ns);
    await churn.seed(10);
    const op = startOperator({ entry, namespace: ns, kubeconfig: kubeconfigPath(), identity: "chaos-api" });
    try {
      await waitConverged(client, ns, 10, 90_000);
      churn.start(2, 150);
      await sleep(1000);
      // The audit flags ride on this restart, for the drills below.
      const { unavailableMs } = await restartApiserver(c, {
        extraArgs: auditArgs(c),
        whileDown: async () => {
          await compactEtcd(c);
        },
      });
      await compactEtcd(c);
      await sleep(2000);
      await churn.stop();
      const { ms, state } = await waitConverged(client, ns, churn.live.size, 60_000, churn.live);
      const relists = op.lines.filter((l) => l.msg === "relisting" && l.why === "gone").length;
      console.log(
        `chaos: apiserver down ${unavailableMs} ms; churn ${JSON.stringify(churn.stats)}; ${relists} relists after 410; converged ${ms} ms after churn`,
      );
      expect(relists).toBeGreaterThan(0);
      expect(churn.stats.deletes + churn.stats.updates).toBeGreaterThan(0);
      expect(state.orphans).toEqual([]);
    } finally {
      op.signal("SIGTERM");
      await op.exited;
    }
  });

  // One pair of replicas serves both drills (the freeze's survivor is then drained), to keep the
  // suite short.
  it("leader frozen past its lease: standby takes over, the resumed one writes nothing (audit log); then SIGTERM drains and hands over at once", async () => {
    const base = { client, cluster: cluster!, ns: leaderNs.name, dir, entry, lease };
    const freeze = await runFreeze({ ...base, count: 8 }, { keepSurvivor: true });
    console.log(`chaos: freeze ${JSON.stringify(freeze.result)}`);
    const f = freeze.result;
    try {
      expect(f.takeoverSecondsAfterFreeze).toBeLessThanOrEqual(f.takeoverLimitSeconds);
      expect(f.auditWritesOfFrozenBeforeFreeze).toBeGreaterThan(0);
      expect(f.auditWritesOfNewLeader).toBeGreaterThan(0);
      expect(f.auditWriteAttemptsOfFrozenAfterResume).toBe(0);
      expect(f.resumedExit?.code).toBe(1);
      expect(f.orphans).toBe(0);
    } catch (err) {
      await stopAll(freeze.survivor!);
      throw err;
    }

    const drain = await runDrain({
      ...base,
      leader: freeze.survivor,
      count: 40,
      graceSeconds: 40,
      convergedBeforeTerm: 3,
    });
    console.log(`chaos: drain ${JSON.stringify(drain.result)}`);
    const d = drain.result;
    expect(d.convergedWhenTerminated).toBeLessThan(d.tasksCreated);
    expect(d.exit?.code).toBe(0);
    expect(d.exit!.secondsAfterSigterm).toBeLessThanOrEqual(d.graceSeconds);
    expect(d.leaseReleased).toBe(true);
    expect(d.leaseHolderAfterExit).not.toBe("replica-b");
    expect(d.takeoverSecondsAfterExit!).toBeLessThanOrEqual(d.takeoverLimitSecondsAfterExit);
    expect(d.failedWritesBetweenSigtermAndExit).toBe(0);
    expect(d.orphans).toBe(0);
  });
});
