// Chaos with two operator replicas under Lease leader election (docs/benchmarks.md):
//
//   --scenario freeze  the leader is frozen (SIGSTOP) during churn past its renew deadline; the
//                      standby must take over within lease duration + cache sync, and the frozen
//                      one, resumed (SIGCONT) after the takeover, must write nothing.
//   --scenario drain   the leader gets SIGTERM during a cold convergence; it must finish its
//                      in-flight reconciles, release the Lease and exit 0 within the chart's grace
//                      period, and the standby must take over within a retry period.
//
// Each replica runs as its own ServiceAccount, so the apiserver's audit log (turned on by
// chaos-cluster.ts, one apiserver restart if it was off) says which replica wrote what and when.
//
//   KUBECONFIG=/var/tmp/cronscale/clusters/<name>/kubeconfig npm run bench:chaos-freeze -- --count 300
//   KUBECONFIG=... npm run bench:chaos-drain -- --count 1000
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { parseArgs } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { parse } from "yaml";
import { RealKubeClient } from "../../src/runtime/client.ts";
import { KubeTransport } from "../../src/runtime/rest.ts";
import { localClusterOf } from "./chaos-cluster.ts";
import { runDrain, runFreeze } from "./chaos-replicas.ts";

const { values } = parseArgs({
  options: {
    scenario: { type: "string", default: "freeze" },
    count: { type: "string", default: "300" },
    "lease-seconds": { type: "string", default: "15" },
    "renew-seconds": { type: "string", default: "10" },
    "retry-seconds": { type: "string", default: "2" },
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
const chart = parse(readFileSync(`${root}charts/cronscale/values.yaml`, "utf8")) as {
  nodeOptions?: string;
  terminationGracePeriodSeconds?: number;
};
const dir = mkdtempSync(`${tmpdir()}/chaos-leader-`);
const ns = `chaos-${values.scenario}-${randomBytes(3).toString("hex")}`;
await client.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
const common = {
  client,
  cluster,
  ns,
  dir,
  entry: `${root}${values.entry}`,
  nodeOptions: chart.nodeOptions,
  count: Number(values.count),
  lease: {
    name: "cronscale-leader",
    durationS: Number(values["lease-seconds"]),
    renewS: Number(values["renew-seconds"]),
    retryS: Number(values["retry-seconds"]),
  },
};
let ok = false;
try {
  if (values.scenario === "freeze") {
    const r = await runFreeze(common);
    console.log(JSON.stringify({ ...r.result, ok: r.ok }, null, 2));
    ok = r.ok;
  } else if (values.scenario === "drain") {
    const r = await runDrain({ ...common, graceSeconds: chart.terminationGracePeriodSeconds ?? 40 });
    console.log(JSON.stringify({ ...r.result, ok: r.ok }, null, 2));
    ok = r.ok;
  } else throw new Error(`unknown --scenario ${values.scenario} (freeze or drain)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
  await client.delete("v1", "Namespace", "", ns);
}
if (!ok) process.exitCode = 1;
