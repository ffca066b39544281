import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RealKubeClient } from "./client.ts";
import { ApiError, isGone, isNotFound, RetryableError } from "./errors.ts";
import { KubeListWatch } from "./listwatch.ts";
import { DEFAULT_REQUEST_TIMEOUT_MS, KubeTransport, RequestTimeoutError } from "./rest.ts";
import { loopbackKubeConfig } from "./testing.ts";
import type { KubeObject } from "./types.ts";

// The raw transport and RealKubeClient against a scripted HTTP server on loopback: what goes on
// the wire (paths, query, content types) and how answers are read. The real API server is
// exercised by test/integration/runtime.

interface Seen {
  method: string;
  url: string;
  contentType?: string;
  authorization?: string;
  body: string;
}

let server: Server;
let port = 0;
const seen: Seen[] = [];

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let b = "";
    req.on("data", (d: Buffer) => {
      b += d.toString();
    });
    req.on("end", () => resolve(b));
  });
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const body = await readBody(req);
    seen.push({
      method: req.method!,
      url: req.url!,
      contentType: req.headers["content-type"],
      authorization: req.headers.authorization,
      body,
    });
    const json = (code: number, obj: unknown) => {
      res.writeHead(code, { "content-type": "application/json" });
      res.end(JSON.stringify(obj));
    };
    const url = new URL(req.url!, "http://x");
    if (url.pathname === "/api/v1") {
      return json(200, {
        resources: [
          { name: "configmaps", kind: "ConfigMap", namespaced: true },
          { name: "pods/status", kind: "Pod", namespaced: true },
          { name: "namespaces", kind: "Namespace", namespaced: false },
        ],
      });
    }
    if (url.pathname === "/apis/example.com/v1") {
      return json(200, {
        resources: [
          { name: "widgets", kind: "Widget", namespaced: true },
          { name: "widgets/status", kind: "Widget", namespaced: true },
        ],
      });
    }
    if (url.pathname === "/api/v1/namespaces/ns/pods/p/log") {
      // As the API server: the subresource is negotiated like any other, text/plain is refused.
      if (!/application\/json/.test(req.headers.accept ?? ""))
        return json(406, { kind: "Status", reason: "NotAcceptable", code: 406, message: "only json" });
      // Output that happens to be valid JSON must still come back as the text it is.
      res.writeHead(200, { "content-type": "text/plain" });
      return res.end(url.searchParams.get("tailLines") ? '{"last": "line"}\n' : "42\n");
    }
    if (url.pathname === "/api/v1/namespaces/ns/pods/gone/log") {
      return json(404, { kind: "Status", reason: "NotFound", message: 'pods "gone" not found', code: 404 });
    }
    if (url.pathname === "/api/v1/namespaces/ns/configmaps/missing") {
      return json(404, {
        kind: "Status",
        reason: "NotFound",
        message: 'configmaps "missing" not found',
        code: 404,
      });
    }
    if (url.pathname === "/api/v1/namespaces/split/configmaps" && url.searchParams.get("watch") === "true") {
      // Events cut anywhere (inside a line, inside a UTF-8 character), and a last line without "\n".
      res.writeHead(200, { "content-type": "application/json" });
      const bytes = Buffer.from(
        `${JSON.stringify({ type: "ADDED", object: { metadata: { name: "é€", resourceVersion: "1" } } })}\n\n` +
          `not json\n${JSON.stringify({ type: "MODIFIED", object: { metadata: { name: "b", resourceVersion: "2" } } })}\n` +
          JSON.stringify({ type: "DELETED", object: { metadata: { name: "c", resourceVersion: "3" } } }),
      );
      const cuts = [5, bytes.indexOf(0xc3) + 1, bytes.indexOf(0xe2) + 2, bytes.length - 3, bytes.length];
      let at = 0;
      const next = () => {
        const cut = cuts.shift();
        if (cut === undefined) return res.end();
        res.write(bytes.subarray(at, cut));
        at = cut;
        setTimeout(next, 5);
      };
      next();
      return;
    }
    if (url.pathname === "/api/v1/namespaces/gone/configmaps" && url.searchParams.get("watch") === "true") {
      return json(410, { kind: "Status", reason: "Expired", code: 410, message: "too old resource version" });
    }
    if (url.pathname === "/api/v1/namespaces/ns/configmaps" && url.searchParams.get("watch") === "true") {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(
        `${JSON.stringify({ type: "ADDED", object: { metadata: { name: "w", namespace: "ns", resourceVersion: "11" } } })}\n`,
      );
      res.write(`${JSON.stringify({ type: "BOOKMARK", object: { metadata: { resourceVersion: "12" } } })}\n`);
      res.end();
      return;
    }
    if (url.pathname === "/api/v1/namespaces/ns/configmaps" && req.method === "GET") {
      const cont = url.searchParams.get("continue");
      return json(200, {
        metadata: { resourceVersion: "10", continue: cont ? "" : "next" },
        items: [{ metadata: { name: cont ? "b" : "a", namespace: "ns" } }],
      });
    }
    return json(200, { apiVersion: "v1", kind: "Echo", metadata: { name: "echo" }, path: url.pathname });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

