import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { findHelm } from "../../hack/gen/crds.ts";

// The chart's dashboard.oidc values become the dashboard's --oidc-* flags; the client secret and
// a private CA arrive as mounted files, never as arguments or environment values.

const chart = fileURLToPath(new URL("../../charts/cronscale", import.meta.url));
const helm = findHelm();

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests, read by path
function dashboardPod(sets: string[]): any {
  const out = execFileSync(helm!, ["template", "cs", chart, ...sets.flatMap((s) => ["--set", s])], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return parseAllDocuments(out)
    .map((d) => d.toJS())
    .find((o) => o?.kind === "Deployment" && o.metadata.name === "cs-cronscale-dashboard")?.spec.template
    .spec;
}

const base = [
  "dashboard.enabled=true",
  "dashboard.oidc.enabled=true",
  "dashboard.oidc.issuerUrl=https://login.example.com/realms/shop",
  "dashboard.oidc.clientId=cronscale",
  "dashboard.oidc.redirectUrl=https://dash.example.com/dashboard/sign-in/oidc/callback",
];

describe.skipIf(!helm)("chart: dashboard OIDC", () => {
  it("passes the issuer, client and redirect URL as flags, the secret and CA as mounted files", () => {
    const pod = dashboardPod([
      ...base,
      "dashboard.oidc.clientSecret.secretName=dash-oidc",
      "dashboard.oidc.caConfigMap=dash-oidc-ca",
      "dashboard.oidc.name=Shop SSO",
    ]);
    const args: string[] = pod.containers[0].args;
    expect(args).toEqual(
      expect.arrayContaining([
        "--oidc-issuer-url=https://login.example.com/realms/shop",
        "--oidc-client-id=cronscale",
        "--oidc-redirect-url=https://dash.example.com/dashboard/sign-in/oidc/callback",
        "--oidc-scopes=openid profile email",
        "--oidc-name=Shop SSO",
        "--oidc-client-secret-file=/etc/cronscale/oidc/client-secret",
        "--oidc-ca-file=/etc/cronscale/oidc-ca/ca.crt",
      ]),
    );
    expect(pod.volumes).toEqual(
      expect.arrayContaining([
        {
          name: "oidc-client-secret",
          secret: { secretName: "dash-oidc", items: [{ key: "client-secret", path: "client-secret" }] },
        },
        { name: "oidc-ca", configMap: { name: "dash-oidc-ca", items: [{ key: "ca.crt", path: "ca.crt" }] } },
      ]),
    );
    expect(JSON.stringify(pod.containers[0].env ?? [])).not.toContain("SECRET");
  });

  it("is off by default, a public client has no secret file, and a missing issuer is refused", () => {
    const off = dashboardPod(["dashboard.enabled=true"]);
    expect(off.containers[0].args.filter((a: string) => a.startsWith("--oidc"))).toEqual([]);
    const pub = dashboardPod(base);
    expect(pub.containers[0].args.some((a: string) => a.startsWith("--oidc-client-secret-file"))).toBe(false);
    // No OIDC file at all (the other volumes — tmp, the history endpoint's CA — are not OIDC's).
    expect(
      pub.volumes.map((v: { name: string }) => v.name).filter((n: string) => n.startsWith("oidc")),
    ).toEqual([]);
    expect(() => dashboardPod(["dashboard.enabled=true", "dashboard.oidc.enabled=true"])).toThrow(
      /dashboard.oidc.issuerUrl is required/,
    );
    expect(() => dashboardPod([...base, "dashboard.oidc.issuerUrl=http://plain.example.com"])).toThrow(
      /issuerUrl/,
    );
  });
});
