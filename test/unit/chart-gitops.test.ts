import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments, stringify } from "yaml";
import { findHelm } from "../../hack/gen/crds.ts";

// A chart GitOps tools can own: Argo CD renders it with `helm template` (no cluster, no lookup)
// on every sync and applies what differs, so the output must be a function of the values alone.
// Every template must render with its features on, and the Argo CD and Flux examples in
// docs/gitops/ must render with the values they carry.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CHART = join(ROOT, "charts/cronscale");
const helm = findHelm();
if (!helm) console.warn("chart GitOps tests skipped: no helm binary (hack/cluster/build.sh helm builds it)");

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests
type Doc = any;

/** Every optional feature on (values that need another feature's values set too). */
const ALL_ON = [
  "namespace.create=true",
  "dashboard.enabled=true",
  "podDisruptionBudget.enabled=true",
  "serviceMonitor.enabled=true",
  "prometheusRule.enabled=true",
  "grafanaDashboard.enabled=true",
];

const tmp = mkdtempSync(join(tmpdir(), "cronscale-chart-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function render(sets: string[] = [], valuesFiles: string[] = []): string {
  return execFileSync(
    helm!,
    [
      "template",
      "cs",
      CHART,
      "--namespace",
      "ops",
      ...valuesFiles.flatMap((f) => ["-f", f]),
      ...sets.flatMap((s) => ["--set", s]),
    ],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
}

const docsOf = (out: string): Doc[] =>
  parseAllDocuments(out)
    .map((d) => d.toJS())
    .filter(Boolean);

/** Template file → the objects it rendered (from helm's "# Source:" comments). */
function bySource(out: string): Map<string, Doc[]> {
  const m = new Map<string, Doc[]>();
  for (const part of out.split(/^---$/m)) {
    const src = /^# Source: cronscale\/(\S+)$/m.exec(part)?.[1];
    if (!src) continue;
    const objs = docsOf(part);
    m.set(src, [...(m.get(src) ?? []), ...objs]);
  }
  return m;
}

/** Metric names the operator registers (prom-client `name: "..."`), plus Prometheus' and Node's. */
function operatorMetrics(): Set<string> {
  const names = new Set(["up"]);
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts"))
        for (const m of readFileSync(p, "utf8").matchAll(/name: "([a-z_]+)"/g)) names.add(m[1]!);
    }
  };
  walk(join(ROOT, "src"));
  return names;
}

