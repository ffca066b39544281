import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../log.ts";
import { FakeKubeClient } from "../runtime/fake-client.ts";
import type { KubeObject } from "../runtime/types.ts";
import { archiveDsn, ensureArchiveSecret, ensureHistoryTlsSecret } from "./secrets.ts";

const log = silentLogger();
const o = { namespace: "ops", name: "cs-cronscale-archive", host: "cs-cronscale-archive.ops.svc", log };
type Secret = KubeObject & { type?: string; data?: Record<string, string> };
const b64 = (s: string) => Buffer.from(s).toString("base64");
const unb64 = (s: string | undefined) => Buffer.from(s ?? "", "base64").toString();

describe("ensureArchiveSecret", () => {
  it("makes the Secret once with a random password, and returns the same DSN ever after", async () => {
    const client = new FakeKubeClient();
    const dsn = await ensureArchiveSecret(client, o);
    expect(dsn).toMatch(
      /^postgres:\/\/cronscale:[A-Za-z0-9_-]{32}@cs-cronscale-archive\.ops\.svc:5432\/cronscale$/,
    );
    const secret = await client.get<Secret>("v1", "Secret", "ops", o.name);
    expect(unb64(secret?.data?.dsn)).toBe(dsn);
    expect(unb64(secret?.data?.user)).toBe("cronscale");
    expect(dsn).toContain(`:${unb64(secret?.data?.password)}@`);
    // No owner: nothing deletes it with the operator or the release.
    expect(secret?.metadata.ownerReferences).toBeUndefined();
    expect(await ensureArchiveSecret(client, o)).toBe(dsn);
    expect(await ensureArchiveSecret(new FakeKubeClient(), o)).not.toBe(dsn);
  });

  it("replicas starting together agree on one password", async () => {
    const client = new FakeKubeClient();
    const all = await Promise.all([1, 2, 3].map(() => ensureArchiveSecret(client, o)));
    expect(new Set(all).size).toBe(1);
  });

  it("takes a Secret that exists (a user's, or one an earlier chart made) without writing to it", async () => {
    const client = new FakeKubeClient();
    await client.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: o.name, namespace: "ops" },
      data: { password: b64("p@ss word") },
    });
    expect(await ensureArchiveSecret(client, o)).toBe(archiveDsn(o.host, "p@ss word"));
    expect(archiveDsn(o.host, "p@ss word")).toBe(
      "postgres://cronscale:p%40ss%20word@cs-cronscale-archive.ops.svc:5432/cronscale",
    );
    const after = await client.get<Secret>("v1", "Secret", "ops", o.name);
    expect(Object.keys(after?.data ?? {})).toEqual(["password"]);

    const withDsn = new FakeKubeClient();
    await withDsn.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: o.name, namespace: "ops" },
      data: { password: b64("x"), dsn: b64("postgres://u:x@db.example:5432/d") },
    });
    expect(await ensureArchiveSecret(withDsn, o)).toBe("postgres://u:x@db.example:5432/d");

    const empty = new FakeKubeClient();
    await empty.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: o.name, namespace: "ops" },
      data: {},
    });
    await expect(ensureArchiveSecret(empty, o)).rejects.toThrow(/neither a dsn nor a password/);
  });
});

describe("ensureHistoryTlsSecret", () => {
  const t = {
    namespace: "ops",
    name: "cs-cronscale-history-tls",
    dnsNames: ["cs-cronscale-history.ops.svc"],
    log,
  };

  it("makes a CA and a serving certificate once, in a kubernetes.io/tls Secret", async () => {
    const client = new FakeKubeClient();
    const pem = await ensureHistoryTlsSecret(client, t);
    const secret = await client.get<Secret>("v1", "Secret", "ops", t.name);
    expect(secret?.type).toBe("kubernetes.io/tls");
    const ca = new X509Certificate(unb64(secret?.data?.["ca.crt"]));
    const cert = new X509Certificate(pem.cert);
    expect(cert.checkIssued(ca) && cert.verify(ca.publicKey)).toBe(true);
    expect(cert.checkHost("cs-cronscale-history.ops.svc")).toBe("cs-cronscale-history.ops.svc");
    expect(cert.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(unb64(secret?.data?.["tls.key"])).toBe(pem.key);
    expect(await ensureHistoryTlsSecret(client, t)).toEqual(pem);
  });
});
