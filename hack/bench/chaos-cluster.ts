// Faults on the local cluster made by hack/cluster/up.sh, for the chaos benchmarks and their short
// versions in test/integration/chaos: restart kube-apiserver with its exact command line (plus
// extra flags, e.g. an audit log), compact etcd, and read the apiserver's audit log.
// Only for a cluster of our own (its cluster.env, its pids/): never a user's cluster.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { RealKubeClient } from "../../src/runtime/client.ts";
import { KubeTransport } from "../../src/runtime/rest.ts";

/** The keys of cluster.env these helpers use. */
export interface LocalCluster {
  CLUSTER_NAME: string;
  STATE_DIR: string;
  BIN_DIR: string;
  ETCD_URL: string;
  KUBECONFIG: string;
}

/** cluster.env next to a kubeconfig made by up.sh, or undefined for any other cluster. */
export function localClusterOf(kubeconfig: string): LocalCluster | undefined {
  const path = `${dirname(kubeconfig)}/cluster.env`;
  if (!existsSync(path)) return undefined;
  const env: Record<string, string> = {};
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const i = line.indexOf("=");
    if (i > 0) env[line.slice(0, i)] = line.slice(i + 1);
  }
  for (const k of ["STATE_DIR", "BIN_DIR", "ETCD_URL", "KUBECONFIG"])
    if (!env[k]) throw new Error(`${path} lacks ${k}`);
  return env as unknown as LocalCluster;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function apiserverPid(c: LocalCluster): number {
  return Number(readFileSync(`${c.STATE_DIR}/pids/kube-apiserver.pid`, "utf8").trim());
}

/** The running apiserver's command line (argv[0] excluded). */
export function apiserverArgs(c: LocalCluster): string[] {
  return readFileSync(`/proc/${apiserverPid(c)}/cmdline`, "utf8")
    .split("\0")
    .filter(Boolean)
    .slice(1);
}

/** Whether the apiserver answers /readyz with ok (a fresh connection each time). */
async function ready(c: LocalCluster): Promise<boolean> {
  const kc = new KubeConfig();
  kc.loadFromFile(c.KUBECONFIG);
  try {
    await KubeTransport.create(kc).request("GET", "/readyz", { accept: "text/plain" });
    return true;
  } catch {
    return false;
  }
}

/** Timings of one apiserver restart, in ms. */
export interface RestartTimes {
  /** From the kill until /readyz answered ok again. */
  unavailableMs: number;
}

/**
 * Kills kube-apiserver (SIGKILL by default: no graceful close of watches) and starts it again with
 * the same binary, arguments, environment and log, plus `extraArgs`; resolves once /readyz is ok.
 * `whileDown` runs between the kill and the start (e.g. compacting etcd).
 */
export async function restartApiserver(
  c: LocalCluster,
  opts: { extraArgs?: string[]; signal?: NodeJS.Signals; whileDown?: () => Promise<void> } = {},
): Promise<RestartTimes> {
  const pid = apiserverPid(c);
  const args = [...apiserverArgs(c), ...(opts.extraArgs ?? [])];
  const exe = readlinkSync(`/proc/${pid}/exe`);
  const cwd = readlinkSync(`/proc/${pid}/cwd`);
  const env = Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, "utf8")
      .split("\0")
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
  );
  const t0 = performance.now();
  process.kill(pid, opts.signal ?? "SIGKILL");
  for (let i = 0; existsSync(`/proc/${pid}`); i++) {
    if (i > 600) throw new Error(`kube-apiserver ${pid} did not exit`);
    await sleep(50);
  }
  await opts.whileDown?.();
  const log = openSync(`${c.STATE_DIR}/logs/kube-apiserver.log`, "a");
  const child = spawn(exe, args, { cwd, env, detached: true, stdio: ["ignore", log, log] });
  child.unref();
  // down.sh stops what pids/ lists: keep it pointing at the live process.
  writeFileSync(`${c.STATE_DIR}/pids/kube-apiserver.pid`, `${child.pid}\n`);
  for (;;) {
    if (await ready(c)) break;
    if (performance.now() - t0 > 180_000) throw new Error("restarted kube-apiserver not ready in 180 s");
    await sleep(250);
  }
  return { unavailableMs: Math.round(performance.now() - t0) };
}

