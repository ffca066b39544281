import { describe, expect, it } from "vitest";
import { silentLogger } from "../log.ts";
import { FakeClock } from "./clock.ts";
import { OwnApplies } from "./echoes.ts";
import { MemoryEventRecorder } from "./events.ts";
import { FakeKubeClient } from "./fake-client.ts";
import { FakeListWatch } from "./fake-listwatch.ts";
import type { ListParams, ListWatchSource, WatchParams } from "./listwatch.ts";
import { Manager } from "./manager.ts";
import type { KubeObject } from "./types.ts";

const PARENT = { apiVersion: "example.com/v1", kind: "Parent" };
const CHILD = { apiVersion: "v1", kind: "ConfigMap" };

async function settle(rounds = 30): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}

/** A fake source whose watch events can be held back, as when the apply's answer comes first. */
class HeldListWatch implements ListWatchSource {
  readonly inner: FakeListWatch;
  held = false;
  private readonly queue: (() => void)[] = [];
  constructor(inner: FakeListWatch) {
    this.inner = inner;
  }
  get description() {
    return this.inner.description;
  }
  list(p: ListParams) {
    return this.inner.list(p);
  }
  watch(p: WatchParams, onEvent: (type: string, obj: unknown) => void, onDone: (err?: unknown) => void) {
    return this.inner.watch(
      p,
      (t, o) => (this.held ? this.queue.push(() => onEvent(t, o)) : onEvent(t, o)),
      onDone,
    );
  }
  /** Delivers the held events. */
  release(): void {
    this.held = false;
    for (const f of this.queue.splice(0)) f();
  }
  /** Loses the held events (a broken connection). */
  drop(): void {
    this.queue.length = 0;
  }
}

const parent = (name: string): KubeObject => ({
  ...PARENT,
  metadata: { name, namespace: "ns" },
  spec: { v: 1 },
});

/**
 * A "parent" controller whose pass applies ConfigMap "c-<name>" owned by the parent named in
 * `ownerOf` (itself by default), and an "other" controller woken by the same ConfigMaps.
 */
function setup(skip: boolean, ownerOf: (name: string) => string = (n) => n) {
  const clock = new FakeClock();
  const client = new FakeKubeClient({ clock });
  let childSource: HeldListWatch | undefined;
  const mgr = new Manager({
    client,
    sourceFor: (t, ns) => {
      const src = new FakeListWatch(client, t.apiVersion, t.kind, ns);
      if (t.kind !== CHILD.kind) return src;
      childSource ??= new HeldListWatch(src);
      return childSource;
    },
    log: silentLogger(),
    clock,
    events: new MemoryEventRecorder(),
    http: false,
    leaderElection: false,
  });
  const calls: string[] = [];
  const other: string[] = [];
  mgr.addController({
    name: "parent",
    for: PARENT,
    owns: [CHILD],
    skipOwnApplyEchoes: skip,
    reconciler: {
      reconcile: async (key, ctx) => {
        calls.push(key.name);
        const p = ctx.cache?.get(PARENT.apiVersion, PARENT.kind, key.namespace, key.name);
        if (!p) return {};
        const owner = client
          .all(PARENT.apiVersion, PARENT.kind)
          .find((o) => o.metadata.name === ownerOf(key.name));
        await ctx.client.apply({
          ...CHILD,
          metadata: {
            name: `c-${key.name}`,
            namespace: key.namespace,
            ownerReferences: [
              { ...PARENT, name: ownerOf(key.name), uid: owner?.metadata.uid ?? "", controller: true },
            ],
          },
          data: { v: String((p.spec as { v: number }).v) },
        });
        return {};
      },
    },
  });
  mgr.addController({
    name: "other",
    for: PARENT,
    watches: [{ type: CHILD, map: (o) => [{ namespace: "ns", name: o.metadata.name ?? "" }] }],
    reconciler: {
      reconcile: async (key) => {
        other.push(key.name);
        return {};
      },
    },
  });
  return { clock, client, mgr, calls, other, source: () => childSource! };
}

