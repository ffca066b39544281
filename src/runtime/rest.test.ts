import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RealKubeClient } from "./client.ts";
import { ApiError, isNotFound } from "./errors.ts";
import { KubeListWatch } from "./listwatch.ts";
import { KubeTransport } from "./rest.ts";

// The raw transport and RealKubeClient against a scripted HTTP server on loopback: what goes on
// the wire (paths, query, content types) and how answers are read. The real API server is
// exercised by test/integration/runtime.

interface Seen {
  method: string;
  url: string;
  contentType?: string;
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
    seen.push({ method: req.method!, url: req.url!, contentType: req.headers["content-type"], body });
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
    if (url.pathname === "/api/v1/namespaces/ns/configmaps/missing") {
      return json(404, {
        kind: "Status",
        reason: "NotFound",
        message: 'configmaps "missing" not found',
        code: 404,
      });
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
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: "u", token: "t0ken" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
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
