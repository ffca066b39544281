import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { KubeTransport } from "../../../src/runtime/rest.ts";
import { kubeConfig, useNamespace } from "../../support/cluster.ts";

// The transport authenticating as a pod does (a ServiceAccount token in a file, the cluster's CA
// from a file), against the real API server: the token file is read again when due, and a token
// the server no longer accepts (its ServiceAccount deleted) is replaced by the file's new one
// within the same request (401 → credentials prepared anew → one retry).

const ns = useNamespace("rt-token");
const admin = KubeTransport.create(kubeConfig());

async function serviceAccountToken(name: string): Promise<string> {
  await admin.request("POST", `/api/v1/namespaces/${ns.name}/serviceaccounts`, {
    body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name } },
  });
  const tr = await admin.request<{ status: { token: string } }>(
    "POST",
    `/api/v1/namespaces/${ns.name}/serviceaccounts/${name}/token`,
    {
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds: 600 },
      },
    },
  );
  return tr.status.token;
}

async function whoAmI(t: KubeTransport): Promise<string | undefined> {
  const r = await t.request<{ status?: { userInfo?: { username?: string } } }>(
    "POST",
    "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    { body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" } },
  );
  return r.status?.userInfo?.username;
}

describe("KubeTransport with a ServiceAccount token file", () => {
  it("reads the file again when due and retries a request once after a 401 with the rotated token", {
    timeout: 60_000,
  }, async () => {
    const base = kubeConfig();
    const cluster = base.getCurrentCluster();
    if (!cluster) throw new Error("no current cluster");
    const dir = mkdtempSync(join(tmpdir(), "rt-token-"));
    const caFile = join(dir, "ca.crt");
    const tokenFile = join(dir, "token");
    writeFileSync(caFile, Buffer.from(cluster.caData ?? "", "base64"));
    writeFileSync(tokenFile, await serviceAccountToken("first"));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "c", server: cluster.server, caFile, skipTLSVerify: false }],
      users: [{ name: "pod", authProvider: { name: "tokenFile", config: { tokenFile } } }],
      contexts: [{ name: "pod", cluster: "c", user: "pod" }],
      currentContext: "pod",
    });
    let now = 0;
    const t = KubeTransport.create(kc, { auth: { now: () => now } });
    expect(await whoAmI(t)).toBe(`system:serviceaccount:${ns.name}:first`);

    // Rotated on disk: the cached token still serves until the refresh interval has passed.
    writeFileSync(tokenFile, await serviceAccountToken("second"));
    expect(await whoAmI(t)).toBe(`system:serviceaccount:${ns.name}:first`);
    now += 61_000;
    expect(await whoAmI(t)).toBe(`system:serviceaccount:${ns.name}:second`);

    // Rotated again and the cached token revoked: the 401 brings the file's new token in (the API
    // server keeps accepting a token it authenticated for up to 10 s: its token cache).
    writeFileSync(tokenFile, await serviceAccountToken("third"));
    await admin.request("DELETE", `/api/v1/namespaces/${ns.name}/serviceaccounts/second`);
    // (The clock stands still: only the 401 can replace the cached token, and no call may fail.)
    const failures: unknown[] = [];
    const attempt = () =>
      whoAmI(t).catch((err: unknown) => {
        failures.push(err);
        return "failed";
      });
    await expect
      .poll(attempt, { timeout: 30_000, interval: 500 })
      .toBe(`system:serviceaccount:${ns.name}:third`);
    expect(failures).toEqual([]);
  });
});
