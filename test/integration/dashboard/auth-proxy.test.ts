import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { proxyAuthSettingsFrom } from "../../../src/dashboard/auth-proxy.ts";
import { ImpersonatingKubeConfig } from "../../../src/dashboard/auth-proxy-kube.ts";
import { KubeViewerApi, viewerKubeConfig } from "../../../src/dashboard/kube.ts";
import { createDashboard } from "../../../src/dashboard/server.ts";
import { silentLogger } from "../../../src/log.ts";
import { hasClusterEnv, kubeConfig, kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { makeClientCert, makeTestTls, type TestTls, tlsRequest } from "../../support/tls.ts";
import { installCrds } from "../scheduledtask/operator.ts";

// The dashboard behind a trusted authenticating proxy, against the local cluster's API server.
// The dashboard runs as a ServiceAccount that may only impersonate users and groups; the test
// plays the proxy (a client certificate of the configured CA) naming user "proxy:bob" in group
// "proxy:team-x". What bob sees and may do is what RBAC grants bob and that group: a Role bound
// to the user reads tasks in one namespace, one bound to the group may patch them (Run now), and
// the API server's 403 comes back for a delete. A client without the certificate sending the same
// headers gets no identity.

const ns = useNamespace("proxy");
const other = useNamespace("proxy-other");
const TASKS = "/dashboard/compute/serverless/tasks";
const SA = "dashboard";
const IMPERSONATOR = `cronscale-test-impersonator-${Date.now().toString(36)}`;
let tls: TestTls;
let otherCa: TestTls;
let proxyCert: { certFile: string; keyFile: string };
let spoofCert: { certFile: string; keyFile: string };
let app: FastifyInstance;
let port = 0;
let saConfig: ReturnType<typeof viewerKubeConfig>;

const BOB: [string, string][] = [
  ["X-Remote-User", "proxy:bob"],
  ["X-Remote-Group", "proxy:team-x"],
];

const task = (name: string) =>
  JSON.stringify({
    apiVersion: "cronscale.io/v1alpha1",
    kind: "ScheduledTask",
    metadata: { name },
    spec: { schedule: "0 3 * * *", language: "Bash", plan: "Micro", timeoutSeconds: 60, script: "true" },
  });

const canI = async (verb: string, as: string[]) =>
  (
    await kubectl(["auth", "can-i", verb, "scheduledtasks.cronscale.io", ...as], {
      namespace: ns.name,
      allowFailure: true,
    })
  ).stdout.trim() === "yes";

describe.skipIf(!hasClusterEnv())("dashboard behind an authenticating proxy", () => {
  beforeAll(async () => {
    await installCrds();
    tls = makeTestTls();
    otherCa = makeTestTls();
    proxyCert = makeClientCert(tls, "front-proxy");
    spoofCert = makeClientCert(otherCa, "front-proxy");
    // The dashboard's identity: impersonate users and groups, nothing else (as the chart grants).
    await kubectl(["apply", "-f", "-"], {
      input: `
apiVersion: v1
kind: ServiceAccount
metadata: {name: ${SA}, namespace: ${ns.name}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ${IMPERSONATOR}}
rules:
  - {apiGroups: [""], resources: [users, groups], verbs: [impersonate]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ${IMPERSONATOR}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${IMPERSONATOR}}
subjects: [{kind: ServiceAccount, name: ${SA}, namespace: ${ns.name}}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: ${ns.name}}
rules:
  - {apiGroups: [cronscale.io], resources: [scheduledtasks, taskexecutions], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bob-reads, namespace: ${ns.name}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "proxy:bob"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: runner, namespace: ${ns.name}}
rules:
  - {apiGroups: [cronscale.io], resources: [scheduledtasks], verbs: [patch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: team-x-runs, namespace: ${ns.name}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: runner}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "proxy:team-x"}]
`,
    });
    await kubectl(["apply", "-f", "-"], { namespace: ns.name, input: task("visible-task") });
    await kubectl(["apply", "-f", "-"], { namespace: other.name, input: task("hidden-task") });
    const sa = `--as=system:serviceaccount:${ns.name}:${SA}`;
    await waitFor(
      async () =>
        (await canI("list", ["--as=proxy:bob"])) &&
        (await canI("patch", ["--as=proxy:bob", "--as-group=proxy:team-x"])) &&
        (
          await kubectl(["auth", "can-i", "impersonate", "groups", sa], { allowFailure: true })
        ).stdout.trim() === "yes",
      { timeoutMs: 30_000, what: "RBAC for proxy:bob and the dashboard" },
    );
    const token = (
      await kubectl(["create", "token", SA, "--duration=10m"], { namespace: ns.name })
    ).stdout.trim();
    const admin = kubeConfig();
    saConfig = viewerKubeConfig(admin, token);
    const settings = proxyAuthSettingsFrom(
      { clientCaPem: readFileSync(tls.caFile, "utf8"), allowedNames: "front-proxy" },
      true,
    );
    app = await createDashboard({
      log: silentLogger(),
      namespaces: [ns.name, other.name],
      viewerApi: (t) => new KubeViewerApi(admin, t),
      tls: { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) },
      proxyAuth: {
        settings: settings as NonNullable<typeof settings>,
        viewerApi: (id) => new KubeViewerApi(saConfig, new ImpersonatingKubeConfig(saConfig, id)),
      },
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    port = (app.server.address() as { port: number }).port;
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await kubectl(["delete", "clusterrolebinding,clusterrole", IMPERSONATOR, "--ignore-not-found"], {
      allowFailure: true,
    });
    tls?.remove();
    otherCa?.remove();
  });

  const send = (
    path: string,
    cert: typeof proxyCert | undefined,
    headers: [string, string][],
    body?: string,
  ) =>
    tlsRequest({
      port,
      path,
      caFile: tls.caFile,
      cert,
      headers,
      method: body === undefined ? "GET" : "POST",
      body,
    });

  it("acts as the proxy's viewer: RBAC of bob and his group, the API server's 403 for the rest", async () => {
    // Who the API server says the dashboard acts as (SelfSubjectReview): itself without the
    // headers, bob in his group with them.
    expect((await new KubeViewerApi(saConfig, saConfig).whoAmI()).username).toBe(
      `system:serviceaccount:${ns.name}:${SA}`,
    );
    const bob = await new KubeViewerApi(
      saConfig,
      new ImpersonatingKubeConfig(saConfig, { username: "proxy:bob", groups: ["proxy:team-x"], extra: {} }),
    ).whoAmI();
    expect(bob).toEqual({ username: "proxy:bob", groups: ["proxy:team-x", "system:authenticated"] });

    const list = await send(`${TASKS}?namespace=${ns.name}`, proxyCert, BOB);
    expect(list.status).toBe(200);
    expect(list.body).toContain("proxy:bob"); // the name the API server reported at sign-in
    expect(list.body).toContain("visible-task");
    const cookie = list.cookie as string;
    const withSession: [string, string][] = [...BOB, ["Cookie", cookie]];

    // The other namespace: bob may not read it; the API server's answer is shown.
    const hidden = await send(`${TASKS}/${other.name}/hidden-task`, proxyCert, withSession);
    expect(hidden.status).toBe(403);
    expect(hidden.body).toContain("proxy:bob");

    // Run now is a patch, granted to the group only: it works, so the group was impersonated.
    const detail = await send(`${TASKS}/${ns.name}/visible-task`, proxyCert, withSession);
    expect(detail.status, detail.body.slice(-1500)).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(detail.body)?.[1] ?? "";
    expect(csrf).not.toBe("");
    const form: [string, string][] = [
      ...withSession,
      ["Origin", `https://127.0.0.1:${port}`],
      ["Content-Type", "application/x-www-form-urlencoded"],
    ];
    const noCsrf = await send(`${TASKS}/${ns.name}/visible-task/run`, proxyCert, form, "_csrf=wrong");
    expect(noCsrf.status).toBe(403);
    const run = await send(`${TASKS}/${ns.name}/visible-task/run`, proxyCert, form, `_csrf=${csrf}`);
    expect(run.status).toBe(303);
    const annotations = JSON.parse(
      (
        await kubectl(["get", "scheduledtask", "visible-task", "-o", "jsonpath={.metadata.annotations}"], {
          namespace: ns.name,
        })
      ).stdout || "{}",
    ) as Record<string, string>;
    expect(annotations["cronscale.io/run-now"]).toBeTruthy();

    // Delete: nobody granted it; the API server's 403 names bob, and the task stays.
    const del = await send(`${TASKS}/${ns.name}/visible-task/delete`, proxyCert, form, `_csrf=${csrf}`);
    expect(del.status).toBe(403);
    expect(del.body).toMatch(/proxy:bob.*cannot delete/s);
    await kubectl(["get", "scheduledtask", "visible-task"], { namespace: ns.name });
  }, 60_000);

  it("gives no identity to the same headers without the proxy's certificate", async () => {
    const direct = await send(`${TASKS}?namespace=${ns.name}`, undefined, BOB);
    expect(direct.status).toBe(303);
    expect(direct.location).toContain("/dashboard/sign-in");
    const partial = await send(`${TASKS}/results?namespace=${ns.name}`, undefined, [
      ...BOB,
      ["X-Partial", "1"],
    ]);
    expect(partial.status).toBe(401);
    const spoofed = await send(`${TASKS}?namespace=${ns.name}`, spoofCert, BOB);
    expect(spoofed.status).toBe(303);
    expect(spoofed.location).toContain("/dashboard/sign-in");
  });
});