describe("skipOwnApplyEchoes", () => {
  it("the echo of a pass's own apply wakes nothing, whether it comes after the apply's answer or before", async () => {
    const run = async (skip: boolean) => {
      const { client, mgr, calls, other, source } = setup(skip);
      client.seed(parent("p"));
      // The watch event of the first apply arrives after its answer.
      source().held = true;
      await mgr.start();
      await settle();
      expect(calls).toEqual(["p"]);
      source().release();
      await settle();
      const afterEcho = calls.length;
      // A new spec: the pass applies again; the fake delivers that echo during the apply.
      await client.apply({ ...parent("p"), spec: { v: 2 } });
      await settle();
      const afterSpec = calls.length;
      await mgr.stop();
      return { afterEcho, afterSpec, other: other.includes("c-p") };
    };
    expect(await run(false)).toEqual({ afterEcho: 2, afterSpec: 4, other: true });
    // Other controllers still see the ConfigMap: only the controller that applied it skips its echo.
    expect(await run(true)).toEqual({ afterEcho: 1, afterSpec: 2, other: true });
  });

  it("a real change still reconciles: someone else's edit of the child, its deletion", async () => {
    const { client, mgr, calls } = setup(true);
    client.seed(parent("p"));
    await mgr.start();
    await settle();
    expect(calls).toEqual(["p"]);
    // Someone else edits the ConfigMap: a new resourceVersion, not our echo.
    const cm = client.all(CHILD.apiVersion, CHILD.kind)[0]!;
    await client.replace({ ...cm, data: { v: "tampered" } });
    await settle();
    expect(calls).toEqual(["p", "p"]);
    expect(client.all(CHILD.apiVersion, CHILD.kind)[0]!.data).toEqual({ v: "1" });
    await client.delete(CHILD.apiVersion, CHILD.kind, "ns", "c-p");
    await settle();
    expect(calls).toEqual(["p", "p", "p"]);
    expect(client.all(CHILD.apiVersion, CHILD.kind)).toHaveLength(1);
    await mgr.stop();
  });

  it("an apply that wakes another key is no echo for it", async () => {
    // The pass of "a" applies a ConfigMap owned by "b": b must look.
    const { client, mgr, calls, source } = setup(true, (n) => (n === "a" ? "b" : n));
    client.seed(parent("b"));
    await mgr.start();
    await settle();
    calls.length = 0;
    source().held = true;
    client.seed(parent("a"));
    await client.apply({ ...parent("a"), spec: { v: 1 } });
    await settle();
    expect(calls).toEqual(["a"]);
    source().release();
    await settle();
    expect(calls).toEqual(["a", "b"]);
    await mgr.stop();
  });

  it("an event from a relist is never taken for an echo (it may stand for changes the watch missed)", async () => {
    const { client, clock, mgr, calls, source } = setup(true);
    client.seed(parent("p"));
    source().held = true;
    await mgr.start();
    await settle();
    expect(calls).toEqual(["p"]);
    // The connection breaks before the echo arrives and history is compacted: 410, relist.
    source().drop();
    source().held = false;
    source().inner.compact();
    source().inner.breakWatches();
    source().inner.reconnect();
    for (let i = 0; i < 5; i++) {
      clock.advance(30_000);
      await settle();
    }
    expect(calls).toEqual(["p", "p"]);
    await mgr.stop();
  });
});

describe("OwnApplies", () => {
  const cm = (rv: string): KubeObject => ({
    ...CHILD,
    metadata: { name: "c", namespace: "ns", resourceVersion: rv },
  });
  const key = { namespace: "ns", name: "p" };

  it("matches only the same object at the same resourceVersion for the same key, once", () => {
    const a = new OwnApplies(
      () => true,
      () => 0,
    );
    a.record(cm("5"), key);
    expect(a.isEcho(CHILD, cm("6"), [key])).toBe(false);
    a.record(cm("5"), key);
    expect(a.isEcho(CHILD, cm("5"), [{ namespace: "ns", name: "q" }])).toBe(false);
    a.record(cm("5"), key);
    expect(a.isEcho(CHILD, cm("5"), [key, { namespace: "ns", name: "q" }])).toBe(false);
    a.record(cm("5"), key);
    expect(a.isEcho({ apiVersion: "v1", kind: "Secret" }, cm("5"), [key])).toBe(false);
    expect(a.isEcho(CHILD, cm("5"), [key])).toBe(true);
    expect(a.isEcho(CHILD, cm("5"), [key])).toBe(false);
    a.record(cm("7"), key);
    a.forget(CHILD, cm("7"));
    expect(a.isEcho(CHILD, cm("7"), [key])).toBe(false);
  });

  it("remembers only watched kinds, and forgets applies whose event never came", () => {
    let now = 0;
    const a = new OwnApplies(
      (_v, kind) => kind === "ConfigMap",
      () => now,
    );
    a.record(
      { apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace: "ns", resourceVersion: "1" } },
      key,
    );
    expect(a.size).toBe(0);
    a.record(cm("5"), key);
    now = 61_000;
    expect(a.isEcho(CHILD, cm("5"), [key])).toBe(false);
    a.record(cm("8"), key);
    now = 200_000;
    a.record({ ...cm("9"), metadata: { ...cm("9").metadata, name: "d" } }, key);
    expect(a.size).toBe(1);
  });
});
