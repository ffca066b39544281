import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, inject } from "vitest";

// Helpers for integration tests on the cluster test/integration/setup/global.ts provides.

/** The keys hack/cluster/up.sh writes to cluster.env (shell KEY=value lines). */
export interface ClusterEnv {
  CLUSTER_NAME: string;
  STATE_DIR: string;
  KUBECONFIG: string;
  BIN_DIR: string;
  APISERVER_URL: string;
  HOST_IP: string;
  NODE_IP: string;
  NODE_NETNS: string;
  NODE_NAME: string;
  CONTAINERD_ADDRESS: string;
  POD_CIDR: string;
  SERVICE_CIDR: string;
  CLUSTER_DNS_IP: string;
  [key: string]: string;
}

/** Parses shell `KEY=value` lines (optionally quoted values; comments and blanks skipped). */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!m || line.startsWith("#")) continue;
    const [, key, value = ""] = m;
    if (key) out[key] = value.replace(/^(["'])(.*)\1$/, "$2");
  }
  return out;
}

/** Path of the kubeconfig of the test cluster. */
export function kubeconfigPath(): string {
  return inject("kubeconfig");
}

/** A KubeConfig loaded from the test cluster's kubeconfig. */
export function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath());
  return kc;
}

/** True when the tests run on a local cluster made by hack/cluster/up.sh (not a user's own). */
export function hasClusterEnv(): boolean {
  const path = inject("clusterEnvPath");
  return path !== "" && existsSync(path);
}

/** The local cluster's cluster.env; throws on a user's own cluster (check hasClusterEnv()). */
export function clusterEnv(): ClusterEnv {
  const path = inject("clusterEnvPath");
  if (!path || !existsSync(path)) {
    throw new Error("no cluster.env: the tests run on a user's cluster (KUBECONFIG), not one made by up.sh");
  }
  const env = parseEnvFile(readFileSync(path, "utf8"));
  for (const key of ["CLUSTER_NAME", "STATE_DIR", "BIN_DIR", "NODE_NAME", "CONTAINERD_ADDRESS"]) {
    if (!env[key]) throw new Error(`${path} lacks ${key}`);
  }
  return env as ClusterEnv;
}

/** Options of waitFor. */
export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** What is awaited, for the timeout message. */
  what?: string;
}

/**
 * Calls fn until it returns something other than undefined/false/null and returns that; errors
 * thrown by fn count as "not yet". Throws after timeoutMs (default 60 s) with the last error.
 */
export async function waitFor<T>(
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  opts: WaitOptions = {},
): Promise<T> {
  const { timeoutMs = 60_000, intervalMs = 250, what = "condition" } = opts;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== null && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Result of a kubectl run. */
export interface KubectlResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** Options of kubectl(). */
export interface KubectlOptions {
  namespace?: string;
  /** Written to kubectl's stdin (e.g. a manifest for `apply -f -`). */
  input?: string;
  timeoutMs?: number;
  /** Resolve with the exit code instead of throwing on a non-zero exit. */
  allowFailure?: boolean;
}

/** Runs kubectl (the local cluster's, else the one on PATH) against the test cluster. */
export function kubectl(args: string[], opts: KubectlOptions = {}): Promise<KubectlResult> {
  const bin = hasClusterEnv() ? `${clusterEnv().BIN_DIR}/kubectl` : "kubectl";
  const full = ["--kubeconfig", kubeconfigPath(), ...(opts.namespace ? ["-n", opts.namespace] : []), ...args];
  return new Promise((resolve, reject) => {
    const child = execFile(
      bin,
      full,
      { timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        if (code !== 0 && !opts.allowFailure) {
          reject(new Error(`kubectl ${args.join(" ")} exited with ${code}: ${stderr.trim()}`));
        } else {
          resolve({ stdout, stderr, code });
        }
      },
    );
    child.stdin?.end(opts.input ?? "");
  });
}

/** A namespace created for one test file; `name` is valid from beforeAll on. */
export interface TestNamespace {
  readonly name: string;
}

/**
 * Creates a fresh namespace (with extra `labels`, e.g. Pod Security ones) before the file's
 * tests, waiting for its default ServiceAccount, which pods need; deletes it after them.
 */
export function useNamespace(prefix = "t", labels: Record<string, string> = {}): TestNamespace {
  let name = "";
  beforeAll(async () => {
    const core = kubeConfig().makeApiClient(CoreV1Api);
    name = `${prefix}-${randomBytes(3).toString("hex")}`;
    await core.createNamespace({
      body: { metadata: { name, labels: { "cronscale.io/test": "true", ...labels } } },
    });
    await waitFor(() => core.readNamespacedServiceAccount({ name: "default", namespace: name }), {
      what: `ServiceAccount default in ${name}`,
    });
  });
  afterAll(async () => {
    if (!name || process.env.CRONSCALE_KEEP_NAMESPACES === "1") return;
    const core = kubeConfig().makeApiClient(CoreV1Api);
    await core.deleteNamespace({ name, propagationPolicy: "Background" }).catch(() => undefined);
  });
  return {
    get name(): string {
      if (!name) throw new Error("useNamespace(): the namespace exists only from beforeAll on");
      return name;
    },
  };
}
