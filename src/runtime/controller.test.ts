import { describe, expect, it } from "vitest";
import { silentLogger } from "../log.ts";
import { FakeClock } from "./clock.ts";
import { changedBeyondStatus } from "./controller.ts";
import { ApiError, TerminalError, WaitError } from "./errors.ts";
import { MemoryEventRecorder } from "./events.ts";
import { FakeKubeClient } from "./fake-client.ts";
import { FakeListWatch } from "./fake-listwatch.ts";
import { Manager } from "./manager.ts";
import type { KubeObject, ObjectKey, ReconcileContext, ReconcileResult } from "./types.ts";

const PARENT = { apiVersion: "example.com/v1", kind: "Parent" };
const CHILD = { apiVersion: "v1", kind: "ConfigMap" };

async function settle(rounds = 30): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}

function setup(
  reconcile: (key: ObjectKey, ctx: ReconcileContext) => Promise<ReconcileResult>,
  workers = 1,
  ignoreStatusOnlyUpdates = false,
  forPredicate?: (o: KubeObject) => boolean,
) {
  const clock = new FakeClock();
  const client = new FakeKubeClient({ clock });
  const events = new MemoryEventRecorder();
  const mgr = new Manager({
    client,
    sourceFor: (t, ns) => new FakeListWatch(client, t.apiVersion, t.kind, ns),
    log: silentLogger(),
    clock,
    events,
    http: false,
    leaderElection: false,
  });
  const calls: string[] = [];
  const ctrl = mgr.addController({
    name: "parent",
    for: PARENT,
    owns: [CHILD],
    workers,
    ignoreStatusOnlyUpdates,
    forPredicate,
    backoff: { baseMs: 100, jitter: 0 },
    reconciler: {
      reconcile: async (key, ctx) => {
        calls.push(`${key.namespace}/${key.name}`);
        return reconcile(key, ctx);
      },
    },
  });
  return { clock, client, mgr, ctrl, calls, events };
}

function parent(name: string): KubeObject {
  return { ...PARENT, metadata: { name, namespace: "ns" }, spec: { v: 1 } };
}

async function metric(mgr: Manager, name: string): Promise<string> {
  const text = await mgr.metrics.registry.metrics();
  return text
    .split("\n")
    .filter((l) => l.startsWith(name))
    .join("\n");
}

