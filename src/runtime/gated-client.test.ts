import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RealKubeClient } from "./client.ts";
import { GatedKubeClient, NotLeaderError } from "./gated-client.ts";
import { KubeTransport } from "./rest.ts";
import type { KubeObject } from "./types.ts";

// The leader gate over the real client and transport, against a loopback HTTP server that records
// what reaches it: a write decided on while leading must not go out once the lease has lapsed
// during the transport's own awaits (discovery, credentials) or while it waits for its
// connection, as after a SIGSTOP in between.

let server: Server;
let port = 0;
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const path = new URL(req.url!, "http://x").pathname;
      seen.push(`${req.method} ${path}`);
      const resources =
        path === "/api/v1"
          ? [{ name: "configmaps", kind: "ConfigMap", namespaced: true }]
          : path === "/apis/example.com/v1"
            ? [{ name: "widgets", kind: "Widget", namespaced: true }]
            : undefined;
      // Every request connects anew, so each has a wait for its connection.
      res.writeHead(200, { "content-type": "application/json", connection: "close" });
      res.end(
        JSON.stringify(
          resources ? { resources } : { apiVersion: "v1", kind: "Echo", metadata: { name: "e" } },
        ),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  seen.length = 0;
});

/** A gate over a real client whose kubeconfig runs `onCredentials` after each credential step. */
function setup(onCredentials: () => void) {
  // A token file read again before every request (refresh interval 0), so that each request has
  // the credentials step the transport awaits last.
  const tokenFile = join(mkdtempSync(join(tmpdir(), "gated-")), "token");
  writeFileSync(tokenFile, "t0ken");
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: "u", authProvider: { name: "tokenFile", config: { tokenFile } } }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  // The transport's last await before sending: the lease lapses right there, as when the process
  // is stopped while the credentials are prepared and resumed past its renew deadline.
  const prepare = kc.applyToHTTPSOptions.bind(kc);
  kc.applyToHTTPSOptions = async (opts) => {
    await prepare(opts);
    onCredentials();
  };
  const lease = { held: true };
  const base = new RealKubeClient(KubeTransport.create(kc, { auth: { tokenFileRefreshMs: 0 } }));
  return { lease, base, gate: new GatedKubeClient(base, () => lease.held) };
}

const cm = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns", resourceVersion: "1" },
});
const writes = () => seen.filter((s) => !s.startsWith("GET "));

describe("GatedKubeClient over the real transport", () => {
  it("checks the lease again after the transport's last await: no write of any verb goes out once it lapsed", async () => {
    let lapse = false;
    const { lease, base, gate } = setup(() => {
      if (lapse) lease.held = false;
    });
    await base.get("v1", "ConfigMap", "ns", "warm"); // discovery out of the way
    const calls: [string, () => Promise<unknown>][] = [
      ["apply", () => gate.apply(cm("a"))],
      ["applyStatus", () => gate.applyStatus(cm("a"))],
      ["create", () => gate.create(cm("a"))],
      ["replace", () => gate.replace(cm("a"))],
      ["delete", () => gate.delete("v1", "ConfigMap", "ns", "a")],
    ];
    for (const [verb, call] of calls) {
      lease.held = true;
      lapse = true;
      await expect(call(), verb).rejects.toBeInstanceOf(NotLeaderError);
    }
    expect(writes()).toEqual([]);

    // While the lease holds, the same calls go out.
    lapse = false;
    lease.held = true;
    for (const [, call] of calls) await call();
    expect(writes()).toEqual([
      "PATCH /api/v1/namespaces/ns/configmaps/a",
      "PATCH /api/v1/namespaces/ns/configmaps/a/status",
      "POST /api/v1/namespaces/ns/configmaps",
      "PUT /api/v1/namespaces/ns/configmaps/a",
      "DELETE /api/v1/namespaces/ns/configmaps/a",
    ]);
  });

  it("checks it once more when the request has its connection: a lease lapsing while it connects stops it before its first byte", async () => {
    let lapse = false;
    const { lease, base, gate } = setup(() => {
      // After the transport's own check has passed, before the new connection is up.
      if (lapse) setImmediate(() => (lease.held = false));
    });
    await base.get("v1", "ConfigMap", "ns", "warm");
    lapse = true;
    await expect(gate.apply(cm("a"))).rejects.toBeInstanceOf(NotLeaderError);
    lease.held = true;
    await expect(gate.delete("v1", "ConfigMap", "ns", "a")).rejects.toBeInstanceOf(NotLeaderError);
    expect(writes()).toEqual([]);
    // The transport stays usable for requests outside the fence.
    await base.delete("v1", "ConfigMap", "ns", "a");
    expect(writes()).toEqual(["DELETE /api/v1/namespaces/ns/configmaps/a"]);
  });

  it("fences only the write's own request: discovery it starts, shared with others, and the base client (the elector's lease writes) are not held", async () => {
    let calls = 0;
    const { lease, base, gate } = setup(() => {
      calls++;
      if (calls === 1) lease.held = false; // lapses while the (shared) discovery is prepared
    });
    const widget: KubeObject = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w", namespace: "ns" },
    };
    const write = gate.apply(widget);
    const read = base.get("example.com/v1", "Widget", "ns", "w"); // awaits the same discovery
    await expect(write).rejects.toBeInstanceOf(NotLeaderError);
    await expect(read).resolves.toMatchObject({ kind: "Echo" });
    await base.replace(cm("lease"));
    expect(seen).toEqual([
      "GET /apis/example.com/v1",
      "GET /apis/example.com/v1/namespaces/ns/widgets/w",
      "GET /api/v1",
      "PUT /api/v1/namespaces/ns/configmaps/lease",
    ]);
  });
});
