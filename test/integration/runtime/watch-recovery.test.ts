import { spawn } from "node:child_process";
import { existsSync, openSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log.ts";
import { Informer } from "../../../src/runtime/informer.ts";
import { kubeConnection } from "../../../src/runtime/kube.ts";
import { KubeListWatch } from "../../../src/runtime/listwatch.ts";
import {
  clusterEnv,
  hasClusterEnv,
  kubeConfig,
  kubectl,
  useNamespace,
  waitFor,
} from "../../support/cluster.ts";
import { TcpProxy } from "./tcp-proxy.ts";

// "No missed delete": an informer whose watch connection dies must still deliver a delete that
// happened while it was disconnected. With a local test cluster we kill -9 the real API server
// and start it again with its exact command line; otherwise (a user's cluster) the connection is
// cut by a loopback TCP proxy between the informer and the API server.

const ns = useNamespace("rt-watch");
const proxies: TcpProxy[] = [];
afterAll(async () => {
  for (const p of proxies) await p.close();
});

/** The local test cluster's apiserver may be restarted (never a cluster the user pointed us at). */
function canRestartApiserver(): boolean {
  if (!hasClusterEnv()) return false;
  const env = clusterEnv();
  const pidFile = `${env.STATE_DIR}/pids/kube-apiserver.pid`;
  const ownCluster =
    env.CLUSTER_NAME.startsWith("cronscale-test-") || process.env.CRONSCALE_TEST_RESTART_APISERVER === "1";
  return ownCluster && existsSync(pidFile);
}

/** Kills the API server with SIGKILL and starts it again exactly as it ran (binary, args, env). */
async function restartApiserver(whileDown: () => Promise<void> = async () => {}): Promise<void> {
  const env = clusterEnv();
  const pidFile = `${env.STATE_DIR}/pids/kube-apiserver.pid`;
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  const exe = readlinkSync(`/proc/${pid}/exe`);
  const cwd = readlinkSync(`/proc/${pid}/cwd`);
  const environ = Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, "utf8")
      .split("\0")
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
  );
  process.kill(pid, "SIGKILL");
  await waitFor(() => !existsSync(`/proc/${pid}`), { timeoutMs: 10_000, what: "apiserver exit" });
  await whileDown();
  const log = openSync(`${env.STATE_DIR}/logs/kube-apiserver.log`, "a");
  const child = spawn(exe, argv.slice(1), { cwd, env: environ, detached: true, stdio: ["ignore", log, log] });
  child.unref();
  // down.sh kills what pids/ lists: keep it pointing at the live process.
  writeFileSync(pidFile, `${child.pid}\n`);
  console.log(`watch recovery: kube-apiserver pid ${pid} killed with SIGKILL, restarted as pid ${child.pid}`);
  await waitFor(async () => (await kubectl(["get", "--raw", "/readyz"], { allowFailure: true })).code === 0, {
    timeoutMs: 120_000,
    intervalMs: 500,
    what: "restarted apiserver /readyz",
  });
}

/** A kubeconfig like the test one, but whose server is a proxy on 127.0.0.1. */
async function proxiedKubeConfig(): Promise<{ kc: KubeConfig; proxy: TcpProxy }> {
  const base = kubeConfig();
  const cluster = base.getCurrentCluster()!;
  const url = new URL(cluster.server);
  const proxy = new TcpProxy(url.hostname.replace(/^\[|\]$/g, ""), Number(url.port || 443));
  proxies.push(proxy);
  const port = await proxy.listen();
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // The apiserver certificate has 127.0.0.1 among its SANs (up.sh), so no server name override.
    clusters: [{ ...cluster, server: `https://127.0.0.1:${port}` }],
    users: base.users,
    contexts: base.contexts,
    currentContext: base.currentContext,
  });
  return { kc, proxy };
}

function informer(kc: KubeConfig) {
  const { transport } = kubeConnection(kc);
  const inf = new Informer({
    source: new KubeListWatch(transport, { apiVersion: "v1", kind: "ConfigMap" }, ns.name),
    log: silentLogger(),
    backoff: { baseMs: 200, maxMs: 2000 },
  });
  const seen: string[] = [];
  inf.addHandlers({
    onAdd: (o) => seen.push(`add ${o.metadata.name}`),
    onUpdate: (_, o) => seen.push(`update ${o.metadata.name}`),
    onDelete: (o) => seen.push(`delete ${o.metadata.name}`),
  });
  return { inf, seen };
}

describe("watch recovery", () => {
  it("delivers a delete that happened while the watch connection was dead", async () => {
    const { client } = kubeConnection(kubeConfig());
    await client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "keep", namespace: ns.name },
    });
    await client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "doomed", namespace: ns.name },
    });

    const { kc, proxy } = await proxiedKubeConfig();
    const viaProxy = informer(kc);
    const direct = informer(kubeConfig());
    viaProxy.inf.start();
    direct.inf.start();
    await Promise.all([viaProxy.inf.waitForSync(), direct.inf.waitForSync()]);
    expect(viaProxy.inf.get(`${ns.name}/doomed`)).toBeDefined();
    await waitFor(() => proxy.openConnections() > 0, { what: "watch through the proxy" });
    const errorsBefore = viaProxy.inf.stats.errors;

    if (canRestartApiserver()) {
      // Real apiserver death. The proxy keeps the proxied informer away until the delete is done,
      // so it must find out about it from a relist (its old resourceVersion predates the restart).
      proxy.cut();
      await restartApiserver();
      await client.delete("v1", "ConfigMap", ns.name, "doomed");
      await client.apply({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "keep", namespace: ns.name },
        data: { after: "restart" },
      });
      proxy.restore();
    } else {
      console.log(
        "watch recovery: not a local test cluster, so the apiserver is not restarted; cutting the connection with a TCP proxy instead",
      );
      proxy.cut();
      await waitFor(() => viaProxy.inf.stats.errors > errorsBefore || viaProxy.inf.stats.watches > 1, {
        what: "broken watch noticed",
      });
      await client.delete("v1", "ConfigMap", ns.name, "doomed");
      await client.apply({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "keep", namespace: ns.name },
        data: { after: "cut" },
      });
      proxy.restore();
    }

    for (const i of [viaProxy, direct]) {
      await waitFor(() => i.seen.includes("delete doomed"), {
        timeoutMs: 60_000,
        what: "missed delete delivered",
      });
      await waitFor(() => i.seen.includes("update keep"), {
        timeoutMs: 60_000,
        what: "missed update delivered",
      });
      expect(i.inf.get(`${ns.name}/doomed`)).toBeUndefined();
      expect(i.inf.get(`${ns.name}/keep`)).toBeDefined();
    }
    expect(viaProxy.inf.stats.errors + viaProxy.inf.stats.watches).toBeGreaterThan(1);

    // And the informers keep working afterwards.
    await client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "later", namespace: ns.name },
    });
    for (const i of [viaProxy, direct]) {
      await waitFor(() => i.seen.includes("add later"), { timeoutMs: 30_000, what: "event after recovery" });
    }
    await viaProxy.inf.stop();
    await direct.inf.stop();
  });
});
