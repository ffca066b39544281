// Chaos: kube-apiserver restarted (SIGKILL) and etcd compacted while ScheduledTasks are created,
// updated and deleted (docs/benchmarks.md). The operator's watches come back with resourceVersions
// etcd no longer has (410 Gone / "too old resource version"); its informers must relist and miss
// nothing. After the churn ends, every live task must be Running at its generation with exactly
// its children holding its current script, and no child of a deleted task left, within 60 s.
//
//   KUBECONFIG=/var/tmp/cronscale/clusters/<name>/kubeconfig npm run bench:chaos-apiserver -- \
//     --count 300 --restarts 3
// Local clusters made by hack/cluster/up.sh only (it restarts their apiserver).
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { parse } from "yaml";
import { RealKubeClient } from "../../src/runtime/client.ts";
import { KubeTransport } from "../../src/runtime/rest.ts";
import { auditArgs, compactEtcd, localClusterOf, restartApiserver } from "./chaos-cluster.ts";
import { Churn, startOperator, waitConverged } from "./chaos-tasks.ts";

const { values } = parseArgs({
  options: {
    count: { type: "string", default: "300" },
    restarts: { type: "string", default: "3" },
    "churn-workers": { type: "string", default: "4" },
    "churn-pause-ms": { type: "string", default: "100" },
    entry: { type: "string", default: "dist/main.js" },
  },
});
const root = new URL("../../", import.meta.url).pathname;
const kubeconfig = (process.env.KUBECONFIG ?? "").split(":")[0] ?? "";
const cluster = localClusterOf(kubeconfig);
if (!cluster) throw new Error("KUBECONFIG must name a local cluster made by hack/cluster/up.sh");
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const client = new RealKubeClient(KubeTransport.create(kc));
const chart = parse(readFileSync(`${root}charts/cronscale/values.yaml`, "utf8")) as { nodeOptions?: string };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ns = `chaos-api-${randomBytes(3).toString("hex")}`;
await client.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
const churn = new Churn(client, ns);
await churn.seed(Number(values.count));
const op = startOperator({
  entry: `${root}${values.entry}`,
  namespace: ns,
  kubeconfig,
  identity: "chaos-api",
  nodeOptions: chart.nodeOptions,
});
const cold = await waitConverged(client, ns, churn.live.size, 600_000);

churn.start(Number(values["churn-workers"]), Number(values["churn-pause-ms"]));
const restarts: { unavailableMs: number; compactedAt: number }[] = [];
for (let i = 0; i < Number(values.restarts); i++) {
  await sleep(3000);
  let compactedAt = 0;
  const t = await restartApiserver(cluster, {
    extraArgs: i === 0 ? auditArgs(cluster) : [],
    // While it is down the churn keeps retrying; etcd drops every revision before now.
    whileDown: async () => {
      await sleep(2000);
      compactedAt = await compactEtcd(cluster);
    },
  });
  // And once more while it serves: watches resumed after the restart lose their history too.
  await sleep(2000);
  await compactEtcd(cluster);
  restarts.push({ ...t, compactedAt });
}
await sleep(3000);
await churn.stop();
let converged: Awaited<ReturnType<typeof waitConverged>> | undefined;
let error: string | undefined;
try {
  converged = await waitConverged(client, ns, churn.live.size, 120_000, churn.live);
} catch (err) {
  error = String(err);
}
op.signal("SIGTERM");
await op.exited;
const relists = op.lines.filter((l) => l.msg === "relisting");
const listWatchFailures = op.lines.filter((l) => l.msg === "list/watch failed");
const result = {
  tasksSeeded: Number(values.count),
  coldConvergenceSeconds: +(cold.ms / 1000).toFixed(1),
  apiserverRestarts: restarts.length,
  apiserverUnavailableSeconds: restarts.map((r) => +(r.unavailableMs / 1000).toFixed(1)),
  etcdCompactedAtRevision: restarts.map((r) => r.compactedAt),
  churn: churn.stats,
  liveTasks: churn.live.size,
  deletedTasks: churn.deleted.size,
  operatorRelistsAfter410: relists.filter((l) => l.why === "gone").length,
  operatorRelistsOther: relists.filter((l) => l.why !== "gone").length,
  operatorListWatchFailures: listWatchFailures.length,
  operatorListWatch410s: listWatchFailures.filter((l) => /410|too old|expired/i.test(String(l.err))).length,
  secondsToConvergedAfterChurn: converged ? +(converged.ms / 1000).toFixed(1) : null,
  converged: converged?.state.converged ?? null,
  orphans: converged?.state.orphans.length ?? null,
  error,
  withinSixtySeconds: converged !== undefined && converged.ms <= 60_000,
};
console.log(JSON.stringify(result, null, 2));
await client.delete("v1", "Namespace", "", ns);
if (!result.withinSixtySeconds) process.exitCode = 1;
