import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { findHelm } from "../../hack/gen/crds.ts";

// The chart's optional dashboard: off by default; when on, its own Deployment whose pods the
// operator's selector never matches, and a ServiceAccount that may only list and watch the kinds
// of the shared lists (viewers' tokens carry every other permission the dashboard uses), or
// nothing at all without the shared caches.

const chart = fileURLToPath(new URL("../../charts/cronscale", import.meta.url));
const helm = findHelm();

type Obj = {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  subjects?: { name: string }[];
  // biome-ignore lint/suspicious/noExplicitAny: rendered manifests, read by path
  spec?: any;
};

function render(sets: string[]): Obj[] {
  const out = execFileSync(helm!, ["template", "cs", chart, ...sets.flatMap((s) => ["--set", s])], {
    encoding: "utf8",
  });
  return parseAllDocuments(out)
    .map((d) => d.toJS())
    .filter(Boolean);
}

describe.skipIf(!helm)("chart: dashboard", () => {
  it("is off by default", () => {
    expect(render([]).filter((o) => o.metadata.name.endsWith("-dashboard"))).toEqual([]);
  });

  it("runs the image's dashboard entry with its own ServiceAccount and no RBAC without the shared cache", () => {
    const objs = render([
      "dashboard.enabled=true",
      "dashboard.sharedTaskCache=false",
      "dashboard.sharedPlatformCache=false",
      "dashboard.namespaces={team-a,team-b}",
      "dashboard.replicas=2",
    ]);
    const deps = objs.filter((o) => o.kind === "Deployment");
    const dash = deps.find((d) => d.metadata.name === "cs-cronscale-dashboard");
    const op = deps.find((d) => d !== dash);
    const pod = dash?.spec.template.spec;
    expect(pod.containers[0].command).toEqual(["node", "dist/dashboard/main.js"]);
    expect(pod.containers[0].args).toContain("--namespaces=team-a,team-b");
    expect(pod.containers[0].args).toContain("--no-task-cache");
    expect(pod.containers[0].args).toContain("--no-platform-cache");
    expect(pod.serviceAccountName).toBe("cs-cronscale-dashboard");
    expect(pod.containers[0].securityContext.readOnlyRootFilesystem).toBe(true);
    // Neither Deployment's selector matches the other's pods.
    const matches = (sel: Record<string, string>, labels: Record<string, string>) =>
      Object.entries(sel).every(([k, v]) => labels[k] === v);
    expect(matches(op?.spec.selector.matchLabels, pod && dash?.spec.template.metadata.labels)).toBe(false);
    expect(matches(dash?.spec.selector.matchLabels, op?.spec.template.metadata.labels)).toBe(false);
    const bindings = objs.filter((o) => o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding");
    expect(bindings.flatMap((b) => b.subjects ?? []).map((s) => s.name)).not.toContain(
      "cs-cronscale-dashboard",
    );
    expect(
      objs.find((o) => o.kind === "Service" && o.metadata.name === "cs-cronscale-dashboard")?.spec
        .sessionAffinity,
    ).toBe("ClientIP");
  });

  it("with the shared lists, lets the ServiceAccount list and watch their kinds only, in the offered namespaces", () => {
    type Rbac = Obj & { metadata: { namespace?: string }; rules?: unknown[]; roleRef?: { name: string } };
    const dashboardRbac = (objs: Obj[]) =>
      (objs as Rbac[]).filter(
        (o) => o.kind.includes("Role") && o.metadata.name.startsWith("cs-cronscale-dashboard"),
      );
    const scoped = dashboardRbac(render(["dashboard.enabled=true", "dashboard.namespaces={team-a,team-b}"]));
    expect(scoped.map((o) => `${o.kind} ${o.metadata.namespace}`).sort()).toEqual([
      "Role team-a",
      "Role team-b",
      "RoleBinding team-a",
      "RoleBinding team-b",
    ]);
    for (const r of scoped.filter((o) => o.kind === "Role"))
      expect(r.rules).toEqual([
        {
          apiGroups: ["cronscale.io"],
          resources: ["scheduledtasks", "scaleplatforms", "scaleplatformbackups", "scaleplatformrestores"],
          verbs: ["list", "watch"],
        },
      ]);
    expect(scoped.find((o) => o.kind === "RoleBinding")?.subjects?.map((x) => x.name)).toEqual([
      "cs-cronscale-dashboard",
    ]);
    const wide = dashboardRbac(render(["dashboard.enabled=true"]));
    expect(wide.map((o) => o.kind).sort()).toEqual(["ClusterRole", "ClusterRoleBinding"]);
    // Each list on its own: only its kinds.
    const tasksOnly = dashboardRbac(
      render(["dashboard.enabled=true", "dashboard.sharedPlatformCache=false"]),
    );
    expect(tasksOnly.find((o) => o.kind === "ClusterRole")?.rules).toEqual([
      { apiGroups: ["cronscale.io"], resources: ["scheduledtasks"], verbs: ["list", "watch"] },
    ]);
  });

  it("gives the dashboard the history endpoint with its CA, and the installation's prices as the operator's", () => {
    const objs = render([
      "dashboard.enabled=true",
      "platform.prices.standard=149",
      "platform.prices.perGiBMemory=5",
    ]);
    const deps = objs.filter((o) => o.kind === "Deployment");
    const dash = deps.find((d) => d.metadata.name === "cs-cronscale-dashboard")?.spec.template.spec;
    const op = deps.find((d) => d.metadata.name === "cs-cronscale")?.spec.template.spec;
    const args: string[] = dash.containers[0].args;
    expect(args).toContain("--history-url=https://cs-cronscale-history.default.svc:8081");
    expect(args).toContain("--history-ca-file=/etc/cronscale/history-ca/ca.crt");
    expect(args).toEqual(expect.arrayContaining(["--prices-standard=149", "--prices-per-gib-memory=5"]));
    const ca = dash.volumes.find((v: { name: string }) => v.name === "history-ca");
    expect(ca.secret).toEqual({
      secretName: "cs-cronscale-history-tls",
      optional: true,
      items: [{ key: "ca.crt", path: "ca.crt" }],
    });
    const env: { name: string; value?: string }[] = op.containers[0].env;
    expect(env).toEqual(
      expect.arrayContaining([
        { name: "CRONSCALE_CONTROLLERS__SCALE_PLATFORM__PRICES__STANDARD", value: "149" },
        { name: "CRONSCALE_CONTROLLERS__SCALE_PLATFORM__PRICES__PER_GIB_MEMORY", value: "5" },
      ]),
    );
  });
});
