import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { loadConfig } from "../../src/config.ts";
import { findHelm, renderInstall } from "./crds.ts";

// The Helm chart rendered by the real helm binary (from the cluster build's cache). Without it
// these tests are skipped and say so: run `hack/cluster/build.sh helm` first.

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const CHART = join(ROOT, "charts/cronscale");
const helm = findHelm();
if (!helm)
  console.warn("chart tests skipped: no helm binary (HELM, BIN_DIR or `hack/cluster/build.sh helm`)");

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests
type Doc = any;

function template(...set: string[]): Doc[] {
  const out = execFileSync(
    helm!,
    ["template", "cs", CHART, "--namespace", "ops", ...set.flatMap((s) => ["--set", s])],
    {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  return parseAllDocuments(out)
    .map((d) => d.toJS())
    .filter(Boolean);
}

describe.skipIf(!helm)("charts/cronscale", () => {
  it("passes helm lint --strict", () => {
    const out = execFileSync(helm!, ["lint", "--strict", CHART], { encoding: "utf8" });
    expect(out).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it("runs the operator PSS-restricted: non-root, read-only root, no privilege escalation, caps dropped, seccomp", () => {
    const dep = template().find((d) => d.kind === "Deployment");
    const pod = dep.spec.template.spec;
    const c = pod.containers[0];
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(c.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(c.livenessProbe.httpGet.path).toBe("/healthz");
    expect(c.readinessProbe.httpGet.path).toBe("/readyz");
    const env = Object.fromEntries(c.env.map((e: Doc) => [e.name, e.value ?? e.valueFrom]));
    expect(env.CRONSCALE_LEADER_ELECTION__ENABLED).toBe("true");
    expect(env.CRONSCALE_CONTROLLERS__SCHEDULED_TASK__IMAGES__PYTHON).toBe(
      "docker.io/library/python:3.13-slim",
    );
    expect(env.POD_NAMESPACE).toEqual({ fieldRef: { fieldPath: "metadata.namespace" } });
  });

  it("sets env the operator's config accepts, with the values carried through", () => {
    const dep = template(
      "watchNamespace=shop",
      "taskImages.go=local/go:1",
      "leaderElection.enabled=false",
    ).find((d) => d.kind === "Deployment");
    const env: Record<string, string> = { POD_NAME: "op-0", POD_NAMESPACE: "ops" };
    for (const e of dep.spec.template.spec.containers[0].env)
      if (e.value !== undefined) env[e.name] = e.value;
    const cfg = loadConfig([], env);
    expect(cfg.namespace).toBe("shop");
    expect(cfg.leaderElection).toMatchObject({ enabled: false, namespace: "ops", identity: "op-0" });
    expect(cfg.controllers.scheduledTask.images.go).toBe("local/go:1");
    expect(cfg.httpPort).toBe(8080);
  });

  it("grants no wildcards, and leases only through a Role in the release namespace", () => {
    const docs = template();
    const cluster = docs.find((d) => d.kind === "ClusterRole" && d.metadata.name === "cs-cronscale");
    const role = docs.find((d) => d.kind === "Role");
    const users = docs.filter((d) => d.kind === "ClusterRole" && d.metadata.name !== "cs-cronscale");
    for (const r of [...cluster.rules, ...role.rules, ...users.flatMap((u) => u.rules)])
      expect([...r.apiGroups, ...r.resources, ...r.verbs]).not.toContain("*");
    expect(cluster.rules.flatMap((r: Doc) => r.resources)).not.toContain("leases");
    expect(role.metadata.namespace).toBe("ops");
    expect(role.rules).toEqual([
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
    ]);
    const pods = cluster.rules.find((r: Doc) => r.resources.includes("pods"));
    // Pods are read for task output and deleted only when a timed-out restore cutover rolls back
    // (a StatefulSet does not replace a never-ready pod after its template is reverted); never created.
    expect(pods.verbs).toEqual(["get", "list", "watch", "delete"]);
    // Notifications are created and deleted, never rewritten: only their status changes.
    const notes = cluster.rules.find((r: Doc) => r.resources.includes("notifications"));
    expect(notes.verbs).toEqual(["get", "list", "watch", "create", "delete"]);
  });

  it("templates the generated CRDs (upgraded by helm upgrade), kept on uninstall unless crds.keep is false", () => {
    const crds = (...set: string[]) => template(...set).filter((d) => d.kind === "CustomResourceDefinition");
    const all = crds();
    expect(all.map((d) => d.metadata.name).sort()).toEqual(
      [
        "notifications",
        "scaleplatformbackups",
        "scaleplatformrestores",
        "scaleplatforms",
        "scheduledtasks",
        "taskexecutions",
      ].map((p) => `${p}.cronscale.io`),
    );
    for (const d of all) {
      expect(d.metadata.annotations).toEqual({
        "helm.sh/resource-policy": "keep",
        "argocd.argoproj.io/sync-options": "Prune=false,Delete=false",
      });
      expect(d.metadata.labels).toMatchObject({
        "app.kubernetes.io/instance": "cs",
        "app.kubernetes.io/part-of": "cronscale",
      });
    }
    for (const d of crds("crds.keep=false")) expect(d.metadata.annotations).toBeUndefined();
    expect(crds("crds.enabled=false")).toEqual([]);
    // Nothing left in crds/, which Helm would install before the templates (and never upgrade).
    expect(existsSync(join(CHART, "crds"))).toBe(false);
  });

  it("serves the history endpoint over TLS: a certificate the operator makes, or the user's Secret", () => {
    const docs = template();
    expect(docs.some((d) => d.kind === "Secret")).toBe(false);
    const operator = docs.find((d) => d.kind === "Deployment" && d.metadata.name === "cs-cronscale");
    const env = operator.spec.template.spec.containers[0].env;
    expect(env).toContainEqual({
      name: "CRONSCALE_ARCHIVE__TLS__SECRET__NAME",
      value: "cs-cronscale-history-tls",
    });
    expect(env).toContainEqual({
      name: "CRONSCALE_ARCHIVE__TLS__SECRET__DNS_NAMES",
      value: "cs-cronscale-history.ops.svc,cs-cronscale-history.ops,cs-cronscale-history,localhost",
    });
    expect(operator.spec.template.spec.volumes.map((v: Doc) => v.name)).not.toContain("history-tls");
    // The user's own Secret instead (e.g. cert-manager's), mounted and re-read when renewed.
    const own = template("archive.tls.existingSecret=mine");
    const ownPod = own.find((d) => d.kind === "Deployment" && d.metadata.name === "cs-cronscale").spec
      .template.spec;
    expect(ownPod.volumes).toContainEqual({ name: "history-tls", secret: { secretName: "mine" } });
    expect(ownPod.containers[0].env).toContainEqual({
      name: "CRONSCALE_ARCHIVE__TLS__CERT_FILE",
      value: "/etc/cronscale/history-tls/tls.crt",
    });
    // No archive: no endpoint, no certificate.
    const none = template("archive.postgres.enabled=false");
    const noneEnv = none.find((d) => d.kind === "Deployment").spec.template.spec.containers[0].env;
    expect(noneEnv.map((e: Doc) => e.name)).not.toContain("CRONSCALE_ARCHIVE__TLS__SECRET__NAME");
  });

  it("serves the history endpoint through the API server: APIService, readers, front-proxy settings", () => {
    const docs = template();
    const api = docs.find((d) => d.kind === "APIService");
    expect(api).toMatchObject({
      metadata: { name: "v1alpha1.history.cronscale.io" },
      spec: {
        group: "history.cronscale.io",
        version: "v1alpha1",
        service: { name: "cs-cronscale-history", namespace: "ops", port: 8081 },
      },
    });
    // The operator keeps the caBundle (from the mounted ca.crt), so the chart leaves it out.
    expect(api.spec.caBundle).toBeUndefined();
    const env = docs.find((d) => d.kind === "Deployment" && d.metadata.name === "cs-cronscale").spec.template
      .spec.containers[0].env;
    expect(env).toContainEqual({
      name: "CRONSCALE_ARCHIVE__API_SERVICE",
      value: "v1alpha1.history.cronscale.io",
    });
    // Its CA: ca.crt of the Secret the operator makes, or of the user's own Secret (a file).
    expect(env).toContainEqual({
      name: "CRONSCALE_ARCHIVE__TLS__SECRET__NAME",
      value: "cs-cronscale-history-tls",
    });
    const own = template("archive.tls.existingSecret=mine").find(
      (d) => d.kind === "Deployment" && d.metadata.name === "cs-cronscale",
    ).spec.template.spec.containers[0].env;
    expect(own).toContainEqual({
      name: "CRONSCALE_ARCHIVE__TLS__CA_FILE",
      value: "/etc/cronscale/history-tls/ca.crt",
    });
    const role = docs.find((d) => d.kind === "ClusterRole" && d.metadata.name === "cs-cronscale");
    expect(role.rules).toContainEqual({
      apiGroups: ["apiregistration.k8s.io"],
      resources: ["apiservices"],
      resourceNames: ["v1alpha1.history.cronscale.io"],
      verbs: ["get", "patch"],
    });
    const readers = docs.find(
      (d) => d.kind === "ClusterRoleBinding" && d.metadata.name === "cs-cronscale-history-reader",
    );
    expect(readers.subjects).toEqual([
      { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:authenticated" },
    ]);
    const auth = docs.find(
      (d) => d.kind === "RoleBinding" && d.metadata.name === "cs-cronscale-history-auth-reader",
    );
    expect(auth).toMatchObject({
      metadata: { namespace: "kube-system" },
      roleRef: { name: "extension-apiserver-authentication-reader" },
    });
    // Turned off, or no archive: none of it.
    for (const off of [
      template("archive.apiService.enabled=false"),
      template("archive.postgres.enabled=false"),
    ]) {
      expect(
        off.some((d) => d.kind === "APIService" || d.metadata?.name === "cs-cronscale-history-reader"),
      ).toBe(false);
    }
  });

  it("refuses values the schema does not allow", () => {
    expect(() => template("image.pullPolicy=Sometimes")).toThrow(/pullPolicy/);
    expect(() => template("replicaCount=-1")).toThrow(/replicaCount/);
    expect(() => template("taskImages.ruby=ruby:3")).toThrow(/ruby/);
  });

  it("manifests/install.yaml is the chart rendered (not stale)", () => {
    const path = join(ROOT, "manifests/install.yaml");
    expect(existsSync(path), "manifests/install.yaml missing: run node hack/gen/crds.ts").toBe(true);
    expect(readFileSync(path, "utf8")).toBe(renderInstall(helm!));
  });
});
