import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { beforeAll, describe, expect, it } from "vitest";
import { clusterEnv, kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { addonEnv, apply, deploymentReady, nodeImages, skipReason, webApp } from "./support.ts";

// ingress + cert-manager add-ons: Traefik on loopback routes by Host header to a pod, and over
// TLS serves the certificate cert-manager issued from the cluster's CA issuer into the Secret the
// Ingress names; the test verifies that chain against the CA.

const reason = await skipReason("ingress", "cert-manager");

interface Answer {
  status: number;
  body: string;
  peer?: X509Certificate;
  authorized?: boolean;
}

/** One GET through the Ingress controller's loopback port, with Host (and SNI for TLS). */
function get(port: number, host: string, path: string, tls?: { ca?: string }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const opts = {
      host: "127.0.0.1",
      port,
      path,
      headers: { Host: host },
      timeout: 10_000,
      agent: false as const,
    };
    const onResponse = (res: http.IncomingMessage): void => {
      let body = "";
      res.on("data", (d: Buffer) => {
        body += d.toString();
      });
      res.on("end", () => {
        const sock = res.socket as TLSSocket;
        const raw = tls ? sock.getPeerCertificate?.()?.raw : undefined;
        resolve({
          status: res.statusCode ?? 0,
          body,
          peer: raw ? new X509Certificate(raw) : undefined,
          authorized: tls ? sock.authorized : undefined,
        });
      });
    };
    const req = tls
      ? https.get({ ...opts, servername: host, ...(tls.ca ? { ca: tls.ca } : {}) }, onResponse)
      : http.get(opts, onResponse);
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
  });
}

describe.skipIf(reason)("ingress add-on (Traefik) with cert-manager", () => {
  const ns = useNamespace("ing");
  let httpPort = 0;
  let httpsPort = 0;
  let host = "";

  beforeAll(async () => {
    const env = addonEnv("ingress.env") ?? {};
    httpPort = Number(env.INGRESS_HTTP_PORT);
    httpsPort = Number(env.INGRESS_HTTPS_PORT);
    host = `site.${ns.name}.example.test`;
    const python = nodeImages("python").python;
    await apply(ns.name, [
      ...webApp("site", python),
      {
        apiVersion: "cert-manager.io/v1",
        kind: "Certificate",
        metadata: { name: "site" },
        spec: {
          secretName: "site-tls",
          dnsNames: [host],
          issuerRef: { group: "cert-manager.io", kind: "ClusterIssuer", name: "cronscale-ca" },
        },
      },
      {
        apiVersion: "networking.k8s.io/v1",
        kind: "Ingress",
        metadata: { name: "site" },
        spec: {
          tls: [{ hosts: [host], secretName: "site-tls" }],
          rules: [
            {
              host,
              http: {
                paths: [
                  {
                    path: "/",
                    pathType: "Prefix",
                    backend: { service: { name: "site", port: { number: 80 } } },
                  },
                ],
              },
            },
          ],
        },
      },
    ]);
    await deploymentReady(ns.name, "site");
    await kubectl(["wait", "--for=condition=Ready", "certificate/site", "--timeout=90s"], {
      namespace: ns.name,
      timeoutMs: 100_000,
    });
  }, 240_000);

  it("routes HTTP by Host header to the pod", async () => {
    const pod = (
      await kubectl(["get", "pods", "-l", "app=site", "-o", "jsonpath={.items[0].metadata.name}"], {
        namespace: ns.name,
      })
    ).stdout;
    const ok = await waitFor(
      async () => {
        const a = await get(httpPort, host, "/");
        return a.status === 200 ? a : undefined;
      },
      { timeoutMs: 60_000, what: `HTTP 200 for ${host}` },
    );
    expect(ok.body).toBe(`hello from ${pod}\n`);
    // Another Host matches no rule.
    expect((await get(httpPort, `other.${ns.name}.example.test`, "/")).status).toBe(404);
  }, 90_000);

  it("serves the cert-manager certificate over TLS, chained to the cluster CA", async () => {
    const caPem = readFileSync(join(clusterEnv().STATE_DIR, "addons.d", "cert-manager", "ca.crt"), "utf8");
    const ca = new X509Certificate(caPem);
    // The Secret the Ingress names was written by cert-manager from the CA issuer.
    const secret = JSON.parse(
      (await kubectl(["get", "secret", "site-tls", "-o", "json"], { namespace: ns.name })).stdout,
    ) as { metadata: { annotations: Record<string, string> }; data: Record<string, string> };
    expect(secret.metadata.annotations["cert-manager.io/issuer-name"]).toBe("cronscale-ca");
    const issued = new X509Certificate(Buffer.from(secret.data["tls.crt"] ?? "", "base64"));

    const a = await waitFor(
      async () => {
        const r = await get(httpsPort, host, "/", { ca: caPem });
        return r.status === 200 ? r : undefined;
      },
      { timeoutMs: 60_000, what: `HTTPS 200 for ${host}` },
    );
    expect(a.authorized).toBe(true);
    expect(a.body).toMatch(/^hello from site-[a-z0-9-]+\n$/);
    const peer = a.peer;
    if (!peer) throw new Error("no peer certificate");
    expect(peer.fingerprint256).toBe(issued.fingerprint256);
    expect(peer.subjectAltName).toBe(`DNS:${host}`);
    expect(peer.checkIssued(ca)).toBe(true);
    expect(peer.verify(ca.publicKey)).toBe(true);
    expect(ca.ca).toBe(true);

    // Without the cluster CA the same chain is not trusted.
    await expect(get(httpsPort, host, "/", {})).rejects.toThrow();
  }, 120_000);
});
