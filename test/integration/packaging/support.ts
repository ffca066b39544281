import { execFile, execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { clusterEnv, hasClusterEnv, kubeconfigPath, kubectl, waitFor } from "../../support/cluster.ts";

// Helpers of the packaging tests: the operator image built by the project's Docker daemon,
// helm, and reading the operator pod.

const execFileP = promisify(execFile);

/** Repository root (with trailing slash). */
export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const dockerd = join(repoRoot, "hack/docker/dockerd.sh");

/**
 * Why the image can't be built and run here, or undefined when it can: the daemon needs root
 * and Debian's docker.io (or apt to install it); the image goes into the local node's
 * containerd, so a user's own cluster (no cluster.env) does not qualify.
 */
export function packagingSkipReason(): string | undefined {
  if (!hasClusterEnv())
    return "the tests run on a user's cluster: the image can only be imported into a local one";
  if (process.getuid?.() !== 0) return "the Docker daemon (hack/docker/dockerd.sh) needs root";
  if (!existsSync("/usr/sbin/dockerd") && !existsSync("/usr/bin/apt-get"))
    return "no /usr/sbin/dockerd and no apt-get to install docker.io";
  if (!existsSync(join(clusterEnv().BIN_DIR, "helm"))) return `no helm in ${clusterEnv().BIN_DIR}`;
  return undefined;
}

/** True when the project's Docker daemon answers now. */
export function dockerdRunning(): boolean {
  return spawnSync("bash", [dockerd, "status"], { stdio: "ignore" }).status === 0;
}

/** Stops the project's Docker daemon (its data, the layer cache, stays). */
export function stopDockerd(): void {
  execFileSync("bash", [dockerd, "down"], { stdio: ["ignore", "inherit", "inherit"] });
}

/**
 * Builds the operator image (or finds it in the cache) and imports it into the node's
 * containerd; returns its ref. A cold build takes minutes: call it from a setup hook.
 */
export function buildOperatorImage(containerdAddress: string): string {
  const out = execFileSync("bash", [join(repoRoot, "hack/docker/build-operator-image.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, CONTAINERD_ADDRESS: containerdAddress },
  });
  return out.trim();
}

/** Splits `registry/repo:tag` at the last colon. */
export function splitRef(ref: string): { repository: string; tag: string } {
  const i = ref.lastIndexOf(":");
  return { repository: ref.slice(0, i), tag: ref.slice(i + 1) };
}

/** Runs the local cluster's helm against the test cluster; resolves with stdout. */
export async function helm(...args: string[]): Promise<string> {
  const bin = join(clusterEnv().BIN_DIR, "helm");
  const { stdout } = await execFileP(bin, [...args, "--kubeconfig", kubeconfigPath()], {
    maxBuffer: 16 << 20,
    timeout: 360_000,
  });
  return stdout;
}

/** A pod as far as these tests read it. */
export interface Pod {
  metadata: { name: string; namespace: string };
  spec: {
    securityContext?: Record<string, unknown>;
    containers: {
      name: string;
      image: string;
      imagePullPolicy: string;
      securityContext?: Record<string, unknown>;
    }[];
  };
  status: { conditions?: { type: string; status: string }[]; containerStatuses?: { restartCount: number }[] };
}

/** The single Ready pod matching `selector` in `namespace` (waits for it). */
export async function readyPod(namespace: string, selector: string, timeoutMs = 180_000): Promise<Pod> {
  return waitFor(
    async () => {
      const r = await kubectl(["get", "pods", "-l", selector, "-o", "json"], { namespace });
      const pods = (JSON.parse(r.stdout) as { items: Pod[] }).items;
      const ready = pods.filter((p) =>
        p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
      );
      return pods.length === 1 && ready.length === 1 ? ready[0] : undefined;
    },
    { timeoutMs, intervalMs: 1000, what: `one Ready pod ${selector} in ${namespace}` },
  );
}

/** What the operator container says about itself from inside (kubectl exec ... node -e). */
export interface InsideView {
  uid: number;
  gid: number;
  statusUid: string;
  rootWrite: string;
  tmpWrite: string;
}

// Runs inside the container with the image's own node: no shell is assumed.
const INSIDE_SCRIPT = `
const fs = require("node:fs");
const tryWrite = (p) => { try { fs.writeFileSync(p, "x"); fs.unlinkSync(p); return "ok"; } catch (e) { return e.code; } };
const statusUid = fs.readFileSync("/proc/1/status", "utf8").split("\\n").find((l) => l.startsWith("Uid:"));
console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), statusUid,
  rootWrite: tryWrite("/probe"), tmpWrite: tryWrite("/tmp/probe") }));
`;

/** Asks the running operator container who it runs as and whether it can write / and /tmp. */
export async function insideView(pod: Pod, container = "operator"): Promise<InsideView> {
  const r = await kubectl(["exec", pod.metadata.name, "-c", container, "--", "node", "-e", INSIDE_SCRIPT], {
    namespace: pod.metadata.namespace,
  });
  return JSON.parse(r.stdout.trim()) as InsideView;
}

/** `GET` through the apiserver's service proxy (reaches the pod inside the node's network). */
export async function viaServiceProxy(namespace: string, service: string, path: string): Promise<string> {
  const r = await kubectl([
    "get",
    "--raw",
    `/api/v1/namespaces/${namespace}/services/${service}/proxy${path}`,
  ]);
  return r.stdout;
}
