import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { findHelm } from "../../hack/gen/crds.ts";

// dashboard.authProxy: the --auth-proxy-* and --tls-* flags, the CA and the serving certificate as
// mounted files, and `impersonate` for the dashboard's ServiceAccount only when the mode is on.

const chart = fileURLToPath(new URL("../../charts/cronscale", import.meta.url));
const helm = findHelm();

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests, read by path
function render(sets: string[]): any[] {
  const out = execFileSync(helm!, ["template", "cs", chart, ...sets.flatMap((s) => ["--set", s])], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return parseAllDocuments(out).map((d) => d.toJS());
}
const impersonation = (docs: { kind?: string; rules?: { verbs: string[] }[] }[]) =>
  docs.filter((d) => d?.kind === "ClusterRole" && d.rules?.some((r) => r.verbs.includes("impersonate")));

const on = [
  "dashboard.enabled=true",
  "dashboard.tls.secretName=dash-tls",
  "dashboard.authProxy.enabled=true",
  "dashboard.authProxy.clientCAConfigMap=proxy-ca",
  "dashboard.authProxy.allowedNames={front-proxy}",
];

describe.skipIf(!helm)("chart: dashboard authenticating proxy", () => {
  it("is off by default: no flags, no impersonation", () => {
    const docs = render(["dashboard.enabled=true"]);
    const pod = docs.find((d) => d?.kind === "Deployment" && d.metadata.name === "cs-cronscale-dashboard")
      .spec.template.spec;
    expect(pod.containers[0].args.filter((a: string) => /^--(auth-proxy|tls)/.test(a))).toEqual([]);
    expect(impersonation(docs)).toEqual([]);
  });

  it("passes the flags, mounts the CA and certificate, and grants impersonate on users and groups only", () => {
    const docs = render(on);
    const pod = docs.find((d) => d?.kind === "Deployment" && d.metadata.name === "cs-cronscale-dashboard")
      .spec.template.spec;
    expect(pod.containers[0].args).toEqual(
      expect.arrayContaining([
        "--tls-cert-file=/etc/cronscale/tls/tls.crt",
        "--auth-proxy-client-ca-file=/etc/cronscale/auth-proxy-ca/ca.crt",
        "--auth-proxy-allowed-names=front-proxy",
        "--auth-proxy-user-headers=X-Remote-User",
        "--auth-proxy-group-headers=X-Remote-Group",
      ]),
    );
    expect(pod.containers[0].readinessProbe.httpGet.scheme).toBe("HTTPS");
    expect(pod.volumes).toEqual(
      expect.arrayContaining([
        { name: "tls", secret: { secretName: "dash-tls" } },
        {
          name: "auth-proxy-ca",
          configMap: { name: "proxy-ca", items: [{ key: "ca.crt", path: "ca.crt" }] },
        },
      ]),
    );
    const roles = impersonation(docs);
    expect(roles.map((r) => r.rules)).toEqual([
      [{ apiGroups: [""], resources: ["users", "groups"], verbs: ["impersonate"] }],
    ]);
    const extras = impersonation(render([...on, "dashboard.authProxy.extraHeadersPrefix=X-Remote-Extra-"]));
    expect(extras[0]?.rules).toHaveLength(2);
  });

  it("refuses the mode without TLS or without the CA", () => {
    expect(() => render(["dashboard.enabled=true", "dashboard.authProxy.enabled=true"])).toThrow(
      /tls.secretName/,
    );
    expect(() => render(on.filter((s) => !s.includes("clientCAConfigMap")))).toThrow(/clientCAConfigMap/);
  });
});
