import { describe, expect, it } from "vitest";
import { API_VERSION } from "../api/v1alpha1/kind.ts";
import type { ScheduledTask } from "../api/v1alpha1/scheduledtask.ts";
import { silentLogger } from "../log.ts";
import { ApiError } from "../runtime/errors.ts";
import { FakeKubeClient } from "../runtime/fake-client.ts";
import { FakeListWatch } from "../runtime/fake-listwatch.ts";
import { createDashboard } from "./server.ts";
import { SharedTaskCache } from "./task-cache.ts";
import { FakeViewerApi, injectSignIn, sampleTask } from "./testing.ts";

const TASKS = "/dashboard/compute/serverless/tasks";

/** A viewer whose own LISTs are counted. */
class CountingViewer extends FakeViewerApi {
  lists = 0;
  override async listTasks(namespace: string): Promise<ScheduledTask[]> {
    this.lists++;
    return super.listTasks(namespace);
  }
}

function setup(names: string[]) {
  const client = new FakeKubeClient({
    objects: names.map((n) => ({
      ...sampleTask(n),
      metadata: { ...sampleTask(n).metadata, managedFields: [{}] },
    })),
  });
  const sources = new Map<string, FakeListWatch>();
  const cache = new SharedTaskCache({
    log: silentLogger(),
    sourceFor: (ns) => {
      const s = new FakeListWatch(client, API_VERSION, "ScheduledTask", ns);
      // The dashboard's ServiceAccount was given nothing in "private".
      if (ns === "private") s.failNext.push(new ApiError(403, "Forbidden", "forbidden"));
      sources.set(ns, s);
      return s;
    },
  });
  return { client, cache, sources };
}

describe("shared task cache", () => {
  it("lists once per namespace for every viewer, follows changes by watch, sorted by name, without managedFields", async () => {
    const { client, cache, sources } = setup(["gamma", "alpha", "beta"]);
    const first = await cache.tasks("default");
    expect(first?.map((t) => t.metadata.name)).toEqual(["alpha", "beta", "gamma"]);
    const raw = await client.get(API_VERSION, "ScheduledTask", "default", "alpha");
    expect((raw?.metadata as { managedFields?: unknown } | undefined)?.managedFields).toEqual([{}]);
    expect((first?.[0]?.metadata as { managedFields?: unknown } | undefined)?.managedFields).toBeUndefined();
    await client.create(sampleTask("aardvark"));
    await new Promise((r) => setImmediate(r));
    expect((await cache.tasks("default"))?.map((t) => t.metadata.name)).toEqual([
      "aardvark",
      "alpha",
      "beta",
      "gamma",
    ]);
    // 1 probe + 1 informer list, however many reads.
    expect(sources.get("default")?.calls.list).toBe(2);
    expect(await cache.tasks("private")).toBeUndefined();
    await cache.stop();
  });

  it("serves the list and search from the cache only to viewers allowed to list there; others get the 403", async () => {
    const { cache } = setup(["alpha", "beta"]);
    const reader = new CountingViewer(
      { username: "r", groups: [] },
      new Set(["list scheduledtasks default"]),
    );
    const stranger = new CountingViewer(
      { username: "s", groups: [] },
      new Set(["list scheduledtasks other"]),
      ["other"],
    );
    const viewers: Record<string, FakeViewerApi> = { r: reader, s: stranger };
    const app = await createDashboard({
      log: silentLogger(),
      viewerApi: (t) => viewers[t] as FakeViewerApi,
      taskCache: cache,
    });
    const { cookie, body } = await injectSignIn(app, "r", `${TASKS}?namespace=default`);
    expect(body).toContain('data-task="alpha"');
    const search = await app.inject({ url: `${TASKS}/results?namespace=default&q=be`, headers: { cookie } });
    expect(search.body).toContain('data-task="beta"');
    expect(search.body).not.toContain('data-task="alpha"');
    expect(reader.lists).toBe(0);

    const other = await injectSignIn(app, "s", `${TASKS}?namespace=other`);
    const refused = await app.inject({
      url: `${TASKS}?namespace=default`,
      headers: { cookie: other.cookie },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).not.toContain("alpha");
    const partial = await app.inject({
      url: `${TASKS}/results?namespace=default&q=a`,
      headers: { cookie: other.cookie },
    });
    expect(partial.statusCode).toBe(403);
    expect(partial.body).not.toContain("alpha");
    await app.close();
    await cache.stop();
  });

  it("falls back to the viewer's own LIST where the dashboard may not list", async () => {
    const { cache } = setup([]);
    const viewer = new CountingViewer({ username: "p", groups: [] }, new Set(["* * *"]), ["private"]);
    viewer.tasks.set("private/secret-job", sampleTask("secret-job", "private"));
    const app = await createDashboard({ log: silentLogger(), viewerApi: () => viewer, taskCache: cache });
    const { body } = await injectSignIn(app, "t", `${TASKS}?namespace=private`);
    expect(body).toContain('data-task="secret-job"');
    expect(viewer.lists).toBe(1);
    await app.close();
    await cache.stop();
  });
});