function transport(): KubeTransport {
  const kc = loopbackKubeConfig(port);
  return KubeTransport.create(kc);
}

describe("RealKubeClient wire format", () => {
  it("server-side applies with field manager cronscale and force, without server-owned metadata", async () => {
    seen.length = 0;
    const c = new RealKubeClient(transport());
    await c.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", namespace: "ns", resourceVersion: "5", managedFields: [{}], uid: "u" },
      data: { k: "v" },
    });
    const patch = seen.find((s) => s.method === "PATCH")!;
    expect(patch.url).toBe("/api/v1/namespaces/ns/configmaps/a?fieldManager=cronscale&force=true");
    expect(patch.contentType).toBe("application/apply-patch+yaml");
    expect(JSON.parse(patch.body)).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", namespace: "ns" },
      data: { k: "v" },
    });
  });

  it("applies status through the status subresource with only identity and status", async () => {
    seen.length = 0;
    const c = new RealKubeClient(transport());
    await c.applyStatus({
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w", namespace: "ns", labels: { a: "b" } },
      spec: { x: 1 },
      status: { phase: "Ready" },
    });
    const patch = seen.find((s) => s.method === "PATCH")!;
    expect(patch.url).toBe(
      "/apis/example.com/v1/namespaces/ns/widgets/w/status?fieldManager=cronscale&force=true",
    );
    expect(JSON.parse(patch.body)).toEqual({
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w", namespace: "ns" },
      status: { phase: "Ready" },
    });
  });

  it("addresses cluster-scoped objects without a namespace segment", async () => {
    const c = new RealKubeClient(transport());
    const got = await c.get("v1", "Namespace", "", "default");
    expect(got?.path).toBe("/api/v1/namespaces/default");
  });

  it("maps 404 to undefined on get and to an ApiError elsewhere", async () => {
    const t = transport();
    const c = new RealKubeClient(t);
    expect(await c.get("v1", "ConfigMap", "ns", "missing")).toBeUndefined();
    const err = await t.request("GET", "/api/v1/namespaces/ns/configmaps/missing").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(isNotFound(err)).toBe(true);
    expect((err as ApiError).reason).toBe("NotFound");
  });

  it("lists every page and fills in apiVersion/kind", async () => {
    const c = new RealKubeClient(transport());
    const items = await c.list("v1", "ConfigMap", "ns", "a=b");
    expect(items.map((i) => [i.apiVersion, i.kind, i.metadata.name])).toEqual([
      ["v1", "ConfigMap", "a"],
      ["v1", "ConfigMap", "b"],
    ]);
    expect(seen.some((s) => s.url.includes("labelSelector=a%3Db") && s.url.includes("limit=500"))).toBe(true);
  });

  it("reports an unknown kind as not found", async () => {
    const c = new RealKubeClient(transport());
    await expect(c.list("v1", "Nope")).rejects.toThrow(/unknown kind/);
  });
});

describe("KubeTransport.text (pods/log)", () => {
  it("answers with the body as text, even text that parses as JSON; errors stay ApiErrors", async () => {
    const t = transport();
    const log = "/api/v1/namespaces/ns/pods/p/log";
    const head = await t.text("GET", log, { query: { container: "script", limitBytes: 1025 } });
    expect(head).toBe("42\n");
    expect(seen.at(-1)?.url).toBe(`${log}?container=script&limitBytes=1025`);
    expect(await t.text("GET", log, { query: { tailLines: 2000 } })).toBe('{"last": "line"}\n');
    const err = await t.text("GET", "/api/v1/namespaces/ns/pods/gone/log").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(isNotFound(err)).toBe(true);
  });
});

describe("KubeListWatch wire format", () => {
  it("watches with bookmarks, timeout and resourceVersion, delivering events then done", async () => {
    seen.length = 0;
    const lw = new KubeListWatch(transport(), { apiVersion: "v1", kind: "ConfigMap" }, "ns");
    const events: string[] = [];
    await new Promise<void>((resolve) => {
      void lw.watch(
        { resourceVersion: "10", timeoutSeconds: 333, allowWatchBookmarks: true, labelSelector: "x=y" },
        (type) => events.push(type),
        () => resolve(),
      );
    });
    expect(events).toEqual(["ADDED", "BOOKMARK"]);
    const w0 = seen.find((s) => s.url.includes("watch=true"))!;
    expect(w0.authorization).toBe("Bearer t0ken");
    const w = seen.find((s) => s.url.includes("watch=true"))!;
    const q = new URL(w.url, "http://x").searchParams;
    expect(Object.fromEntries(q)).toMatchObject({
      resourceVersion: "10",
      timeoutSeconds: "333",
      allowWatchBookmarks: "true",
      labelSelector: "x=y",
    });
  });
});

