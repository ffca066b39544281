import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";

// A throwaway CA and a serving certificate it signs, made with openssl (a host dependency of the
// local cluster, hack/cluster/host-deps.sh), for endpoints the tests serve over TLS.

/** Files of a test CA and of a certificate for 127.0.0.1 and localhost. */
export interface TestTls {
  dir: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  remove(): void;
}

/**
 * Makes a CA and a certificate (ECDSA P-256, one day) in a temp dir, for 127.0.0.1 and localhost
 * unless `subjectAltName` (openssl's syntax, e.g. "DNS:svc.ns.svc,IP:10.0.0.1") names others.
 */
export function makeTestTls(subjectAltName = "IP:127.0.0.1,DNS:localhost"): TestTls {
  const dir = mkdtempSync(join(tmpdir(), "cronscale-tls-"));
  const f = (n: string) => join(dir, n);
  const ssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "pipe" });
  ssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", f("ca.key"));
  ssl(
    "req",
    "-x509",
    "-new",
    "-key",
    f("ca.key"),
    "-subj",
    "/CN=cronscale test CA",
    "-days",
    "1",
    "-out",
    f("ca.crt"),
  );
  ssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", f("tls.key"));
  ssl("req", "-new", "-key", f("tls.key"), "-subj", "/CN=cronscale-history", "-out", f("tls.csr"));
  writeFileSync(f("ext.cnf"), `subjectAltName=${subjectAltName}\nextendedKeyUsage=serverAuth\n`);
  ssl(
    "x509",
    "-req",
    "-in",
    f("tls.csr"),
    "-CA",
    f("ca.crt"),
    "-CAkey",
    f("ca.key"),
    "-CAcreateserial",
    "-days",
    "1",
    "-extfile",
    f("ext.cnf"),
    "-out",
    f("tls.crt"),
  );
  return {
    dir,
    caFile: f("ca.crt"),
    certFile: f("tls.crt"),
    keyFile: f("tls.key"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A client certificate (clientAuth) with common name `cn` signed by the CA of `tls`, in its dir. */
export function makeClientCert(tls: TestTls, cn: string): { certFile: string; keyFile: string } {
  const f = (n: string) => join(tls.dir, n);
  const base = `client-${cn.replace(/[^a-z0-9]/gi, "_")}`;
  const ssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "pipe" });
  ssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", f(`${base}.key`));
  ssl("req", "-new", "-key", f(`${base}.key`), "-subj", `/CN=${cn}`, "-out", f(`${base}.csr`));
  writeFileSync(f(`${base}.cnf`), "extendedKeyUsage=clientAuth\n");
  ssl(
    "x509",
    "-req",
    "-in",
    f(`${base}.csr`),
    "-CA",
    tls.caFile,
    "-CAkey",
    f("ca.key"),
    "-CAcreateserial",
    "-days",
    "1",
    "-extfile",
    f(`${base}.cnf`),
    "-out",
    f(`${base}.crt`),
  );
  return { certFile: f(`${base}.crt`), keyFile: f(`${base}.key`) };
}

/** The answer of {@link tlsRequest}. */
export interface TlsAnswer {
  status: number;
  location?: string;
  /** The first Set-Cookie as `name=value`. */
  cookie?: string;
  body: string;
}

/**
 * One HTTPS request to 127.0.0.1:`port` trusting `caFile`, with the client certificate `cert` if
 * given; `headers` are raw lines (repeated names stay separate lines).
 */
export function tlsRequest(opts: {
  port: number;
  path: string;
  caFile: string;
  cert?: { certFile: string; keyFile: string };
  headers?: [string, string][];
  method?: string;
  body?: string;
}): Promise<TlsAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port: opts.port,
        path: opts.path,
        method: opts.method ?? "GET",
        ca: readFileSync(opts.caFile),
        ...(opts.cert && { cert: readFileSync(opts.cert.certFile), key: readFileSync(opts.cert.keyFile) }),
        // Raw lines: Node then adds no Host of its own.
        headers: [["Host", `127.0.0.1:${opts.port}`], ...(opts.headers ?? [])].flat(),
        agent: false,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          body += c;
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            location: res.headers.location,
            cookie: res.headers["set-cookie"]?.[0]?.split(";")[0],
            body,
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}
