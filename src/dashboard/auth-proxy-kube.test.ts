import { createServer, type Server } from "node:http";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ImpersonatingKubeConfig } from "./auth-proxy-kube.ts";
import { KubeViewerApi } from "./kube.ts";

// What reaches the API server for a proxy viewer: the dashboard's own bearer and one header line
// per impersonated group (a loopback server records the raw header lines).

let server: Server;
const seen: string[][] = [];
let base: KubeConfig;

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.rawHeaders);
    res.setHeader("Content-Type", "application/json");
    res.end(JSON.stringify({ status: { userInfo: { username: "proxy:bob", groups: ["x"] } }, items: [] }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  base = new KubeConfig();
  base.loadFromOptions({
    clusters: [{ name: "c", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: "dashboard", token: "dashboard-token", impersonate: "someone" }],
    contexts: [{ name: "c", cluster: "c", user: "dashboard" }],
    currentContext: "c",
  });
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const lines = (raw: string[]) => {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) out.push(`${raw[i]?.toLowerCase()}: ${raw[i + 1]}`);
  return out;
};

it("adds Impersonate-User, one Impersonate-Group line per group and escaped extras to the dashboard's credentials", async () => {
  seen.length = 0;
  const kc = new ImpersonatingKubeConfig(base, {
    username: "proxy:bob",
    groups: ["team-x", "team, y"],
    extra: { "scopes/x": ["a", "b"], "f(x)": ["c"] },
  });
  const api = new KubeViewerApi(base, kc);
  await api.whoAmI();
  await api.listTasks("default");
  expect(seen).toHaveLength(2);
  for (const raw of seen) {
    const got = lines(raw).filter((l) => /^(impersonate-|authorization)/.test(l));
    expect(got.sort()).toEqual(
      [
        "authorization: Bearer dashboard-token",
        "impersonate-user: proxy:bob",
        "impersonate-group: team-x",
        "impersonate-group: team, y",
        "impersonate-extra-scopes%2fx: a",
        "impersonate-extra-scopes%2fx: b",
        "impersonate-extra-f%28x%29: c",
      ].sort(),
    );
  }
});
