import { mkdtempSync, readFileSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import {
  type AddressInfo,
  createServer as createNetServer,
  connect as netConnect,
  type Server,
} from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { KubeConfig, type User } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClientCert, makeTestTls, type TestTls } from "../../test/support/tls.ts";
import { ApiError } from "./errors.ts";
import { sharedAgentCount } from "./kube-auth.ts";
import { KubeTransport } from "./rest.ts";
import { execPluginUser } from "./testing.ts";

// The transport's TLS paths that a local cluster's kubeconfig does not take: client certificates
// handed over by an exec plugin (as cloud and SSO plugins do), and the kubeconfig's proxy-url, an
// HTTP CONNECT proxy and a SOCKS5 one. Against a loopback HTTPS server that requires a client
// certificate of its CA and answers with the certificate's common name; the proxies are loopback
// servers that record where they were asked to connect.

let tls: TestTls;
let server: HttpsServer;
let port = 0;
let client: { cert: string; key: string };
/** A second identity, for rotation. */
let rotated: { cert: string; key: string };
/** A third identity, refused by the server: the certificate a plugin hands over before it rotates. */
let expiring: { cert: string; key: string };
/** Common names the server answers 401 (as an API server does to an expired or revoked certificate). */
const refusedNames = new Set<string>();

/** The targets (host:port) each proxy was asked to connect to. */
const connects = { http: [] as string[], socks: [] as string[] };
let httpProxy: HttpServer;
let socksProxy: Server;

/** An HTTP proxy that answers CONNECT by piping to the target. */
function startHttpProxy(): Promise<HttpServer> {
  const proxy = createHttpServer((_req, res) => res.writeHead(405).end());
  proxy.on("connect", (req, socket, head) => {
    connects.http.push(req.url ?? "");
    const [host, p] = (req.url ?? "").split(":");
    const up = netConnect(Number(p), host, () => {
      socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    up.on("error", () => socket.destroy());
    socket.on("error", () => up.destroy());
  });
  return new Promise((r) => proxy.listen(0, "127.0.0.1", () => r(proxy)));
}

/**
 * A SOCKS5 proxy (RFC 1928), no authentication, CONNECT to an IPv4 address or a domain name only:
 * the part of the protocol a client that tunnels TLS uses. A test fixture: no SOCKS server package
 * is among the project's dependencies, and this much is a page.
 */
function startSocksProxy(): Promise<Server> {
  const proxy = createNetServer((socket) => {
    let buf = Buffer.alloc(0);
    let stage: "greeting" | "request" | "piped" = "greeting";
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (stage === "greeting") {
        if (buf.length < 2 || buf.length < 2 + (buf[1] ?? 0)) return;
        buf = buf.subarray(2 + (buf[1] ?? 0));
        socket.write(Buffer.from([5, 0]));
        stage = "request";
      }
      if (stage === "request") {
        if (buf.length < 5) return;
        const atyp = buf[3];
        let host: string;
        let at: number;
        if (atyp === 1) {
          if (buf.length < 10) return;
          host = [...buf.subarray(4, 8)].join(".");
          at = 8;
        } else if (atyp === 3) {
          const len = buf[4] ?? 0;
          if (buf.length < 7 + len) return;
          host = buf.subarray(5, 5 + len).toString();
          at = 5 + len;
        } else {
          socket.end(Buffer.from([5, 8, 0, 1, 0, 0, 0, 0, 0, 0]));
          return;
        }
        const p = buf.readUInt16BE(at);
        const rest = buf.subarray(at + 2);
        stage = "piped";
        socket.off("data", onData);
        connects.socks.push(`${host}:${p}`);
        const up = netConnect(p, host, () => {
          socket.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 0]));
          if (rest.length) up.write(rest);
          up.pipe(socket);
          socket.pipe(up);
        });
        up.on("error", () => socket.destroy());
        socket.on("error", () => up.destroy());
      }
    };
    socket.on("data", onData);
  });
  return new Promise((r) => proxy.listen(0, "127.0.0.1", () => r(proxy)));
}

