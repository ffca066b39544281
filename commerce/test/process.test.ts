import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { freshDatabase, OPERATOR_KEY } from "./support/harness.ts";

// The real process (node src/main.ts), as the container runs it.

function run(env: Record<string, string>) {
  const child = spawn(process.execPath, ["src/main.ts"], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr.on("data", (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  return { child, exited, output: () => out };
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });

describe("the service process", () => {
  it("refuses to start on an invalid setting, naming it (exit 78)", async () => {
    const p = run({ DATABASE_URL: "postgres://x@127.0.0.1:1/x", PLATFORM_PLAN: "Gold", CONFIG_SHOP: "{}" });
    expect(await p.exited).toBe(78);
    expect(p.output()).toMatch(/refusing to start/);
    expect(p.output()).toMatch(/PLATFORM_PLAN/);
    expect(p.output()).toMatch(/CONFIG_SHOP: unknown setting/);
  });

  it("waits for a database that does not answer yet instead of exiting", async () => {
    const port = await freePort();
    const p = run({ DATABASE_URL: `postgres://x@127.0.0.1:${port}/x`, PORT: String(await freePort()) });
    let exited = false;
    void p.exited.then(() => (exited = true));
    const deadline = Date.now() + 15_000;
    while ((p.output().match(/database not reachable yet/g) ?? []).length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(p.output()).toMatch(/"code":"ECONNREFUSED"/);
    expect(exited).toBe(false);
    p.child.kill("SIGTERM");
    await p.exited;
  });

  it("migrates, serves with the operator's key, and stops cleanly on SIGTERM", async () => {
    const port = await freePort();
    const p = run({
      DATABASE_URL: await freshDatabase(),
      PORT: String(port),
      COMMERCE_LISTEN_HOST: "127.0.0.1",
      API_KEY: OPERATOR_KEY,
      COMMERCE_LOG_LEVEL: "warn",
    });
    try {
      let ready = 0;
      for (let i = 0; i < 100 && ready !== 200; i++) {
        ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.status,
          () => 0,
        );
        if (ready !== 200) await new Promise((r) => setTimeout(r, 200));
      }
      expect(ready).toBe(200);
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/products`, {
        headers: { authorization: `Bearer ${OPERATOR_KEY}` },
      });
      expect(r.status).toBe(200);
      const g = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: "POST",
        headers: { authorization: `Bearer ${OPERATOR_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ query: "{ products { nodes { id } } }" }),
      });
      expect(await g.json()).toMatchObject({
        data: { products: { nodes: [] } },
        extensions: { cost: { requestedQueryCost: 41 } },
      });
      expect(p.output()).not.toContain(OPERATOR_KEY);
    } finally {
      p.child.kill("SIGTERM");
    }
    expect(await p.exited).toBe(0);
  });
});
