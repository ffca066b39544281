import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig, type User } from "@kubernetes/client-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_VERSION } from "../../../src/api/v1alpha1/kind.ts";
import type { ScalePlatformBackup } from "../../../src/api/v1alpha1/scaleplatformbackup.ts";
import {
  KubeAuthorizer,
  keepApiServiceCaBundle,
  startHistoryServer,
  watchRequestHeaderAuth,
} from "../../../src/archive/http.ts";
import { MemoryExecutionArchive } from "../../../src/archive/memory.ts";
import { main } from "../../../src/cli/main.ts";
import { RealKubeClient } from "../../../src/runtime/client.ts";
import { KubeTransport } from "../../../src/runtime/rest.ts";
import { execPluginUser } from "../../../src/runtime/testing.ts";
import {
  clusterEnv,
  hasClusterEnv,
  kubeConfig,
  kubectl,
  useNamespace,
  waitFor,
} from "../../support/cluster.ts";
import { makeClientCert, makeTestTls, type TestTls } from "../../support/tls.ts";
import { helm } from "../packaging/support.ts";
import { applyTask, getTask } from "../scheduledtask/helpers.ts";
import { installCrds, localTaskConfig, startOperator, type TestOperator } from "../scheduledtask/operator.ts";

// `kubectl cronscale` on the local cluster as two users that are not the admin, each with its
// kubeconfig's own credentials: a client certificate the cluster's CA signed, and an exec plugin
// (a real process, client.authentication.k8s.io/v1) that hands over a ServiceAccount token. Each
// runs a task now and waits for its output, suspends and resumes it, reads its history and logs
// from the execution archive through the API server (the chart's APIService template, served by
// the endpoint on the host, its caBundle kept by the operator's code), its next runs, and takes
// a manual backup. A third user without rights is refused, by the API server and by the archive.

const skip = hasClusterEnv()
  ? undefined
  : "needs the local cluster of hack/cluster/up.sh (its CA signs a client certificate; the APIService reaches the host)";
if (skip) console.warn(`skipping the CLI plugin test: ${skip}`);

const ns = useNamespace("cli", { "pod-security.kubernetes.io/enforce": "restricted" });
const TASK = "hello";
const APISERVICE = "v1alpha1.history.cronscale.io";
const log = pino({ level: "silent" });
let work: string;
let op: TestOperator;
let servingTls: TestTls;
let historyServer: Awaited<ReturnType<typeof startHistoryServer>>;
let stopFrontProxy: (() => void) | undefined;
let stopCaBundle: (() => void) | undefined;
let rendered = "";
const kubeconfigs: Record<"cert" | "exec" | "stranger", string> = { cert: "", exec: "", stranger: "" };

/** A kubeconfig file for the test cluster with `user` instead of the admin's credentials. */
function kubeconfigFor(name: string, user: Omit<User, "name">): string {
  const admin = kubeConfig();
  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error("no cluster in the test kubeconfig");
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name, ...user }],
    contexts: [{ name, cluster: cluster.name, user: name, namespace: ns.name }],
    currentContext: name,
  });
  const file = join(work, `${name}.kubeconfig`);
  writeFileSync(file, kc.exportConfig(), { mode: 0o600 });
  return file;
}

/** A client-certificate user signed by the local cluster's CA. */
function certUser(cn: string): Omit<User, "name"> {
  const ca = mkdtempSync(join(work, "ca-"));
  copyFileSync(join(clusterEnv().STATE_DIR, "pki", "ca.crt"), join(ca, "ca.crt"));
  copyFileSync(join(clusterEnv().STATE_DIR, "pki", "ca.key"), join(ca, "ca.key"));
  const cert = makeClientCert(
    { dir: ca, caFile: join(ca, "ca.crt"), certFile: "", keyFile: "", remove: () => {} },
    cn,
  );
  return {
    certData: readFileSync(cert.certFile).toString("base64"),
    keyData: readFileSync(cert.keyFile).toString("base64"),
  };
}