beforeAll(async () => {
  tls = makeTestTls();
  const c = makeClientCert(tls, "exec-user");
  client = { cert: readFileSync(c.certFile, "utf8"), key: readFileSync(c.keyFile, "utf8") };
  const r = makeClientCert(tls, "rotated-user");
  rotated = { cert: readFileSync(r.certFile, "utf8"), key: readFileSync(r.keyFile, "utf8") };
  const e = makeClientCert(tls, "expiring-user");
  expiring = { cert: readFileSync(e.certFile, "utf8"), key: readFileSync(e.keyFile, "utf8") };
  server = createHttpsServer(
    {
      cert: readFileSync(tls.certFile),
      key: readFileSync(tls.keyFile),
      ca: readFileSync(tls.caFile),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      req.resume();
      const cn = String((req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? "");
      const refused = refusedNames.has(cn);
      res.writeHead(refused ? 401 : 200, { "content-type": "application/json" });
      res.end(
        JSON.stringify(
          refused
            ? { kind: "Status", code: 401, reason: "Unauthorized", message: "Unauthorized" }
            : { kind: "Echo", cn },
        ),
      );
    },
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as AddressInfo).port;
  httpProxy = await startHttpProxy();
  socksProxy = await startSocksProxy();
});
afterAll(async () => {
  server.closeAllConnections();
  httpProxy.closeAllConnections();
  await Promise.all([server, httpProxy, socksProxy].map((s) => new Promise<void>((r) => s.close(() => r()))));
  tls.remove();
});

const dir = mkdtempSync(join(tmpdir(), "kube-tls-"));

/**
 * An exec plugin answering with `statuses[run]` (client.authentication.k8s.io/v1), the last one
 * once they run out.
 */
function execUser(...statuses: Record<string, unknown>[]): Omit<User, "name"> {
  return execPluginUser(dir, `${JSON.stringify(statuses)}[Math.min(run, ${statuses.length - 1})]`).user;
}

function kubeConfig(user: Omit<User, "name">, proxyUrl?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server: `https://127.0.0.1:${port}`, caFile: tls.caFile, proxyUrl }],
    users: [{ name: "u", ...user }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return kc;
}

const echo = (t: KubeTransport) => t.request<{ cn?: string }>("GET", "/api/v1/namespaces/ns/configmaps/x");
const staticCert = (): Omit<User, "name"> => ({
  certData: Buffer.from(client.cert).toString("base64"),
  keyData: Buffer.from(client.key).toString("base64"),
});

describe("KubeTransport over TLS", () => {
  it("presents the client certificate an exec plugin hands over", async () => {
    const t = KubeTransport.create(
      kubeConfig(execUser({ clientCertificateData: client.cert, clientKeyData: client.key })),
    );
    expect((await echo(t)).cn).toBe("exec-user");
    // Requests after the first reuse the prepared credentials and connection.
    expect((await echo(t)).cn).toBe("exec-user");
  });

  it("fails the handshake when the plugin hands over no certificate (the server requires one)", async () => {
    const t = KubeTransport.create(kubeConfig(execUser({ token: "not-a-certificate" })));
    const err = await echo(t).then(
      () => undefined,
      (e: unknown) => e,
    );
    // A connection failure naming the request, not an answer of the server.
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(ApiError);
    expect(String(err)).toMatch(/GET \/api\/v1\/namespaces\/ns\/configmaps\/x: /);
  });

  it("tunnels through the kubeconfig's HTTP proxy (CONNECT)", async () => {
    connects.http.length = 0;
    const t = KubeTransport.create(
      kubeConfig(staticCert(), `http://127.0.0.1:${(httpProxy.address() as AddressInfo).port}`),
    );
    expect((await echo(t)).cn).toBe("exec-user");
    expect(connects.http).toEqual([`127.0.0.1:${port}`]);
  });

  it("tunnels through the kubeconfig's SOCKS5 proxy, with an exec plugin's certificate", async () => {
    connects.socks.length = 0;
    const t = KubeTransport.create(
      kubeConfig(
        execUser({ clientCertificateData: client.cert, clientKeyData: client.key }),
        `socks5://127.0.0.1:${(socksProxy.address() as AddressInfo).port}`,
      ),
    );
    expect((await echo(t)).cn).toBe("exec-user");
    expect(connects.socks).toEqual([`127.0.0.1:${port}`]);
  });

  it("through a proxy, takes up the plugin's new certificate after a 401", async () => {
    refusedNames.add("exec-user");
    try {
      const t = KubeTransport.create(
        kubeConfig(
          execUser(
            { clientCertificateData: client.cert, clientKeyData: client.key },
            { clientCertificateData: rotated.cert, clientKeyData: rotated.key },
          ),
          `http://127.0.0.1:${(httpProxy.address() as AddressInfo).port}`,
        ),
      );
      // The first certificate is refused; the retry runs the plugin again and connects with the new one.
      expect((await echo(t)).cn).toBe("rotated-user");
      expect((await echo(t)).cn).toBe("rotated-user");
    } finally {
      refusedNames.clear();
    }
  });

  it("without a proxy, takes up the plugin's new certificate after a 401 and closes the old pool", async () => {
    refusedNames.add("expiring-user");
    try {
      const before = sharedAgentCount();
      const t = KubeTransport.create(
        kubeConfig(
          execUser(
            { clientCertificateData: expiring.cert, clientKeyData: expiring.key },
            { clientCertificateData: rotated.cert, clientKeyData: rotated.key },
          ),
        ),
      );
      expect((await echo(t)).cn).toBe("rotated-user");
      expect((await echo(t)).cn).toBe("rotated-user");
      // One pool more, the rotated certificate's: the refused one's was closed, not kept.
      expect(sharedAgentCount()).toBe(before + 1);
    } finally {
      refusedNames.clear();
    }
  });
});