/** Metric names a PromQL expression reads (identifiers followed by `{`, `[` or ` ` that are not functions). */
function metricsIn(expr: string): string[] {
  const fns = new Set([
    "absent",
    "sum",
    "max",
    "min",
    "rate",
    "increase",
    "time",
    "histogram_quantile",
    "by",
    "label_values",
  ]);
  return [...expr.matchAll(/\b([a-z_][a-z0-9_]*)\s*\{/g)]
    .map((m) => m[1]!)
    .filter((n) => !fns.has(n))
    .map((n) => n.replace(/_(bucket|sum|count)$/, ""));
}

describe.skipIf(!helm)("a chart GitOps can own", () => {
  it("renders the same bytes twice, with defaults and with every feature on", () => {
    expect(render()).toBe(render());
    expect(render(ALL_ON)).toBe(render(ALL_ON));
  });

  it("generates nothing in templates: no lookup, random values, generated keys or clock", () => {
    const dir = join(CHART, "templates");
    const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) =>
      /\.(ya?ml|tpl|txt)$/.test(f),
    );
    expect(files.length).toBeGreaterThan(10);
    const impure =
      /\b(lookup|randAlphaNum|randAlpha|randNumeric|randAscii|randBytes|randInt|genCA|genSelfSignedCert|genSignedCert|genPrivateKey|derivePassword|uuidv4|now|date)\b/;
    for (const f of files) {
      // Template actions only ({{ ... }}); comments and YAML text may use these words.
      const actions = [
        ...readFileSync(join(dir, f), "utf8").matchAll(/\{\{(?!-?\s*\/\*)([\s\S]*?)\}\}/g),
      ].map((m) => m[1]!);
      expect(
        actions.filter((a) => impure.test(a)),
        f,
      ).toEqual([]);
    }
    // The Secrets the operator reads are not rendered at all.
    expect(docsOf(render(ALL_ON)).filter((d) => d.kind === "Secret")).toEqual([]);
  });

  it("every template renders valid objects with its feature on", () => {
    const out = render(ALL_ON);
    const sources = bySource(out);
    const templates = readdirSync(join(CHART, "templates"), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".yaml"))
      .map((f) => `templates/${f}`);
    for (const t of templates) {
      const objs = sources.get(t) ?? [];
      expect(objs.length, `${t} rendered nothing with ${ALL_ON.join(" ")}`).toBeGreaterThan(0);
      for (const o of objs) {
        expect(o.apiVersion, t).toMatch(/^[a-z0-9.]*\/?v[0-9a-z]+$/);
        expect(o.kind, t).toMatch(/^[A-Z][A-Za-z]+$/);
        expect(o.metadata?.name, t).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
      }
    }
    // Off by default: the Prometheus Operator objects, the dashboard and the PDB.
    const kinds = docsOf(render()).map((d) => d.kind);
    for (const k of ["ServiceMonitor", "PrometheusRule", "PodDisruptionBudget", "ConfigMap"])
      expect(kinds, k).not.toContain(k);
  });

  it("aggregates view and edit roles into Kubernetes' defaults; records stay read-only", () => {
    const docs = docsOf(render());
    const view = docs.find((d) => d.kind === "ClusterRole" && d.metadata.name === "cs-cronscale-view");
    const edit = docs.find((d) => d.kind === "ClusterRole" && d.metadata.name === "cs-cronscale-edit");
    expect(view.metadata.labels).toMatchObject({
      "rbac.authorization.k8s.io/aggregate-to-view": "true",
      "rbac.authorization.k8s.io/aggregate-to-edit": "true",
      "rbac.authorization.k8s.io/aggregate-to-admin": "true",
    });
    expect(edit.metadata.labels).toMatchObject({
      "rbac.authorization.k8s.io/aggregate-to-edit": "true",
      "rbac.authorization.k8s.io/aggregate-to-admin": "true",
    });
    expect(edit.metadata.labels["rbac.authorization.k8s.io/aggregate-to-view"]).toBeUndefined();
    expect(view.rules).toEqual([
      {
        apiGroups: ["cronscale.io"],
        resources: [
          "scheduledtasks",
          "scaleplatforms",
          "scaleplatformbackups",
          "scaleplatformrestores",
          "taskexecutions",
          "notifications",
        ],
        verbs: ["get", "list", "watch"],
      },
    ]);
    expect(edit.rules[0].resources).toEqual([
      "scheduledtasks",
      "scaleplatforms",
      "scaleplatformbackups",
      "scaleplatformrestores",
    ]);
    expect(edit.rules[0].verbs).toContain("create");
    expect(docsOf(render(["rbac.aggregatedRoles=false"])).map((d) => d.metadata.name)).not.toContain(
      "cs-cronscale-edit",
    );
  });

  it("the PodDisruptionBudget selects the operator's pods, by maxUnavailable or minAvailable", () => {
    const pdb = (...s: string[]) =>
      docsOf(render(["podDisruptionBudget.enabled=true", ...s])).find(
        (d) => d.kind === "PodDisruptionBudget",
      );
    const dep = docsOf(render()).find((d) => d.kind === "Deployment");
    expect(pdb().spec).toEqual({
      maxUnavailable: 1,
      selector: { matchLabels: dep.spec.selector.matchLabels },
    });
    expect(pdb("podDisruptionBudget.minAvailable=50%").spec.minAvailable).toBe("50%");
    expect(pdb("podDisruptionBudget.minAvailable=50%").spec.maxUnavailable).toBeUndefined();
  });

  it("the ServiceMonitor scrapes the metrics Service's port; it needs that Service", () => {
    const docs = docsOf(render(["serviceMonitor.enabled=true", "serviceMonitor.labels.release=kps"]));
    const sm = docs.find((d) => d.kind === "ServiceMonitor");
    const svc = docs.find((d) => d.kind === "Service" && d.metadata.name === "cs-cronscale-metrics");
    expect(sm.metadata.labels.release).toBe("kps");
    for (const [k, v] of Object.entries(sm.spec.selector.matchLabels)) expect(svc.metadata.labels[k]).toBe(v);
    expect(svc.spec.ports.map((p: Doc) => p.name)).toContain(sm.spec.endpoints[0].port);
    expect(sm.spec.endpoints[0].honorLabels).toBe(true);
    expect(() => render(["serviceMonitor.enabled=true", "metrics.service.enabled=false"])).toThrow(
      /metrics\.service\.enabled/,
    );
  });

  it("alerts and dashboard read only metrics the operator exports, of this release's job", () => {
    const known = operatorMetrics();
    const docs = docsOf(render(["prometheusRule.enabled=true", "grafanaDashboard.enabled=true"]));
    const rule = docs.find((d) => d.kind === "PrometheusRule");
    const rules = rule.spec.groups.flatMap((g: Doc) => g.rules);
    expect(rules.map((r: Doc) => r.alert)).toEqual(
      expect.arrayContaining([
        "CronscaleOperatorDown",
        "CronscaleNoLeader",
        "CronscaleWalArchiveLag",
        "CronscaleBackupUnhealthy",
        "CronscaleBackupOverdue",
        "CronscaleBackupFailed",
      ]),
    );
    for (const r of rules) {
      expect(r.expr, r.alert).toContain('job="cs-cronscale-metrics"');
      for (const m of metricsIn(r.expr)) expect(known, `${r.alert}: ${m}`).toContain(m);
      expect(r.labels.severity, r.alert).toMatch(/^(critical|warning)$/);
      // Prometheus' own templates survive Helm's.
      if (r.annotations.summary.includes("$labels"))
        expect(r.annotations.summary).toMatch(/\{\{ \$labels\.\w+ \}\}/);
    }
    const cm = docs.find((d) => d.kind === "ConfigMap" && d.metadata.name === "cs-cronscale-dashboard");
    expect(cm.metadata.labels.grafana_dashboard).toBe("1");
    const dash = JSON.parse(cm.data["cronscale.json"]);
    expect(dash.uid).toBe("cronscale-operator");
    const exprs = dash.panels.flatMap((p: Doc) => (p.targets ?? []).map((t: Doc) => t.expr));
    expect(exprs.length).toBeGreaterThan(10);
    for (const e of exprs) {
      expect(e).toContain('job=~"$job"');
      for (const m of metricsIn(e))
        if (!m.startsWith("process_")) expect(known, `dashboard: ${m}`).toContain(m);
    }
    // The docs' example rules and the chart's agree on the alerts they name.
    const backupsDoc = readFileSync(join(ROOT, "docs/backups.md"), "utf8");
    for (const a of [
      "CronscaleWalArchiveLag",
      "CronscaleBackupUnhealthy",
      "CronscaleBackupOverdue",
      "CronscaleBackupFailed",
    ])
      expect(backupsDoc).toContain(a);
    const monitoringDoc = readFileSync(join(ROOT, "docs/monitoring.md"), "utf8");
    for (const r of rules) expect(monitoringDoc, `docs/monitoring.md names ${r.alert}`).toContain(r.alert);
  });

  describe("the GitOps examples in docs/gitops render", () => {
    const example = (f: string): Doc[] => docsOf(readFileSync(join(ROOT, "docs/gitops", f), "utf8"));

    it("Argo CD Application: this chart's path, its values render the same every time", () => {
      const [app] = example("argocd-application.yaml");
      expect(app.kind).toBe("Application");
      expect(app.spec.source.path).toBe("charts/cronscale");
      expect(app.spec.syncPolicy.syncOptions).toContain("ServerSideApply=true");
      const values = join(tmp, "argo-values.yaml");
      writeFileSync(values, stringify(app.spec.source.helm.valuesObject));
      const out = render([], [values]);
      expect(render([], [values])).toBe(out);
      const kinds = docsOf(out).map((d) => d.kind);
      for (const k of [
        "Deployment",
        "PodDisruptionBudget",
        "ServiceMonitor",
        "PrometheusRule",
        "CustomResourceDefinition",
      ])
        expect(kinds).toContain(k);
      expect(docsOf(out).find((d) => d.kind === "Deployment").spec.replicas).toBe(2);
    });

    it("Flux HelmRelease: from a GitRepository of this repository, its values render", () => {
      const docs = example("flux-helmrelease.yaml");
      const repo = docs.find((d) => d.kind === "GitRepository");
      const release = docs.find((d) => d.kind === "HelmRelease");
      expect(release.spec.chart.spec.chart).toBe("./charts/cronscale");
      expect(release.spec.chart.spec.sourceRef).toMatchObject({
        kind: "GitRepository",
        name: repo.metadata.name,
      });
      expect(docs.find((d) => d.kind === "Namespace")?.metadata.name).toBe(release.metadata.namespace);
      const values = join(tmp, "flux-values.yaml");
      writeFileSync(values, stringify(release.spec.values));
      const out = render([], [values]);
      expect(render([], [values])).toBe(out);
      expect(docsOf(out).map((d) => d.kind)).toContain("PrometheusRule");
    });
  });

  it("the values file parses and every documented default is in the schema", () => {
    const values = parse(readFileSync(join(CHART, "values.yaml"), "utf8"));
    const schema = JSON.parse(readFileSync(join(CHART, "values.schema.json"), "utf8"));
    for (const k of Object.keys(values)) expect(Object.keys(schema.properties), k).toContain(k);
    expect(values.crds).toEqual({ enabled: true, keep: true });
  });
});