async function cli(who: keyof typeof kubeconfigs, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    argv,
    { out: (l) => out.push(l), err: (l) => err.push(l), now: () => new Date() },
    { KUBECONFIG: kubeconfigs[who] },
  );
  return { code, out: out.join("\n"), err: err.join("\n") };
}

beforeAll(async () => {
  if (skip) return;
  work = mkdtempSync(join(tmpdir(), "cronscale-cli-"));
  await installCrds();
  const archive = new MemoryExecutionArchive();
  op = await startOperator(ns.name, localTaskConfig({ archiveWindow: 2 }, ["Bash"]), { archive });

  // The history endpoint on the host, behind the chart's APIService (a selector-less Service to
  // HOST_IP: the API server dials it there), as `make run` registers it.
  const env = clusterEnv();
  const admin = new RealKubeClient(KubeTransport.create(kubeConfig()));
  servingTls = makeTestTls(`DNS:cronscale-history.${ns.name}.svc,IP:${env.HOST_IP}`);
  const frontProxy = await watchRequestHeaderAuth(admin, log);
  stopFrontProxy = frontProxy.stop;
  expect(frontProxy.current()?.allowedNames).toEqual(["front-proxy-client"]);
  historyServer = await startHistoryServer(
    { host: env.HOST_IP, port: 0, log, tls: servingTls, requestHeader: frontProxy.current },
    { archive, authorizer: new KubeAuthorizer(admin) },
  );
  const port = (historyServer.address() as AddressInfo).port;
  await kubectl(["apply", "-f", "-"], {
    namespace: ns.name,
    input: `apiVersion: v1
kind: Service
metadata: {name: cronscale-history}
spec: {ports: [{name: history, port: ${port}, protocol: TCP}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: cronscale-history-host, labels: {kubernetes.io/service-name: cronscale-history}}
addressType: IPv4
ports: [{name: history, port: ${port}, protocol: TCP}]
endpoints: [{addresses: ["${env.HOST_IP}"], conditions: {ready: true}}]
`,
  });
  rendered = await helm(
    "template",
    "cronscale",
    "charts/cronscale",
    "--namespace",
    ns.name,
    "--show-only",
    "templates/history-apiservice.yaml",
    "--set",
    `archive.httpPort=${port}`,
  );
  await kubectl(["apply", "-f", "-"], { input: rendered });
  stopCaBundle = await keepApiServiceCaBundle(
    admin,
    APISERVICE,
    () => readFileSync(servingTls.caFile, "utf8"),
    log,
  );
  await waitFor(
    async () => {
      const r = await kubectl([
        "get",
        "apiservice",
        APISERVICE,
        "-o",
        'jsonpath={.status.conditions[?(@.type=="Available")].status}',
      ]);
      return r.stdout === "True" ? true : undefined;
    },
    { timeoutMs: 90_000, what: `APIService ${APISERVICE} Available` },
  );

  // The users: rights on tasks, runs and backups in the namespace; the stranger has none.
  await kubectl(["create", "serviceaccount", "cli-exec"], { namespace: ns.name });
  await kubectl(["apply", "-f", "-"], {
    namespace: ns.name,
    input: `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: cli-user}
rules:
  - apiGroups: [cronscale.io]
    resources: [scheduledtasks, taskexecutions, scaleplatforms, scaleplatformbackups]
    verbs: [get, list, patch, create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: cli-user}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cli-user}
subjects:
  - {kind: User, apiGroup: rbac.authorization.k8s.io, name: cli-cert-user}
  - {kind: ServiceAccount, name: cli-exec, namespace: ${ns.name}}
`,
  });
  const token = (
    await kubectl(["create", "token", "cli-exec", "--duration=1h"], { namespace: ns.name })
  ).stdout.trim();
  kubeconfigs.cert = kubeconfigFor("cli-cert-user", certUser("cli-cert-user"));
  kubeconfigs.exec = kubeconfigFor(
    "cli-exec",
    execPluginUser(work, `({ token: ${JSON.stringify(token)} })`).user,
  );
  kubeconfigs.stranger = kubeconfigFor("cli-stranger", certUser("cli-stranger"));

  await applyTask(ns.name, TASK, {
    schedule: "0 0 1 1 *",
    timezone: "Europe/Berlin",
    language: "Bash",
    plan: "Micro",
    timeoutSeconds: 60,
    script: 'echo "hello from $(id -u)"\n',
  });
}, 900_000);

