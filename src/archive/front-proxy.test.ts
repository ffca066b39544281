import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClientCert, makeTestTls, type TestTls, tlsRequest } from "../../test/support/tls.ts";
import {
  type Access,
  type Authorizer,
  requestHeaderAuthFrom,
  startHistoryServer,
  type UserInfo,
} from "./http.ts";
import { MemoryExecutionArchive } from "./memory.ts";

// The history endpoint as an APIService sees it, over real TLS: the X-Remote-* headers name the
// caller only on a connection whose client certificate the front-proxy CA signed with an allowed
// name; any other connection (no certificate, another name, another CA) is a caller without a
// token. The discovery document answers without authentication.

const checked: (string | UserInfo)[] = [];
const authorizer: Authorizer = {
  async check(caller: string | UserInfo, a: Access) {
    checked.push(caller);
    if (typeof caller === "string") return "unauthenticated";
    return caller.username === "alice" && a.name === "a" ? "allowed" : "forbidden";
  },
};

let serving: TestTls;
let frontProxyCa: TestTls;
let port = 0;
let server: Awaited<ReturnType<typeof startHistoryServer>>;
let proxyClient: { certFile: string; keyFile: string };
let otherName: { certFile: string; keyFile: string };
let otherCa: { certFile: string; keyFile: string };

beforeAll(async () => {
  serving = makeTestTls();
  frontProxyCa = makeTestTls();
  proxyClient = makeClientCert(frontProxyCa, "front-proxy-client");
  otherName = makeClientCert(frontProxyCa, "mallory");
  otherCa = makeClientCert(serving, "front-proxy-client");
  const requestHeader = requestHeaderAuthFrom({
    "requestheader-client-ca-file": readFileSync(frontProxyCa.caFile, "utf8"),
    "requestheader-allowed-names": '["front-proxy-client"]',
    "requestheader-username-headers": '["X-Remote-User"]',
    "requestheader-group-headers": '["X-Remote-Group"]',
    "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
  });
  server = await startHistoryServer(
    {
      host: "127.0.0.1",
      port: 0,
      log: pino({ level: "silent" }),
      tls: serving,
      requestHeader: () => requestHeader,
    },
    { archive: new MemoryExecutionArchive(), authorizer, now: () => new Date("2026-11-02T00:00:00Z") },
  );
  port = (server.address() as AddressInfo).port;
}, 60_000);
afterAll(() => {
  server?.close();
  serving?.remove();
  frontProxyCa?.remove();
});

const HEADERS: [string, string][] = [
  ["X-Remote-User", "alice"],
  ["X-Remote-Group", "devs"],
  ["X-Remote-Group", "system:authenticated"],
  ["X-Remote-Extra-Scopes%2Fa", "read"],
];
const get = (path: string, cert?: { certFile: string; keyFile: string }) =>
  tlsRequest({ port, path, caFile: serving.caFile, cert, headers: HEADERS });

describe("history endpoint behind the API server (APIService)", () => {
  it("takes the caller from the front proxy's headers over its verified client certificate", async () => {
    checked.length = 0;
    const r = await get(
      "/apis/history.cronscale.io/v1alpha1/namespaces/ns/scheduledtasks/a/history",
      proxyClient,
    );
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ items: [] });
    expect(checked).toEqual([
      { username: "alice", groups: ["devs", "system:authenticated"], extra: { "scopes/a": ["read"] } },
    ]);
    const other = await get(
      "/apis/history.cronscale.io/v1alpha1/namespaces/ns/scheduledtasks/b/logs",
      proxyClient,
    );
    expect(other.status).toBe(403);
    expect(JSON.parse(other.body).error).toBe(
      'forbidden: user "alice" may not get scheduledtask b in namespace ns',
    );
  });

  it("ignores the headers without that certificate: none, another name, another CA", async () => {
    const path = "/apis/history.cronscale.io/v1alpha1/namespaces/ns/scheduledtasks/a/history";
    for (const cert of [undefined, otherName, otherCa]) {
      checked.length = 0;
      const r = await get(path, cert);
      expect(r.status).toBe(401);
      expect(checked).toEqual([]);
    }
  });

  it("serves the group version's discovery document to anyone", async () => {
    const r = await get("/apis/history.cronscale.io/v1alpha1");
    expect(r.status).toBe(200);
    const list = JSON.parse(r.body);
    expect(list).toMatchObject({ kind: "APIResourceList", groupVersion: "history.cronscale.io/v1alpha1" });
    expect(list.resources.map((x: { name: string }) => x.name)).toEqual([
      "scheduledtasks/history",
      "scheduledtasks/logs",
      "usage",
    ]);
  });

  it("reads the front-proxy settings as the API server publishes them", () => {
    expect(requestHeaderAuthFrom({})).toBeUndefined();
    expect(requestHeaderAuthFrom({ "requestheader-client-ca-file": "PEM" })).toEqual({
      ca: "PEM",
      allowedNames: [],
      usernameHeaders: ["X-Remote-User"],
      groupHeaders: ["X-Remote-Group"],
      extraHeaderPrefixes: ["X-Remote-Extra-"],
    });
  });
});
