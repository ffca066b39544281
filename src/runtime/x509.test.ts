import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import { describe, expect, it } from "vitest";
import { issueServingTls } from "./x509.ts";

describe("issueServingTls", () => {
  const now = new Date("2026-11-28T05:00:00Z");
  const tls = issueServingTls({
    caName: "test CA",
    commonName: "svc",
    dnsNames: ["localhost", "svc.ns.svc"],
    ipAddresses: ["127.0.0.1", "::1"],
    days: 3650,
    now,
  });
  const ca = new X509Certificate(tls.ca);
  const cert = new X509Certificate(tls.cert);

  it("makes a CA and a certificate it signed, for the names and addresses asked", () => {
    expect(ca.ca).toBe(true);
    expect(cert.ca).toBe(false);
    expect(ca.verify(ca.publicKey)).toBe(true);
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.checkHost("svc.ns.svc")).toBe("svc.ns.svc");
    expect(cert.checkHost("other.ns.svc")).toBeUndefined();
    expect(cert.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(cert.checkIP("::1")).toBe("::1");
    expect(cert.subject).toBe("CN=svc");
    expect(cert.issuer).toBe("CN=test CA");
    expect(cert.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]);
    expect(new Date(cert.validFrom).getTime()).toBe(now.getTime() - 3600_000);
    // 2036: past 2049 would need GeneralizedTime, checked below.
    expect(new Date(cert.validTo).toISOString()).toBe("2036-11-25T05:00:00.000Z");
    expect(cert.serialNumber).not.toBe(ca.serialNumber);
  });

  it("writes GeneralizedTime for dates from 2050", () => {
    const late = issueServingTls({
      caName: "c",
      commonName: "s",
      dnsNames: ["s"],
      ipAddresses: [],
      days: 30 * 365,
      now,
    });
    expect(new Date(new X509Certificate(late.cert).validTo).getUTCFullYear()).toBe(2056);
  });

  it("serves TLS a client trusting only the CA accepts, by name and by IP", async () => {
    const server = createServer({ cert: tls.cert, key: tls.key }, (_req, res) => res.end("ok"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const handshake = (servername: string | undefined, trust: string) =>
      new Promise<boolean>((resolve) => {
        const s = connect(
          { host: "127.0.0.1", port, ca: trust, ...(servername ? { servername } : {}) },
          () => {
            resolve(s.authorized);
            s.end();
          },
        );
        s.on("error", () => resolve(false));
      });
    try {
      expect(await handshake("svc.ns.svc", tls.ca)).toBe(true);
      expect(await handshake(undefined, tls.ca)).toBe(true); // 127.0.0.1 (port-forward)
      expect(await handshake("elsewhere.example", tls.ca)).toBe(false);
      const other = issueServingTls({
        caName: "x",
        commonName: "x",
        dnsNames: ["x"],
        ipAddresses: [],
        days: 1,
      });
      expect(await handshake("svc.ns.svc", other.ca)).toBe(false);
    } finally {
      server.close();
    }
  });

  it("passes OpenSSL's strict X.509 checks (RFC 5280 encoding), CA and serving certificate alike", () => {
    const dir = mkdtempSync(join(tmpdir(), "x509-"));
    try {
      writeFileSync(join(dir, "ca.crt"), tls.ca);
      writeFileSync(join(dir, "tls.crt"), tls.cert);
      const verify = (...args: string[]) =>
        execFileSync("openssl", ["verify", "-x509_strict", "-purpose", "sslserver", ...args], {
          encoding: "utf8",
          stdio: "pipe",
        });
      // Throws (non-zero exit) on any encoding or chain error; prints "<file>: OK" when valid.
      expect(verify("-CAfile", join(dir, "ca.crt"), join(dir, "tls.crt"))).toContain("tls.crt: OK");
      expect(verify("-CAfile", join(dir, "ca.crt"), join(dir, "ca.crt"))).toContain("ca.crt: OK");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