afterAll(async () => {
  stopCaBundle?.();
  stopFrontProxy?.();
  historyServer?.close();
  if (rendered)
    await kubectl(["delete", "--ignore-not-found", "-f", "-"], { input: rendered }).catch(() => undefined);
  await op?.stop();
  servingTls?.remove();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.skipIf(skip)("kubectl cronscale on the local cluster", () => {
  for (const who of ["cert", "exec"] as const) {
    it(`runs, suspends, resumes and reads the history as ${who === "cert" ? "a client-certificate" : "an exec-plugin"} user`, async () => {
      const run = await cli(who, "run", TASK, "--wait", "--timeout", "3m");
      expect(run.err).toMatch(/run requested .*\n.*: Succeeded, exit code 0$/);
      expect(run.out).toMatch(/^hello from \d+$/);
      expect(run.code).toBe(0);

      expect((await cli(who, "suspend", TASK)).out).toBe(`scheduledtask/${TASK} suspended`);
      expect((await getTask(ns.name, TASK))?.spec.suspend).toBe(true);
      const resumed = await cli(who, "resume", TASK, "-o", "json");
      expect(JSON.parse(resumed.out).spec.suspend).toBe(false);
      expect((await getTask(ns.name, TASK))?.spec.suspend).toBe(false);

      // Through the API server: the endpoint saw this user (its SubjectAccessReview allowed it).
      const history = await cli(who, "history", TASK, "-o", "json");
      expect(history.err).toBe("");
      const items = JSON.parse(history.out).items as { name: string; spec: { output?: string } }[];
      expect(items.length).toBeGreaterThanOrEqual(who === "cert" ? 1 : 2);
      const table = await cli(who, "history", TASK);
      expect(table.out.split("\n")[0]).toMatch(/^NAME\s+RESULT/);
      expect(table.out).toContain("Succeeded");
      expect((await cli(who, "logs", TASK)).out).toBe(run.out);
      const usage = await cli(who, "usage", "--task", TASK, "-o", "yaml");
      expect(usage.out).toContain(`taskName: ${TASK}`);

      const next = await cli(who, "next-runs", TASK, "-c", "1", "--from", "2026-06-01T00:00:00Z");
      expect(next.out).toBe("2027-01-01T00:00:00+01:00");
      expect((await cli(who, "__complete", "logs", "h")).out).toBe(TASK);
    });
  }

  it("takes a manual backup as the exec-plugin user (a ScalePlatformBackup for the platform)", async () => {
    const r = await cli("exec", "backup", "shop", "--type", "incr", "-o", "json");
    expect(r.code).toBe(0);
    const name = JSON.parse(r.out).metadata.name as string;
    expect(name).toMatch(/^shop-manual-/);
    const admin = new RealKubeClient(KubeTransport.create(kubeConfig()));
    const backup = await admin.get<ScalePlatformBackup>(API_VERSION, "ScalePlatformBackup", ns.name, name);
    expect(backup?.spec).toEqual({ platformName: "shop", type: "incr" });
    // No such platform: restore says so before creating anything.
    const restore = await cli("exec", "restore", "shop", "--latest");
    expect(restore).toMatchObject({
      code: 1,
      err: `error: scaleplatform shop not found in namespace ${ns.name}`,
    });
  });

  it("refuses a user without rights: the API server for writes, the archive for reads", async () => {
    const run = await cli("stranger", "run", TASK);
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/^error: 403 Forbidden: .*"cli-stranger" cannot patch resource "scheduledtasks"/);
    const history = await cli("stranger", "history", TASK);
    expect(history.code).toBe(1);
    expect(history.err).toBe(
      `error: 403: forbidden: user "cli-stranger" may not get scheduledtask ${TASK} in namespace ${ns.name}`,
    );
  });
});