describe("Controller", () => {
  it("reconciles each existing primary object once the informer lists it", async () => {
    const { client, mgr, calls } = setup(async () => ({}));
    client.seed(parent("a"));
    client.seed(parent("b"));
    await mgr.start();
    await settle();
    expect(calls.sort()).toEqual(["ns/a", "ns/b"]);
    expect(await metric(mgr, "controller_runtime_reconcile_total")).toContain(
      'controller_runtime_reconcile_total{controller="parent",result="success"} 2',
    );
    await mgr.stop();
  });

  it("a child change enqueues its controlling owner", async () => {
    const { client, mgr, calls } = setup(async () => ({}));
    const p = client.seed(parent("p"));
    await mgr.start();
    await settle();
    calls.length = 0;
    await client.create({
      ...CHILD,
      metadata: {
        name: "c",
        namespace: "ns",
        ownerReferences: [{ ...PARENT, name: "p", uid: p.metadata.uid!, controller: true }],
      },
    });
    await client.create({ ...CHILD, metadata: { name: "orphan", namespace: "ns" } });
    await settle();
    expect(calls).toEqual(["ns/p"]);
    await mgr.stop();
  });

  it("with ignoreStatusOnlyUpdates, a status write wakes nothing, a spec or annotation change does", async () => {
    const run = async (ignore: boolean) => {
      const { client, mgr, calls } = setup(async () => ({}), 1, ignore);
      client.seed(parent("p"));
      await mgr.start();
      await settle();
      calls.length = 0;
      await client.applyStatus({
        ...PARENT,
        metadata: { name: "p", namespace: "ns" },
        status: { phase: "Up" },
      });
      await settle();
      const afterStatus = calls.length;
      await client.apply({ ...PARENT, metadata: { name: "p", namespace: "ns" }, spec: { v: 2 } });
      await settle();
      await client.apply({
        ...PARENT,
        metadata: { name: "p", namespace: "ns", annotations: { "example.com/run-now": "1" } },
      });
      await settle();
      await mgr.stop();
      return { afterStatus, total: calls.length };
    };
    expect(await run(false)).toEqual({ afterStatus: 1, total: 3 });
    expect(await run(true)).toEqual({ afterStatus: 0, total: 2 });
  });

  it("with forPredicate, only primary objects it accepts wake the controller; children still do", async () => {
    const wanted = (o: KubeObject) => (o.spec as { v?: number } | undefined)?.v === 2;
    const { client, mgr, calls } = setup(async () => ({}), 1, false, wanted);
    client.seed(parent("a"));
    client.seed({ ...parent("b"), spec: { v: 2 } });
    await mgr.start();
    await settle();
    expect(calls).toEqual(["ns/b"]);
    calls.length = 0;
    await client.applyStatus({
      ...PARENT,
      metadata: { name: "a", namespace: "ns" },
      status: { phase: "Up" },
    });
    await settle();
    expect(calls).toEqual([]);
    // Accepted from its new state on.
    await client.apply({ ...PARENT, metadata: { name: "a", namespace: "ns" }, spec: { v: 2 } });
    await settle();
    expect(calls).toEqual(["ns/a"]);
    calls.length = 0;
    await client.delete(PARENT.apiVersion, PARENT.kind, "ns", "b");
    await settle();
    expect(calls).toEqual(["ns/b"]);
    calls.length = 0;
    // A child of a primary the predicate refuses still wakes it (watched kinds are not filtered).
    await client.apply({ ...PARENT, metadata: { name: "c", namespace: "ns" }, spec: { v: 1 } });
    const owner = await client.get<KubeObject>(PARENT.apiVersion, PARENT.kind, "ns", "c");
    await client.apply({
      ...CHILD,
      metadata: {
        name: "c-child",
        namespace: "ns",
        ownerReferences: [
          {
            ...PARENT,
            name: "c",
            uid: owner?.metadata.uid ?? "",
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
    });
    await settle();
    expect(calls).toEqual(["ns/c"]);
    await mgr.stop();
  });

  it("changedBeyondStatus ignores status and server bookkeeping only", () => {
    const a: KubeObject = {
      ...PARENT,
      metadata: { name: "p", resourceVersion: "1", generation: 1, labels: { x: "1" } },
      status: { phase: "A" },
    };
    const status = { ...a, metadata: { ...a.metadata, resourceVersion: "2" }, status: { phase: "B" } };
    expect(changedBeyondStatus(a, status)).toBe(false);
    expect(changedBeyondStatus(a, { ...a, metadata: { ...a.metadata, generation: 2 } })).toBe(true);
    expect(changedBeyondStatus(a, { ...a, metadata: { ...a.metadata, labels: { x: "2" } } })).toBe(true);
    expect(changedBeyondStatus(a, { ...a, metadata: { ...a.metadata, finalizers: ["f"] } })).toBe(true);
    expect(
      changedBeyondStatus(a, {
        ...a,
        metadata: { ...a.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" },
      }),
    ).toBe(true);
  });

  it("retries a failing reconcile with per-key backoff and resets after success", async () => {
    let failures = 2;
    const { client, mgr, calls, clock, ctrl } = setup(async () => {
      if (failures-- > 0) throw new Error("transient");
      return {};
    });
    client.seed(parent("a"));
    await mgr.start();
    await settle();
    expect(calls).toHaveLength(1);
    clock.advance(100);
    await settle();
    expect(calls).toHaveLength(2);
    clock.advance(199);
    await settle();
    expect(calls).toHaveLength(2);
    clock.advance(1);
    await settle();
    expect(calls).toHaveLength(3);
    expect(ctrl.queue.numRequeues("ns/a")).toBe(0);
    expect(await metric(mgr, "controller_runtime_reconcile_total")).toContain('result="error"} 2');
    await mgr.stop();
  });

  it("requeueAfter and WaitError schedule the next pass without counting as failures", async () => {
    let n = 0;
    const { client, mgr, calls, clock, ctrl } = setup(async () => {
      n++;
      if (n === 1) return { requeueAfter: 5000 };
      if (n === 2) throw new WaitError(3000, "pods starting");
      return {};
    });
    client.seed(parent("a"));
    await mgr.start();
    await settle();
    clock.advance(5000);
    await settle();
    expect(calls).toHaveLength(2);
    clock.advance(3000);
    await settle();
    expect(calls).toHaveLength(3);
    expect(ctrl.queue.numRequeues("ns/a")).toBe(0);
    expect(await metric(mgr, "controller_runtime_reconcile_total")).toContain('result="requeue_after"} 2');
    await mgr.stop();
  });

  it("a TerminalError is not retried until the object changes", async () => {
    const { client, mgr, calls, clock } = setup(async () => {
      throw new TerminalError("InvalidSpec", "bad");
    });
    client.seed(parent("a"));
    await mgr.start();
    await settle();
    clock.advance(600_000);
    await settle();
    expect(calls).toHaveLength(1);
    await client.apply({ ...parent("a"), spec: { v: 2 } });
    await settle();
    expect(calls).toHaveLength(2);
    expect(await metric(mgr, "controller_runtime_terminal_reconcile_errors_total")).toContain("} 2");
    await mgr.stop();
  });

  it("a 409 conflict is requeued quietly with backoff", async () => {
    let first = true;
    const { client, mgr, calls, clock } = setup(async () => {
      if (first) {
        first = false;
        throw new ApiError(409, "Conflict", "modified");
      }
      return {};
    });
    client.seed(parent("a"));
    await mgr.start();
    await settle();
    clock.advance(100);
    await settle();
    expect(calls).toHaveLength(2);
    expect(await metric(mgr, "controller_runtime_reconcile_total")).toContain('result="requeue"} 1');
    await mgr.stop();
  });

  it("never runs one key twice at once, even with several workers", async () => {
    let active = 0;
    let maxActive = 0;
    let release: () => void = () => {};
    const { client, mgr, calls } = setup(async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      await new Promise<void>((r) => {
        release = r;
      });
      active--;
      return {};
    }, 4);
    client.seed(parent("a"));
    await mgr.start();
    await settle();
    await client.apply({ ...parent("a"), spec: { v: 2 } });
    await client.apply({ ...parent("a"), spec: { v: 3 } });
    await settle();
    expect(active).toBe(1);
    release();
    await settle();
    release();
    await settle();
    expect(maxActive).toBe(1);
    expect(calls).toHaveLength(2);
    const stopping = mgr.stop();
    release();
    await stopping;
  });

  it("graceful stop waits for the in-flight reconcile", async () => {
    let finish: () => void = () => {};
    let finished = false;
    const { client, mgr } = setup(async () => {
      await new Promise<void>((r) => {
        finish = r;
      });
      finished = true;
      return {};
    });
    client.seed(parent("a"));
    await mgr.start();
    await settle();
    let stopped = false;
    const s = mgr.stop().then(() => {
      stopped = true;
    });
    await settle();
    expect(stopped).toBe(false);
    finish();
    await s;
    expect(finished).toBe(true);
  });

  it("exposes the queue depth gauge", async () => {
    const { mgr } = setup(async () => ({}));
    expect(await metric(mgr, "workqueue_depth")).toContain(
      'workqueue_depth{controller="parent",name="parent"} 0',
    );
  });

  it("gives reconcilers a cache reader over the informers", async () => {
    let seen: unknown;
    const { client, mgr } = setup(async (key, ctx) => {
      seen = ctx.cache?.get(PARENT.apiVersion, PARENT.kind, key.namespace, key.name)?.spec;
      return {};
    });
    client.seed(parent("a"));
    await mgr.start();
    await settle();
    expect(seen).toEqual({ v: 1 });
    await mgr.stop();
  });
});
