import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { AppsV1Api, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClusterEnv, parseEnvFile, waitFor } from "../../support/cluster.ts";
import { imageRef } from "../../support/images.ts";

// A cluster of its own, started and stopped by this file: 1,000 pods on simulated (kwok) nodes
// become Running, and after hack/cluster/down.sh nothing of the cluster is left on the machine —
// no process, mount, netns, link, route, cgroup, shim socket, host iptables rule or state dir.

const execFileP = promisify(execFile);
const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const name = `cronscale-throwaway-${process.pid}`;
const stateDir = `/var/tmp/cronscale/clusters/${name}`;
const isRoot = process.getuid?.() === 0;
const PODS = 1000;

/** Runs a cluster script for the throwaway cluster. */
async function script(which: "up.sh" | "down.sh", env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await execFileP("bash", [`${repoRoot}hack/cluster/${which}`], {
    env: { ...process.env, CLUSTER_NAME: name, ...env },
    maxBuffer: 16 << 20,
  });
  return stdout;
}

/** `iptables-save` of the host's own netns without counters and comments. */
async function hostIptables(): Promise<string> {
  const { stdout } = await execFileP("iptables-save", []);
  return stdout
    .split("\n")
    .filter((l) => l && !l.startsWith("#"))
    .map((l) => l.replace(/\[\d+:\d+\]/, ""))
    .join("\n");
}

/** Pids of processes whose command line or environment names the state dir. */
function processesOfCluster(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    if (pid === String(process.pid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      const env = readFileSync(`/proc/${pid}/environ`, "utf8");
      if (cmd.includes(stateDir) || env.split("\0").includes(`STATE_DIR=${stateDir}`)) found.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * Listening unix sockets of the given pids in a netns (shims keep theirs under /run/containerd/s;
 * unix sockets are listed per network namespace, and the shims live in the node's).
 */
async function socketsOf(pids: string[], netns: string): Promise<string[]> {
  const { stdout } = await execFileP("nsenter", [`--net=/var/run/netns/${netns}`, "--", "ss", "-xlpn"]);
  return stdout
    .split("\n")
    .filter((l) => pids.some((p) => l.includes(`pid=${p},`)))
    .map((l) => l.split(/\s+/)[4] ?? "")
    .filter((s) => s.startsWith("/"));
}

describe.skipIf(!isRoot)("a throwaway cluster", () => {
  let env: ClusterEnv;
  let kc: KubeConfig;
  let iptablesBefore = "";
  let shimSockets: string[] = [];

  beforeAll(async () => {
    iptablesBefore = await hostIptables();
    const kubeconfig =
      (await script("up.sh", { KWOK_NODES: "4", ADDONS: "" })).trim().split("\n").pop() ?? "";
    env = parseEnvFile(readFileSync(`${stateDir}/cluster.env`, "utf8")) as ClusterEnv;
    kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
  });
  afterAll(async () => {
    // Only when a test failed before its own down.sh: never leave the cluster behind.
    if (existsSync(stateDir)) await script("down.sh").catch(() => undefined);
  });

  it(`runs ${PODS} pods on kwok nodes`, async () => {
    const apps = kc.makeApiClient(AppsV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    const labels = { app: "scale" };
    const started = Date.now();
    await apps.createNamespacedDeployment({
      namespace: "default",
      body: {
        metadata: { name: "scale" },
        spec: {
          replicas: PODS,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              nodeSelector: { type: "kwok" },
              tolerations: [{ key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule" }],
              containers: [{ name: "main", image: "cronscale.local/never-pulled:kwok" }],
            },
          },
        },
      },
    });
    const running = await waitFor(
      async () => {
        const list = await core.listNamespacedPod({
          namespace: "default",
          labelSelector: "app=scale",
          fieldSelector: "status.phase=Running",
        });
        return list.items.length >= PODS ? list.items : undefined;
      },
      { timeoutMs: 150_000, intervalMs: 2000, what: `${PODS} Running pods` },
    );
    expect(running).toHaveLength(PODS);
    expect(new Set(running.map((p) => p.spec?.nodeName)).size).toBe(4);
    expect(running.every((p) => p.spec?.nodeName?.startsWith("kwok-node-"))).toBe(true);
    console.info(`${PODS} kwok pods Running after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  it("leaves nothing behind after down.sh, even with a pod running on the real node", async () => {
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({
      namespace: "default",
      body: {
        metadata: { name: "sleeper" },
        spec: {
          terminationGracePeriodSeconds: 30,
          containers: [{ name: "main", image: imageRef("shell"), command: ["sleep", "3600"] }],
        },
      },
    });
    await waitFor(
      async () =>
        (await core.readNamespacedPod({ name: "sleeper", namespace: "default" })).status?.phase === "Running",
      { timeoutMs: 120_000, what: "the sleeper pod to run" },
    );
    // What the cluster holds while it runs, to check each is gone afterwards.
    const pids = processesOfCluster();
    expect(pids.length).toBeGreaterThan(5);
    // The shims' sockets (the kubelet's device-plugin socket has a fixed host path that every
    // kubelet on the machine shares; down.sh removes it with the last cluster).
    shimSockets = (await socketsOf(pids, env.NODE_NETNS)).filter((p) => p.startsWith("/run/containerd/s/"));
    expect(shimSockets.length).toBeGreaterThan(0);
    const mountsBefore = readFileSync("/proc/self/mountinfo", "utf8");
    expect(mountsBefore).toContain(stateDir);

    await script("down.sh");

    expect(processesOfCluster()).toEqual([]);
    expect(pids.filter((p) => existsSync(`/proc/${p}`))).toEqual([]);
    const mounts = readFileSync("/proc/self/mountinfo", "utf8");
    expect(mounts).not.toContain(stateDir);
    expect(mounts).not.toContain(env.NODE_NETNS);
    expect(existsSync(`/var/run/netns/${env.NODE_NETNS}`)).toBe(false);
    const { stdout: netns } = await execFileP("ip", ["netns", "list"]);
    expect(netns).not.toContain(env.NODE_NETNS);
    const { stdout: links } = await execFileP("ip", ["-o", "link", "show"]);
    expect(links).not.toContain(`${env.HOST_VETH}@`);
    expect(links).not.toMatch(new RegExp(`\\b${env.HOST_VETH}\\b`));
    const { stdout: routes } = await execFileP("ip", ["route", "show"]);
    expect(routes).not.toContain(env.POD_CIDR);
    expect(routes).not.toContain(env.HOST_IP);
    for (const sock of shimSockets) expect(existsSync(sock), sock).toBe(false);
    const cgroupMounts = readFileSync("/proc/mounts", "utf8")
      .split("\n")
      .map((l) => l.split(" "))
      .filter((f) => f[2] === "cgroup" || f[2] === "cgroup2")
      .map((f) => f[1] ?? "");
    for (const m of cgroupMounts) expect(existsSync(`${m}/cronscale-${name}`), m).toBe(false);
    const cniResults = existsSync("/var/lib/cni/results") ? readdirSync("/var/lib/cni/results") : [];
    expect(cniResults.filter((f) => f.includes(name))).toEqual([]);
    expect(await hostIptables()).toBe(iptablesBefore);
    expect(existsSync(stateDir)).toBe(false);
  });
});

if (!isRoot) console.warn("throwaway cluster tests skipped: they need root (netns, mounts, containerd)");
