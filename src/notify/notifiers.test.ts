import { describe, expect, it } from "vitest";
import { API_VERSION } from "../api/v1alpha1/kind.ts";
import type { Notification } from "../api/v1alpha1/notification.ts";
import { type ScalePlatform, scalePlatformSpecSchema } from "../api/v1alpha1/scaleplatform.ts";
import { EXECUTION_CACHE } from "../controllers/scheduledtask/cache.ts";
import { silentLogger } from "../log.ts";
import { FakeKubeClient } from "../runtime/fake-client.ts";
import { FakeListWatch } from "../runtime/fake-listwatch.ts";
import { Manager } from "../runtime/manager.ts";
import type { CacheReader, KubeObject } from "../runtime/types.ts";
import { registerNotificationControllers } from "./index.ts";
import { PlatformNotifier, TaskNotifier, wantsNotifications } from "./notifiers.ts";
import { makeCtx, makeRun, makeTask, TEST_CONFIG } from "./testing.ts";

const key = { namespace: "ns", name: "nightly" };

async function notes(client: ReturnType<typeof makeCtx>["client"]) {
  return client.list<Notification>(API_VERSION, "Notification", "ns");
}

/** A cache that serves the client's objects except Notifications (an informer behind). */
function laggingCache(objects: KubeObject[]): CacheReader {
  const of = (kind: string) => objects.filter((o) => o.kind === kind);
  return {
    get: <T extends KubeObject>(_a: string, kind: string, _ns: string, name: string) =>
      of(kind).find((o) => o.metadata.name === name) as T | undefined,
    list: <T extends KubeObject>(_a: string, kind: string) => of(kind) as T[],
  };
}

