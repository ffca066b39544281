import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { periodicRun } from "../../test/support/runs.ts";
import type { Authorizer } from "../archive/http.ts";
import { startHistoryServer } from "../archive/http.ts";
import { MemoryExecutionArchive } from "../archive/memory.ts";
import { silentLogger } from "../log.ts";
import { HttpArchiveReader } from "./archive.ts";
import { createDashboard } from "./server.ts";
import { FakeViewerApi, injectSignIn, sampleTask } from "./testing.ts";

// A task's history on its page, read from the real history endpoint (in this process, on a
// loopback port) over the in-memory archive, with the signed-in viewer's own token.

const TASK = "/dashboard/compute/serverless/tasks/default/every-minute";
const NOW = new Date("2026-11-08T00:00:00Z");
const TOKEN = "token-of-alice";

/** Alice's token may get task every-minute in default; any other is refused. */
const authorizer: Authorizer = {
  async check(token, a) {
    if (token !== TOKEN) return "unauthenticated";
    return a.namespace === "default" && a.name === "every-minute" ? "allowed" : "forbidden";
  },
};

let app: FastifyInstance | undefined;
let server: Server | undefined;
afterEach(async () => {
  await app?.close();
  server?.close();
  app = server = undefined;
});

async function start(runs: number) {
  const archive = new MemoryExecutionArchive();
  await archive.insert(
    Array.from({ length: runs }, (_, i) => periodicRun("default", "every-minute", i, NOW)),
  );
  server = await startHistoryServer(
    { host: "127.0.0.1", port: 0, log: silentLogger() },
    { archive, authorizer, now: () => NOW },
  );
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const viewer = new FakeViewerApi({ username: "alice", groups: [] }, new Set(["* * *"]));
  viewer.tasks.set("default/every-minute", sampleTask("every-minute", "default", { schedule: "* * * * *" }));
  const task = viewer.tasks.get("default/every-minute");
  if (task) task.metadata.creationTimestamp = "2026-10-01T09:30:00Z";
  app = await createDashboard({
    log: silentLogger(),
    viewerApi: () => viewer,
    now: () => NOW,
    archive: new HttpArchiveReader(url),
  });
  const { cookie } = await injectSignIn(app, TOKEN, TASK);
  const get = async (path: string) => {
    const r = await (app as FastifyInstance).inject({ method: "GET", url: path, headers: { cookie } });
    return { status: r.statusCode, body: r.body };
  };
  return { get, viewer };
}

const rowsOf = (html: string) => [...html.matchAll(/\/runs\/(every-minute-\d+)\/output/g)].map((m) => m[1]);
const olderOf = (html: string) =>
  /href="([^"]+)" rel="next">Older runs/.exec(html)?.[1]?.replaceAll("&amp;", "&");

describe("a task's page: history from the archive", () => {
  it("pages every run newest first by cursor, with the month's billed time and the creation time", async () => {
    const { get } = await start(130);
    const first = await get(TASK);
    expect(first.status).toBe(200);
    expect(first.body).toContain('<dt>Created</dt><dd><time datetime="2026-10-01T09:30:00Z"');
    expect(first.body).toMatch(
      /<dt>Billed this month<\/dt><dd><span>260 s <span class="muted">\(130 runs, 0\.00104 USD\)/,
    );
    const seen = rowsOf(first.body);
    expect(seen).toHaveLength(50);
    expect(seen[0]).toBe("every-minute-9999999999");
    let next = olderOf(first.body);
    while (next) {
      const page = await get(next);
      expect(page.body).toContain("Newest runs");
      seen.push(...rowsOf(page.body));
      next = olderOf(page.body);
    }
    expect(seen).toHaveLength(130);
    expect(new Set(seen).size).toBe(130);
    expect(seen.at(-1)).toBe(`every-minute-${9_999_999_999 - 129}`);
  });

  it("filters by result, and keeps the filter on the next page", async () => {
    const { get } = await start(1200);
    const failed = await get(`${TASK}?result=Failed`);
    const rows = rowsOf(failed.body);
    expect(rows).toHaveLength(50);
    expect(failed.body).not.toContain('class="badge Succeeded"');
    expect(failed.body).toContain('<option value="Failed" selected');
    const older = olderOf(failed.body);
    expect(older).toContain("result=Failed");
    const second = await get(older ?? "");
    expect(rowsOf(second.body)).toHaveLength(10); // 60 failed runs in 1,200
    expect(olderOf(second.body)).toBeUndefined();
  });

  it("shows any run's whole output", async () => {
    const { get } = await start(3);
    const out = await get(`${TASK}/runs/every-minute-9999999998/output`);
    expect(out.status).toBe(200);
    expect(out.body).toContain("run 1: ok\n</pre>");
    expect((await get(`${TASK}/runs/every-minute-1/output`)).status).toBe(404);
  });

  it("says why when the archive refuses the viewer or cannot be reached, and shows the runs kept as TaskExecutions", async () => {
    const { get, viewer } = await start(3);
    viewer.tasks.set("default/other", sampleTask("other"));
    const refused = await get("/dashboard/compute/serverless/tasks/default/other");
    expect(refused.status).toBe(200);
    expect(refused.body).toContain(
      "The execution archive refused: forbidden: the token may not get scheduledtask other",
    );
    expect(refused.body).toContain("No finished runs yet.");
    server?.close();
    const down = await get(TASK);
    expect(down.status).toBe(200);
    expect(down.body).toContain("The execution archive cannot be reached now");
    expect(rowsOf(down.body)).toEqual([]);
  });
});
