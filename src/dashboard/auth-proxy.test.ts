import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClientCert, makeTestTls, type TestTls, tlsRequest } from "../../test/support/tls.ts";
import { silentLogger } from "../log.ts";
import { type ProxyIdentity, proxyAuthSettingsFrom, takeProxyIdentity } from "./auth-proxy.ts";
import { dashboardCommand } from "./command.ts";
import { createDashboard } from "./server.ts";
import { FakeViewerApi } from "./testing.ts";

// The proxy's identity headers over real TLS connections: believed only with a client certificate
// of the configured CA and an allowed name, removed unread otherwise.

const TASKS = "/dashboard/compute/serverless/tasks";
let proxyCa: TestTls;
let otherCa: TestTls;
let app: FastifyInstance;
let port = 0;
const actedFor: ProxyIdentity[] = [];
type Cert = { certFile: string; keyFile: string };
let proxyCert: Cert;
let strangerName: Cert;
let otherCaCert: Cert;

beforeAll(async () => {
  proxyCa = makeTestTls();
  otherCa = makeTestTls();
  proxyCert = makeClientCert(proxyCa, "front-proxy");
  strangerName = makeClientCert(proxyCa, "someone-else");
  otherCaCert = makeClientCert(otherCa, "front-proxy");
  const settings = proxyAuthSettingsFrom(
    { clientCaPem: readFileSync(proxyCa.caFile, "utf8"), allowedNames: "front-proxy" },
    true,
  );
  app = await createDashboard({
    log: silentLogger(),
    viewerApi: () => {
      throw new Error("no token sign-in in this test");
    },
    tls: { cert: readFileSync(proxyCa.certFile), key: readFileSync(proxyCa.keyFile) },
    proxyAuth: {
      settings: settings as NonNullable<typeof settings>,
      viewerApi: (id) => {
        actedFor.push(id);
        return new FakeViewerApi(
          { username: id.username, groups: id.groups },
          new Set(["list namespaces ", "list scheduledtasks *"]),
        );
      },
    },
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  port = (app.server.address() as { port: number }).port;
});

afterAll(async () => {
  await app?.close();
  proxyCa?.remove();
  otherCa?.remove();
});

/** One request over TLS, with `cert` as client certificate if given; headers as raw lines. */
const send = (path: string, cert: Cert | undefined, headers: [string, string][], method = "GET") =>
  tlsRequest({ port, path, caFile: proxyCa.caFile, cert, headers, method });

const BOB: [string, string][] = [
  ["X-Remote-User", "proxy:bob"],
  ["X-Remote-Group", "team-x"],
  ["X-Remote-Group", "team, y"],
];

describe("authenticating proxy", () => {
  it("signs in the viewer named by the proxy with its certificate, one group per header line", async () => {
    actedFor.length = 0;
    const res = await send(TASKS, proxyCert, BOB);
    expect(res.status).toBe(200);
    expect(res.body).toContain("proxy:bob");
    expect(actedFor).toEqual([{ username: "proxy:bob", groups: ["team-x", "team, y"], extra: {} }]);
    // The session serves the same identity through the proxy without asking the API server again…
    const again = await send(TASKS, proxyCert, [...BOB, ["Cookie", res.cookie as string]]);
    expect(again.status).toBe(200);
    expect(actedFor).toHaveLength(1);
    // …but never another identity, nor a client without the certificate that replays the cookie.
    const alice = await send(TASKS, proxyCert, [
      ["X-Remote-User", "proxy:alice"],
      ["Cookie", res.cookie as string],
    ]);
    expect(alice.body).toContain("proxy:alice");
    expect(actedFor.map((i) => i.username)).toEqual(["proxy:bob", "proxy:alice"]);
    const replay = await send(TASKS, undefined, [["Cookie", res.cookie as string]]);
    expect(replay.status).toBe(303);
    expect(replay.location).toContain("/dashboard/sign-in");
  });

  it("ignores the headers without a client certificate: the sign-in page, or 401 for a partial", async () => {
    actedFor.length = 0;
    const page = await send(TASKS, undefined, BOB);
    expect(page.status).toBe(303);
    expect(page.location).toContain("/dashboard/sign-in");
    const partial = await send(`${TASKS}/results`, undefined, [...BOB, ["X-Partial", "1"]]);
    expect(partial.status).toBe(401);
    expect(actedFor).toEqual([]);
  });

  it("refuses spoofed headers with a certificate of another CA or a name not allowed", async () => {
    actedFor.length = 0;
    for (const cert of [otherCaCert, strangerName]) {
      const res = await send(TASKS, cert, BOB);
      expect(res.status).toBe(303);
      expect(res.location).toContain("/dashboard/sign-in");
    }
    expect(actedFor).toEqual([]);
  });

  it("still needs the session's CSRF token and Origin for a post", async () => {
    const signedIn = await send(TASKS, proxyCert, BOB);
    const post = await send(
      `${TASKS}/default/a/run`,
      proxyCert,
      [...BOB, ["Cookie", signedIn.cookie as string], ["Content-Type", "application/x-www-form-urlencoded"]],
      "POST",
    );
    expect(post.status).toBe(403);
  });

  it("passes through a proxied request that names no user, like the API server", async () => {
    actedFor.length = 0;
    const res = await send(TASKS, proxyCert, [["X-Remote-Group", "team-x"]]);
    expect(res.status).toBe(303);
    expect(actedFor).toEqual([]);
  });
});

describe("takeProxyIdentity", () => {
  const settings = {
    clientCaPem: "",
    allowedNames: [],
    userHeaders: ["X-Remote-User"],
    groupHeaders: ["X-Remote-Group"],
    extraHeaderPrefixes: ["X-Remote-Extra-"],
  };
  const fakeReq = (socket: object, raw: string[]) => {
    const headers: Record<string, string> = {};
    const distinct: Record<string, string[]> = {};
    for (let i = 0; i < raw.length; i += 2) {
      const k = (raw[i] as string).toLowerCase();
      headers[k] = headers[k] ? `${headers[k]}, ${raw[i + 1]}` : (raw[i + 1] as string);
      distinct[k] = [...(distinct[k] ?? []), raw[i + 1] as string];
    }
    return { socket, headers, headersDistinct: distinct, rawHeaders: [...raw] } as never;
  };
  const raw = ["X-Remote-User", "bob", "X-Remote-Extra-Scopes%2Fx", "a", "Accept", "text/html"];

  it("strips the identity headers from a request without a certificate", () => {
    const req = fakeReq({ encrypted: false }, raw) as { headers: object; rawHeaders: string[] };
    const got = takeProxyIdentity(req as never, settings);
    expect(got).toEqual({ identity: undefined, refused: "no client certificate" });
    expect(req.headers).toEqual({ accept: "text/html" });
    expect(req.rawHeaders).toEqual(["Accept", "text/html"]);
  });

  it("reads user, groups and unescaped extras from the proxy, then strips them", () => {
    const socket = {
      encrypted: true,
      authorized: true,
      getPeerCertificate: () => ({ subject: { CN: "p" } }),
    };
    const req = fakeReq(socket, raw) as { headers: object };
    expect(takeProxyIdentity(req as never, settings)).toEqual({
      identity: { username: "bob", groups: [], extra: { "scopes/x": ["a"] } },
      refused: undefined,
    });
    expect(req.headers).toEqual({ accept: "text/html" });
  });

  it("refuses a certificate that did not verify against the CA", () => {
    const socket = {
      encrypted: true,
      authorized: false,
      getPeerCertificate: () => ({ subject: { CN: "p" } }),
    };
    expect(takeProxyIdentity(fakeReq(socket, raw), settings).refused).toBe(
      "certificate not signed by the proxy CA",
    );
  });

  it("is off without a CA and refuses half a configuration", () => {
    expect(proxyAuthSettingsFrom({}, false)).toBeUndefined();
    expect(() => proxyAuthSettingsFrom({ userHeaders: "X-User" }, true)).toThrow(/client-ca-file/);
    expect(() => proxyAuthSettingsFrom({ clientCaPem: "-----BEGIN CERTIFICATE-----" }, false)).toThrow(
      /tls-cert-file/,
    );
  });
});

describe("cronscale dashboard flags", () => {
  it("refuses the proxy's CA without TLS serving, naming the flags", async () => {
    const err: string[] = [];
    const io = { out: () => {}, err: (s: string) => err.push(s) };
    const code = await dashboardCommand(["--auth-proxy-client-ca-file", proxyCa.caFile], io as never);
    expect(code).toBe(2);
    expect(err.join("\n")).toMatch(/--tls-cert-file/);
    err.length = 0;
    expect(await dashboardCommand(["--auth-proxy-user-headers", "X-User"], io as never)).toBe(2);
    expect(err.join("\n")).toMatch(/--auth-proxy-client-ca-file/);
  });
});