/** etcd's v3 JSON gateway (loopback). int64 fields come as strings. */
async function etcd<T>(c: LocalCluster, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${c.ETCD_URL}/v3/${path}`, { method: "POST", body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`etcd ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Compacts etcd to its current revision (physically), as the apiserver does every 5 min. */
export async function compactEtcd(c: LocalCluster): Promise<number> {
  // A range over one key answers with the store's current revision in its header.
  const r = await etcd<{ header: { revision: string } }>(c, "kv/range", {
    key: Buffer.from("/").toString("base64"),
  });
  const revision = Number(r.header.revision);
  await etcd(c, "kv/compaction", { revision: String(revision), physical: true });
  return revision;
}

/** The namespace whose ServiceAccounts' writes the audit policy records. */
export const AUDITED_NAMESPACE = "cronscale-chaos";

/** Where {@link auditArgs} has the apiserver write its audit log. */
export function auditLogPath(c: LocalCluster): string {
  return `${c.STATE_DIR}/audit/audit.log`;
}

/**
 * The apiserver flags for an audit log of the writes made by the ServiceAccounts of
 * {@link AUDITED_NAMESPACE} (nothing else is recorded), or none when it already writes one.
 */
export function auditArgs(c: LocalCluster): string[] {
  if (apiserverArgs(c).some((a) => a.startsWith("--audit-policy-file"))) return [];
  const dir = `${c.STATE_DIR}/audit`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    `${dir}/policy.yaml`,
    [
      "apiVersion: audit.k8s.io/v1",
      "kind: Policy",
      "omitStages: [RequestReceived]",
      "rules:",
      "  - level: Metadata",
      `    userGroups: ["system:serviceaccounts:${AUDITED_NAMESPACE}"]`,
      "    verbs: [create, update, patch, delete, deletecollection]",
      "  - level: None",
      "",
    ].join("\n"),
  );
  return [
    `--audit-policy-file=${dir}/policy.yaml`,
    `--audit-log-path=${auditLogPath(c)}`,
    "--audit-log-maxsize=50",
    "--audit-log-maxbackup=1",
    "--audit-log-mode=blocking",
  ];
}

/** Makes sure the apiserver writes the audit log, restarting it (SIGTERM) once if it does not. */
export async function ensureAuditLog(c: LocalCluster): Promise<{ path: string; restarted?: RestartTimes }> {
  const extraArgs = auditArgs(c);
  if (extraArgs.length === 0) return { path: auditLogPath(c) };
  return { path: auditLogPath(c), restarted: await restartApiserver(c, { signal: "SIGTERM", extraArgs }) };
}

/** One audit event (the fields used here). */
export interface AuditEvent {
  verb: string;
  user: { username: string };
  objectRef?: { resource?: string; namespace?: string; name?: string; subresource?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
}

/** Audit events of one user received at or after `sinceMs` (epoch ms). */
export function auditEvents(path: string, username: string, sinceMs = 0): AuditEvent[] {
  if (!existsSync(path)) return [];
  const out: AuditEvent[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (!line) continue;
    const e = JSON.parse(line) as AuditEvent;
    if (e.user?.username === username && Date.parse(e.requestReceivedTimestamp) >= sinceMs) out.push(e);
  }
  return out;
}

/**
 * A kubeconfig for ServiceAccount `name` of {@link AUDITED_NAMESPACE} (created with cluster-admin
 * rights the first time), so each operator replica has its own user in the audit log.
 */
export async function serviceAccountKubeconfig(
  c: LocalCluster,
  name: string,
  outPath: string,
): Promise<string> {
  const admin = new KubeConfig();
  admin.loadFromFile(c.KUBECONFIG);
  const transport = KubeTransport.create(admin);
  const client = new RealKubeClient(transport);
  await client.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: AUDITED_NAMESPACE } });
  await client.apply({
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name, namespace: AUDITED_NAMESPACE },
  });
  await client.apply({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: AUDITED_NAMESPACE },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
    subjects: [
      {
        kind: "Group",
        name: `system:serviceaccounts:${AUDITED_NAMESPACE}`,
        apiGroup: "rbac.authorization.k8s.io",
      },
    ],
  });
  const tr = await transport.request<{ status: { token: string } }>(
    "POST",
    `/api/v1/namespaces/${AUDITED_NAMESPACE}/serviceaccounts/${name}/token`,
    {
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds: 7200 },
      },
    },
  );
  const token = tr.status.token;
  const cluster = admin.getCurrentCluster();
  if (!cluster?.caData) throw new Error(`${c.KUBECONFIG}: no cluster with certificate-authority-data`);
  const { server, caData: ca } = cluster;
  writeFileSync(
    outPath,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server, "certificate-authority-data": ca } }],
      users: [{ name, user: { token } }],
      contexts: [{ name: "c", context: { cluster: "c", user: name } }],
      "current-context": "c",
    }),
    { mode: 0o600 },
  );
  return `system:serviceaccount:${AUDITED_NAMESPACE}:${name}`;
}
