import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig, type User } from "@kubernetes/client-node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ApiError } from "./errors.ts";
import { KubeTransport } from "./rest.ts";
import { execPluginUser } from "./testing.ts";

// The credentials cache of the transport (kube-auth.ts) against a loopback HTTP server that
// records the Authorization header of each request and answers 401 to the tokens it is told to
// refuse; credentials come from real token files and a real exec plugin (a Node script).

let server: Server;
let port = 0;
/** Authorization header of each request, in order. */
const seen: string[] = [];
const refused = new Set<string>();

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    const auth = req.headers.authorization ?? "";
    seen.push(auth);
    const ok = !refused.has(auth);
    res.writeHead(ok ? 200 : 401, { "content-type": "application/json" });
    res.end(
      JSON.stringify(
        ok
          ? { kind: "Echo", auth }
          : { kind: "Status", code: 401, reason: "Unauthorized", message: "Unauthorized" },
      ),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  seen.length = 0;
  refused.clear();
});

const dir = mkdtempSync(join(tmpdir(), "kube-auth-"));

function kubeConfig(user: Omit<User, "name">): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: "u", ...user }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return kc;
}

/** How many times client-node was asked for the credentials. */
function countPrepares(kc: KubeConfig): { n: number } {
  const count = { n: 0 };
  const prepare = kc.applyToHTTPSOptions.bind(kc);
  kc.applyToHTTPSOptions = (opts) => {
    count.n++;
    return prepare(opts);
  };
  return count;
}

function tokenFile(token: string): string {
  const file = join(mkdtempSync(join(dir, "tf-")), "token");
  writeFileSync(file, `${token}\n`);
  return file;
}

/** An exec plugin that counts its runs and answers token `tok-<run>` (from 1), expiring `ttlMs` later (0: no expiry). */
function execPlugin(ttlMs: number): { user: Omit<User, "name">; runs: () => number } {
  const expiry = ttlMs > 0 ? `, expirationTimestamp: new Date(Date.now() + ${ttlMs}).toISOString()` : "";
  return execPluginUser(dir, `{ token: "tok-" + (run + 1)${expiry} }`);
}

const get = (t: KubeTransport) => t.request<{ auth: string }>("GET", "/api/v1/namespaces/ns/configmaps/x");

describe("KubeTransport credentials", () => {
  it("prepares a static token once for every request and watch", async () => {
    const kc = kubeConfig({ token: "static" });
    const prepares = countPrepares(kc);
    const t = KubeTransport.create(kc);
    await Promise.all([get(t), get(t), get(t)]);
    await get(t);
    await new Promise((resolve) => void t.watch("/api/v1/configmaps", {}, () => {}, resolve));
    expect(seen).toEqual(Array(5).fill("Bearer static"));
    expect(prepares.n).toBe(1);
  });

  it("sends basic auth as its header", async () => {
    const t = KubeTransport.create(kubeConfig({ username: "ann", password: "s3cret" }));
    await get(t);
    expect(seen).toEqual([`Basic ${Buffer.from("ann:s3cret").toString("base64")}`]);
  });

  it("re-reads a token file after the refresh interval, not before", async () => {
    const file = tokenFile("one");
    let now = 1_000_000;
    const t = KubeTransport.create(
      kubeConfig({ authProvider: { name: "tokenFile", config: { tokenFile: file } } }),
      {
        auth: { now: () => now },
      },
    );
    await get(t);
    writeFileSync(file, "two\n");
    now += 59_000;
    await get(t);
    now += 1_001;
    await get(t);
    await get(t);
    expect(seen).toEqual(["Bearer one", "Bearer one", "Bearer two", "Bearer two"]);
  });

  it("after a 401 prepares the credentials anew and retries once", async () => {
    const file = tokenFile("old");
    const t = KubeTransport.create(
      kubeConfig({ authProvider: { name: "tokenFile", config: { tokenFile: file } } }),
    );
    await get(t);
    writeFileSync(file, "new");
    refused.add("Bearer old"); // rotated: the server no longer takes the old token
    await expect(get(t)).resolves.toMatchObject({ auth: "Bearer new" });
    expect(seen).toEqual(["Bearer old", "Bearer old", "Bearer new"]);
  });

  it("returns a second 401 to the caller", async () => {
    const file = tokenFile("bad");
    const t = KubeTransport.create(
      kubeConfig({ authProvider: { name: "tokenFile", config: { tokenFile: file } } }),
    );
    refused.add("Bearer bad");
    const err = await get(t).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).statusCode).toBe(401);
    expect(seen).toEqual(["Bearer bad", "Bearer bad"]);
  });

  it("does not retry a 401 of a static token (preparing it again changes nothing)", async () => {
    const t = KubeTransport.create(kubeConfig({ token: "static" }));
    refused.add("Bearer static");
    await expect(get(t)).rejects.toMatchObject({ statusCode: 401 });
    expect(seen).toEqual(["Bearer static"]);
  });

  it("keeps exec credentials until their expiry, then runs the plugin again", {
    timeout: 10_000,
  }, async () => {
    const plugin = execPlugin(1_500);
    const t = KubeTransport.create(kubeConfig(plugin.user));
    await Promise.all([get(t), get(t)]);
    await get(t);
    expect(plugin.runs()).toBe(1);
    await new Promise((r) => setTimeout(r, 1_600));
    await get(t);
    expect(plugin.runs()).toBe(2);
    expect(seen).toEqual(["Bearer tok-1", "Bearer tok-1", "Bearer tok-1", "Bearer tok-2"]);
  });

  it("on a 401 drops the exec credential and runs the plugin again", { timeout: 10_000 }, async () => {
    const plugin = execPlugin(0); // no expiry: kept until the server refuses it
    let now = 0;
    const t = KubeTransport.create(kubeConfig(plugin.user), { auth: { now: () => now } });
    await get(t);
    now += 60_000; // past the short TTL: prepared again, but client-node still has the credential
    await get(t);
    expect(plugin.runs()).toBe(1);
    refused.add("Bearer tok-1");
    await expect(get(t)).resolves.toMatchObject({ auth: "Bearer tok-2" });
    expect(plugin.runs()).toBe(2);
    expect(seen).toEqual(["Bearer tok-1", "Bearer tok-1", "Bearer tok-1", "Bearer tok-2"]);
  });
});
