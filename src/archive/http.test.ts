import { get as httpsGet } from "node:https";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import type { TaskExecutionSpec } from "../api/v1alpha1/taskexecution.ts";
import { silentLogger } from "../log.ts";
import { issueServingTls } from "../runtime/x509.ts";
import { type Access, type Authorizer, handle, parseSince, startHistoryServer } from "./http.ts";
import { MemoryExecutionArchive } from "./memory.ts";

/** Tokens and what each may do: "reader" may get task a in ns; "lister" may list in ns. */
const authorizer: Authorizer = {
  async check(token: string, a: Access) {
    if (token === "reader")
      return a.verb === "get" && a.namespace === "ns" && a.name === "a" ? "allowed" : "forbidden";
    if (token === "lister") return a.namespace === "ns" ? "allowed" : "forbidden";
    return "unauthenticated";
  },
};

const NOW = new Date("2026-11-02T00:00:00Z");

function spec(i: number, result: "Succeeded" | "Failed"): TaskExecutionSpec {
  const t = new Date(Date.UTC(2026, 10, 1, i)).toISOString();
  return {
    taskName: "a",
    trigger: "Schedule",
    jobName: `a-${i}`,
    language: "Bash",
    plan: "Micro",
    completionTime: t,
    durationSeconds: 1,
    billedSeconds: 1,
    cost: "0.000004",
    currency: "USD",
    result,
    reason: "Completed",
    message: "m",
    output: `out ${i}`,
    outputTruncated: false,
    expiresAt: t,
  };
}

async function deps() {
  const archive = new MemoryExecutionArchive();
  await archive.insert([
    { namespace: "ns", name: "a-1", taskUid: "u", spec: spec(1, "Succeeded") },
    { namespace: "ns", name: "a-2", taskUid: "u", spec: spec(20, "Failed") },
  ]);
  return { archive, authorizer, now: () => NOW };
}

describe("history endpoint", () => {
  it("answers 401 without a token or with an invalid one, 403 when the token may not get the task", async () => {
    const d = await deps();
    const path = "/api/v1/namespaces/ns/scheduledtasks/a/history";
    expect((await handle("GET", path, undefined, d)).status).toBe(401);
    expect((await handle("GET", path, "Bearer nobody", d)).status).toBe(401);
    expect(
      (await handle("GET", "/api/v1/namespaces/ns/scheduledtasks/b/history", "Bearer reader", d)).status,
    ).toBe(403);
    expect((await handle("GET", "/api/v1/namespaces/ns/usage", "Bearer reader", d)).status).toBe(403);
  });

  it("lists history since a time, failed only, and gives a run's logs", async () => {
    const d = await deps();
    const all = await handle("GET", "/api/v1/namespaces/ns/scheduledtasks/a/history", "Bearer reader", d);
    expect(all.status).toBe(200);
    expect((all.body as { items: { name: string }[] }).items.map((i) => i.name)).toEqual(["a-2", "a-1"]);
    const since = await handle(
      "GET",
      "/api/v1/namespaces/ns/scheduledtasks/a/history?since=10h",
      "Bearer reader",
      d,
    );
    expect((since.body as { items: { name: string }[] }).items.map((i) => i.name)).toEqual(["a-2"]);
    const failed = await handle(
      "GET",
      "/api/v1/namespaces/ns/scheduledtasks/a/history?failed=true",
      "Bearer reader",
      d,
    );
    expect((failed.body as { items: { name: string }[] }).items.map((i) => i.name)).toEqual(["a-2"]);
    const logs = await handle(
      "GET",
      "/api/v1/namespaces/ns/scheduledtasks/a/logs?run=a-1",
      "Bearer reader",
      d,
    );
    expect(logs.body).toMatchObject({ name: "a-1", spec: { output: "out 1" } });
    expect(
      (await handle("GET", "/api/v1/namespaces/ns/scheduledtasks/a/logs?run=zz", "Bearer reader", d)).status,
    ).toBe(404);
  });

  it("pages history by cursor and filters it by result", async () => {
    const d = await deps();
    await d.archive.insert(
      [3, 4, 5].map((i) => ({ namespace: "ns", name: `a-${i}`, taskUid: "u", spec: spec(i, "Succeeded") })),
    );
    const path = "/api/v1/namespaces/ns/scheduledtasks/a/history";
    const names: string[] = [];
    let url = `${path}?limit=2`;
    for (let pages = 0; pages < 5; pages++) {
      const r = await handle("GET", url, "Bearer reader", d);
      const body = r.body as { items: { name: string }[]; next?: string };
      names.push(...body.items.map((i) => i.name));
      if (!body.next) break;
      url = `${path}?limit=2&cursor=${body.next}`;
    }
    expect(names).toEqual(["a-2", "a-5", "a-4", "a-3", "a-1"]);
    const failed = await handle("GET", `${path}?result=Failed`, "Bearer reader", d);
    expect(failed.body).toEqual({ items: [expect.objectContaining({ name: "a-2" })] });
    expect((await handle("GET", `${path}?result=Maybe`, "Bearer reader", d)).status).toBe(400);
    expect((await handle("GET", `${path}?cursor=zzz`, "Bearer reader", d)).status).toBe(400);
  });

  it("totals usage for the namespace and refuses bad input naming it", async () => {
    const d = await deps();
    const usage = await handle("GET", "/api/v1/namespaces/ns/usage?month=2026-11", "Bearer lister", d);
    expect(usage.body).toEqual({
      month: "2026-11",
      items: [
        {
          namespace: "ns",
          taskName: "a",
          month: "2026-11",
          currency: "USD",
          runs: 2,
          billedSeconds: 2,
          cost: "0.000008",
        },
      ],
    });
    expect(
      (await handle("GET", "/api/v1/namespaces/ns/usage?month=2026-13", "Bearer lister", d)).body,
    ).toEqual({
      error: "month must be YYYY-MM",
    });
    expect(
      (
        await handle(
          "GET",
          "/api/v1/namespaces/ns/scheduledtasks/a/history?since=yesterday",
          "Bearer reader",
          d,
        )
      ).status,
    ).toBe(400);
    expect(parseSince("24h", NOW)?.toISOString()).toBe("2026-11-01T00:00:00.000Z");
  });
});

describe("history endpoint over TLS from PEM text (a Secret the operator read)", () => {
  it("serves HTTPS a client trusting the Secret's CA accepts", async () => {
    const tls = issueServingTls({
      caName: "history CA",
      commonName: "history",
      dnsNames: ["history.ns.svc"],
      ipAddresses: ["127.0.0.1"],
      days: 1,
    });
    const server = await startHistoryServer(
      { host: "127.0.0.1", port: 0, log: silentLogger(), tls: { cert: tls.cert, key: tls.key } },
      await deps(),
    );
    try {
      const port = (server.address() as AddressInfo).port;
      const status = await new Promise<number | undefined>((resolve, reject) => {
        httpsGet(
          { host: "127.0.0.1", port, path: "/api/v1/namespaces/ns/scheduledtasks/a/history", ca: tls.ca },
          (res) => {
            res.resume();
            resolve(res.statusCode);
          },
        ).on("error", reject);
      });
      expect(status).toBe(401);
    } finally {
      server.close();
    }
  });
});