describe("TaskNotifier", () => {
  it("creates one Notification for a failed run, owned by the task, and nothing at steady state", async () => {
    const task = makeTask("nightly");
    const { ctx, client } = makeCtx([task, makeRun(task, "2026-01-01T00:00:20Z", "Failed")]);
    const r = new TaskNotifier({ config: TEST_CONFIG });
    await r.reconcile(key, ctx);
    const created = await notes(client);
    expect(created).toHaveLength(1);
    expect(created[0]?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "ScheduledTask",
      uid: "uid-nightly",
    });
    expect(created[0]?.metadata.labels).toMatchObject({ "cronscale.io/task": "nightly" });
    client.clearWrites();
    await r.reconcile(key, ctx);
    await r.reconcile(key, ctx);
    expect(client.writes).toEqual([]);
  });

  it("re-checks a live list when the cache has not seen the last Notification, and creates nothing twice", async () => {
    const task = makeTask("nightly");
    const run = makeRun(task, "2026-01-01T00:00:20Z", "Failed");
    const { ctx, client } = makeCtx([task, run]);
    const r = new TaskNotifier({ config: TEST_CONFIG });
    await r.reconcile(key, ctx);
    client.clearWrites();
    await r.reconcile(key, { ...ctx, cache: laggingCache([task, run]) });
    expect(client.writes).toEqual([]);
    expect(await notes(client)).toHaveLength(1);
  });

  it("decides on records cached without their output and reads whole only the run a message quotes", async () => {
    const task = makeTask("nightly");
    const quiet = makeRun(task, "2026-01-01T00:00:10Z", "Succeeded", "fine");
    const failed = makeRun(task, "2026-01-01T00:00:20Z", "Failed", "step 3\nboom: disk full");
    const { ctx, client } = makeCtx([task, quiet, failed]);
    const trimmed = [quiet, failed].map((r) => EXECUTION_CACHE.transform?.(r) as KubeObject);
    expect(trimmed.map((r) => (r.spec as { output?: string }).output)).toEqual([undefined, undefined]);
    client.clearWrites();
    await new TaskNotifier({ config: TEST_CONFIG }).reconcile(key, {
      ...ctx,
      cache: laggingCache([task, ...trimmed]),
    });
    const [note] = await notes(client);
    expect(note?.spec.event).toBe("TaskFailed");
    expect(note?.spec.text).toContain("boom: disk full");
    expect(note?.spec.details?.outputTail).toBe("step 3\nboom: disk full");
    // One GET, of the quoted run; the other record's output is never read.
    const gets = client.reads.filter((r) => r.verb === "get" && r.kind === "TaskExecution");
    expect(gets.map((r) => r.name)).toEqual([failed.metadata.name]);
  });

  it("ignores runs of an earlier task of the same name and tasks without notifications", async () => {
    const task = makeTask("nightly");
    const old = makeRun(task, "2026-01-01T00:00:20Z", "Failed");
    old.metadata.ownerReferences = [
      { apiVersion: API_VERSION, kind: "ScheduledTask", name: "nightly", uid: "gone" },
    ];
    const quiet = makeTask("quiet");
    delete quiet.spec.notifications;
    const { ctx, client } = makeCtx([task, old, quiet, makeRun(quiet, "2026-01-01T00:00:21Z", "Failed")]);
    const r = new TaskNotifier({ config: TEST_CONFIG });
    await r.reconcile(key, ctx);
    await r.reconcile({ namespace: "ns", name: "quiet" }, ctx);
    expect(client.writes).toEqual([]);
  });

  it("a task without notifications wakes no pass of the notifier, one with them does", async () => {
    const quiet = makeTask("quiet");
    delete quiet.spec.notifications;
    expect(wantsNotifications(quiet)).toBe(false);
    expect(wantsNotifications(makeTask("nightly"))).toBe(true);
    const client = new FakeKubeClient();
    const manager = new Manager({
      client,
      sourceFor: (t, ns, o) => new FakeListWatch(client, t.apiVersion, t.kind, ns, o?.metadataOnly),
      log: silentLogger(),
      http: false,
      leaderElection: false,
    });
    registerNotificationControllers(manager, { config: TEST_CONFIG });
    const passes = async () => {
      const text = await manager.metrics.registry.metrics();
      const m = /controller_runtime_reconcile_total\{controller="notify-task",result="success"\} (\d+)/.exec(
        text,
      );
      return Number(m?.[1] ?? 0);
    };
    await client.apply(quiet);
    await manager.start();
    await client.applyStatus({ ...quiet, status: { phase: "Running" } });
    await new Promise((r) => setTimeout(r, 50));
    expect(await passes()).toBe(0);
    await client.apply(makeTask("nightly"));
    await new Promise((r) => setTimeout(r, 50));
    expect(await passes()).toBe(1);
    await manager.stop();
  });

  it("asks to be called back when held failures come due", async () => {
    const task = makeTask("nightly", { foldMinutes: 10 });
    const { ctx, client, clock } = makeCtx([task, makeRun(task, "2026-01-01T00:00:20Z", "Failed")]);
    const r = new TaskNotifier({ config: TEST_CONFIG });
    await r.reconcile(key, ctx);
    clock.advance(60_000);
    await client.create(makeRun(task, "2026-01-01T00:01:20Z", "Failed"));
    expect((await r.reconcile(key, ctx)).requeueAfter).toBe(9 * 60_000);
    expect(await notes(client)).toHaveLength(1);
    clock.advance(9 * 60_000);
    await r.reconcile(key, ctx);
    expect((await notes(client)).map((n) => n.spec.count).sort()).toEqual([1, 1]);
  });
});

describe("PlatformNotifier", () => {
  it("tells the store's contact once that the deployment completed", async () => {
    const p: ScalePlatform = {
      apiVersion: API_VERSION,
      kind: "ScalePlatform",
      metadata: { name: "shop", namespace: "ns", uid: "uid-shop", generation: 1 },
      spec: scalePlatformSpecSchema.parse({
        plan: "Standard",
        domains: { platform: "shop.example.test" },
        store: { name: "Shop", contactEmail: "owner@shop.example.test" },
      }),
      status: { phase: "Running", observedGeneration: 1, deployedTime: "2026-01-01T00:00:10Z" },
    };
    const { ctx, client } = makeCtx([p]);
    const r = new PlatformNotifier({ config: TEST_CONFIG });
    await r.reconcile({ namespace: "ns", name: "shop" }, ctx);
    const created = await notes(client);
    expect(created.map((n) => [n.spec.event, n.spec.recipients.email])).toEqual([
      ["DeploymentCompleted", ["owner@shop.example.test"]],
    ]);
    client.clearWrites();
    await r.reconcile({ namespace: "ns", name: "shop" }, ctx);
    expect(client.writes).toEqual([]);
  });
});
