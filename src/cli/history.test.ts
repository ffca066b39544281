import type { AddressInfo } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskExecutionSpec } from "../api/v1alpha1/taskexecution.ts";
import type { Authorizer } from "../archive/http.ts";
import { startHistoryServer } from "../archive/http.ts";
import { MemoryExecutionArchive } from "../archive/memory.ts";
import { archiveCommand } from "./history.ts";

// The CLI against the real endpoint (in this process, on a loopback port) over the in-memory archive.

const authorizer: Authorizer = {
  async check(token, a) {
    if (token !== "good") return "unauthenticated";
    return a.verb === "list" || a.name === "a" ? "allowed" : "forbidden";
  },
};

function spec(hour: number, result: "Succeeded" | "Failed"): TaskExecutionSpec {
  const t = new Date(Date.UTC(2026, 10, 1, hour)).toISOString();
  return {
    taskName: "a",
    trigger: "Schedule",
    jobName: `a-${hour}`,
    language: "Bash",
    plan: "Micro",
    completionTime: t,
    durationSeconds: 3,
    billedSeconds: 3,
    cost: "0.000012",
    currency: "USD",
    result,
    exitCode: result === "Failed" ? 1 : 0,
    reason: "Completed",
    message: result === "Failed" ? "exit code 1" : "exit code 0",
    output: `hello from ${hour}\n`,
    outputTruncated: false,
    expiresAt: t,
  };
}

let server: Awaited<ReturnType<typeof startHistoryServer>>;
let url = "";
beforeAll(async () => {
  const archive = new MemoryExecutionArchive();
  await archive.insert([
    { namespace: "ns", name: "a-1", taskUid: "u", spec: spec(1, "Succeeded") },
    { namespace: "ns", name: "a-2", taskUid: "u", spec: spec(2, "Failed") },
  ]);
  server = await startHistoryServer(
    { host: "127.0.0.1", port: 0, log: pino({ level: "silent" }) },
    { archive, authorizer, now: () => new Date("2026-11-01T12:00:00Z") },
  );
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server?.close());

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const [sub, ...rest] = argv;
  const code = await archiveCommand(
    sub as "history",
    [...rest, "--server", url],
    { out: (l) => out.push(l), err: (l) => err.push(l), now: () => new Date() },
    { KUBECONFIG: "/nonexistent" },
  );
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("cronscale history, logs, usage", () => {
  it("lists history as a table or JSON, failed only", async () => {
    const t = await cli("history", "a", "-n", "ns", "--token", "good");
    expect(t.code).toBe(0);
    expect(t.out.split("\n")[0]).toMatch(/^NAME\s+RESULT\s+EXIT\s+FINISHED\s+BILLED\s+COST\s+MESSAGE$/);
    expect(t.out).toMatch(/a-2\s+Failed\s+1\s+2026-11-01T02:00:00.000Z\s+3\s+0.000012 USD\s+exit code 1/);
    const j = await cli("history", "a", "-n", "ns", "--token", "good", "--failed", "--output", "json");
    expect(JSON.parse(j.out).items.map((i: { name: string }) => i.name)).toEqual(["a-2"]);
  });

  it("pages with --limit and --cursor (the next page's cursor on stderr), filters by --result", async () => {
    const first = await cli("history", "a", "-n", "ns", "--token", "good", "--limit", "1");
    expect(first.out).toContain("a-2");
    expect(first.out).not.toContain("a-1");
    const cursor = /^more: --cursor (\S+)$/.exec(first.err)?.[1] ?? "";
    expect(cursor).not.toBe("");
    const second = await cli(
      "history",
      "a",
      "-n",
      "ns",
      "--token",
      "good",
      "--limit",
      "1",
      "--cursor",
      cursor,
      "-o",
      "yaml",
    );
    expect(second.out).toMatch(/name: a-1/);
    expect(second.out).not.toMatch(/^next:/m);
    const ok = await cli(
      "history",
      "a",
      "-n",
      "ns",
      "--token",
      "good",
      "--result",
      "Succeeded",
      "-o",
      "json",
    );
    expect(JSON.parse(ok.out).items.map((i: { name: string }) => i.name)).toEqual(["a-1"]);
  });

  it("prints a run's output and the month's usage", async () => {
    expect((await cli("logs", "a", "-n", "ns", "--token", "good", "--run", "a-1")).out).toBe("hello from 1");
    const u = await cli("usage", "-n", "ns", "--token", "good", "--month", "2026-11");
    expect(u.out).toMatch(/a\s+2\s+6\s+0.000024 USD/);
  });

  it("says 401 without a token and 403 for a task the token may not read", async () => {
    expect(await cli("history", "a", "-n", "ns")).toMatchObject({
      code: 1,
      err: expect.stringMatching(/^error: 401/),
    });
    expect(await cli("history", "b", "-n", "ns", "--token", "good")).toMatchObject({
      code: 1,
      err: expect.stringMatching(/^error: 403: forbidden/),
    });
  });
});