describe("KubeTransport.watch", () => {
  it("reads events cut anywhere into chunks, skips what is not an event, and ends with the stream", async () => {
    const events: [string, string][] = [];
    const err = await new Promise<unknown>((resolve) => {
      void transport().watch(
        "/api/v1/namespaces/split/configmaps",
        {},
        (type, obj) => events.push([type, (obj as KubeObject).metadata.name ?? ""]),
        resolve,
      );
    });
    expect(err).toBeNull();
    expect(events).toEqual([
      ["ADDED", "é€"],
      ["MODIFIED", "b"],
      ["DELETED", "c"],
    ]);
  });

  it("a non-200 answer ends the watch with its status code (410: relist)", async () => {
    const err = await new Promise<unknown>((resolve) => {
      void transport().watch(
        "/api/v1/namespaces/gone/configmaps",
        { resourceVersion: "1" },
        () => {},
        resolve,
      );
    });
    expect(isGone(err)).toBe(true);
  });
});

// A server that accepts connections and then goes quiet: before the headers, or after them in the
// middle of the body, or (for a watch) after the 200 with no event ever. Nothing may hang on it.
describe("a stalled API server", () => {
  let stall: Server;
  let stallPort = 0;
  const sockets = new Set<import("node:net").Socket>();
  /** Connections holding a request that is never answered. */
  const stalledOpen = new Set<import("node:net").Socket>();

  beforeAll(async () => {
    stall = createServer((req, res) => {
      const url = new URL(req.url!, "http://x");
      if (url.pathname === "/api/v1") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ resources: [{ name: "configmaps", kind: "ConfigMap", namespaced: true }] }));
        return;
      }
      if (url.pathname.endsWith("/half")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"kind":"ConfigMap",');
        return; // never the rest
      }
      if (url.searchParams.get("watch") === "true") {
        res.writeHead(200, { "content-type": "application/json" });
        res.flushHeaders();
        return; // a watch that never delivers an event
      }
      // Anything else: accepted, read, never answered.
      stalledOpen.add(req.socket);
      req.socket.on("close", () => stalledOpen.delete(req.socket));
    });
    stall.on("connection", (s) => {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    });
    await new Promise<void>((r) => stall.listen(0, "127.0.0.1", () => r()));
    stallPort = (stall.address() as AddressInfo).port;
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => stall.close(() => r()));
  });

  function stalled(requestTimeoutMs?: number): KubeTransport {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "c", server: `http://127.0.0.1:${stallPort}`, skipTLSVerify: true }],
      users: [{ name: "u", token: "t0ken" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    return KubeTransport.create(kc, { requestTimeoutMs });
  }

  it("times a request out that never gets an answer, as a retryable error", { timeout: 5_000 }, async () => {
    const started = Date.now();
    const c = new RealKubeClient(stalled(300));
    const err = await c
      .apply({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "ns" }, data: {} })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect(err).toBeInstanceOf(RetryableError);
    expect((err as Error).message).toMatch(
      /^PATCH \/api\/v1\/namespaces\/ns\/configmaps\/a: no answer within 300 ms/,
    );
    expect(Date.now() - started).toBeLessThan(3_000);
    // The stalled socket is given up, not left for the pool to reuse.
    await expect.poll(() => stalledOpen.size, { timeout: 2_000 }).toBe(0);
  });

  it("times a request out whose answer stops halfway through the body", { timeout: 5_000 }, async () => {
    const t = stalled(300);
    await expect(t.request("GET", "/api/v1/namespaces/ns/configmaps/half")).rejects.toBeInstanceOf(
      RequestTimeoutError,
    );
  });

  it("has a default timeout and lets one request override it", { timeout: 5_000 }, async () => {
    expect(DEFAULT_REQUEST_TIMEOUT_MS).toBe(30_000);
    const t = stalled();
    await expect(t.request("GET", "/api/v1/namespaces/ns/configmaps/x", { timeoutMs: 200 })).rejects.toThrow(
      /no answer within 200 ms/,
    );
  });

  it("reports the caller's own abort as such, not as a timeout", { timeout: 5_000 }, async () => {
    const t = stalled(10_000);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const err = await t
      .request("GET", "/api/v1/namespaces/ns/configmaps/x", { signal: ac.signal })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(RequestTimeoutError);
  });

  it("ends a watch that stays silent past its inactivity limit, so the informer restarts it", {
    timeout: 5_000,
  }, async () => {
    const t = stalled(60_000);
    const started = Date.now();
    const done = await new Promise<unknown>((resolve) => {
      void t.watch("/api/v1/namespaces/ns/configmaps", { resourceVersion: "1" }, () => {}, resolve, 300);
    });
    expect(done).toBeTruthy();
    expect((done as Error).name).toBe("TimeoutError");
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
