import { describe, expect, it } from "vitest";
import { silentLogger } from "../log.ts";
import { FakeClock } from "./clock.ts";
import { FakeKubeClient } from "./fake-client.ts";
import { FakeListWatch, goneError } from "./fake-listwatch.ts";
import { Informer } from "./informer.ts";
import type { KubeObject } from "./types.ts";

function cm(name: string, data: Record<string, string> = {}, labels?: Record<string, string>): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "ns", labels }, data };
}

/** Lets pending promise callbacks run (the informer loop is async). */
async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}

async function setup(
  opts: {
    pageSize?: number;
    labelSelector?: string;
    watchdogMs?: number;
    transform?: (o: KubeObject) => KubeObject;
    indexLabels?: string[];
  } = {},
) {
  const clock = new FakeClock();
  const client = new FakeKubeClient({ clock });
  const source = new FakeListWatch(client, "v1", "ConfigMap", "ns");
  const informer = new Informer({
    source,
    log: process.env.DBG ? (await import("pino")).pino({ level: "debug" }) : silentLogger(),
    clock,
    random: () => 0.5,
    ...opts,
  });
  const seen: string[] = [];
  informer.addHandlers({
    onAdd: (o) => seen.push(`add ${o.metadata.name}`),
    onUpdate: (_, o) => seen.push(`update ${o.metadata.name}`),
    onDelete: (o) => seen.push(`delete ${o.metadata.name}`),
  });
  return { clock, client, source, informer, seen };
}

describe("Informer", () => {
  it("lists in pages, becomes synced, then delivers watch events", async () => {
    const { client, source, informer, seen } = await setup({ pageSize: 2 });
    for (const n of ["a", "b", "c", "d", "e"]) client.seed(cm(n));
    expect(informer.synced).toBe(false);
    informer.start();
    await informer.waitForSync();
    expect(informer.synced).toBe(true);
    expect(source.calls.pages).toEqual([undefined, "2", "4"]);
    expect(seen).toEqual(["add a", "add b", "add c", "add d", "add e"]);
    await settle();
    await client.apply(cm("a", { x: "1" }));
    await client.delete("v1", "ConfigMap", "ns", "b");
    await client.create(cm("f"));
    expect(seen.slice(5)).toEqual(["update a", "delete b", "add f"]);
    expect(informer.get("ns/a")?.data).toEqual({ x: "1" });
    expect(informer.get("ns/b")).toBeUndefined();
    expect(informer.lastEventTime).toBeInstanceOf(Date);
    await informer.stop();
  });

  it("asks for the next page before it stores the one it has", async () => {
    const requestedWhenStored: number[] = [];
    let source: FakeListWatch | undefined;
    const { client, informer, ...rest } = await setup({
      pageSize: 2,
      transform: (o) => {
        requestedWhenStored.push(source?.calls.pages.length ?? -1);
        return o;
      },
    });
    source = rest.source;
    for (const n of ["a", "b", "c", "d", "e"]) client.seed(cm(n));
    informer.start();
    await informer.waitForSync();
    // Page 1 (a, b) is stored once page 2 is asked for, page 2 (c, d) once page 3 is; page 3 is the last.
    expect(requestedWhenStored).toEqual([2, 2, 3, 3, 3]);
    expect(informer.list("ns").map((o) => o.metadata.name)).toEqual(["a", "b", "c", "d", "e"]);
    await informer.stop();
  });

  it("asks for bookmarks and a server-side timeout on every watch", async () => {
    const { source, informer } = await setup();
    const params: unknown[] = [];
    const orig = source.watch.bind(source);
    source.watch = (p, e, d) => {
      params.push(p);
      return orig(p, e, d);
    };
    informer.start();
    await informer.waitForSync();
    await settle();
    expect(params[0]).toMatchObject({ allowWatchBookmarks: true, timeoutSeconds: 450 });
    await informer.stop();
  });

  it("delivers a delete missed while the watch was broken (410 → relist → diff)", async () => {
    const { client, source, informer, seen, clock } = await setup();
    client.seed(cm("keep"));
    client.seed(cm("gone"));
    informer.start();
    await informer.waitForSync();
    await settle();
    source.breakWatches();
    await client.delete("v1", "ConfigMap", "ns", "gone");
    await client.apply(cm("keep", { changed: "yes" }));
    source.compact();
    source.reconnect();
    expect(seen).not.toContain("delete gone");
    clock.advance(2000); // past the retry backoff
    await settle(50);
    expect(seen).toContain("delete gone");
    expect(seen).toContain("update keep");
    expect(informer.stats.relistDeletes).toBe(1);
    expect(informer.list().map((o) => o.metadata.name)).toEqual(["keep"]);
    await informer.stop();
  });

  it("a relist keeps the cached copy of every object that did not change (one copy in memory)", async () => {
    const { client, source, informer, clock } = await setup();
    client.seed(cm("same"));
    client.seed(cm("changed"));
    informer.start();
    await informer.waitForSync();
    await settle();
    const before = { same: informer.get("ns/same"), changed: informer.get("ns/changed") };
    source.breakWatches();
    await client.apply(cm("changed", { x: "1" }));
    source.compact();
    source.reconnect();
    clock.advance(2000);
    await settle(50);
    expect(informer.get("ns/changed")?.data).toEqual({ x: "1" });
    expect(informer.get("ns/changed")).not.toBe(before.changed);
    expect(informer.get("ns/same")).toBe(before.same);
    await informer.stop();
  });

  it("resumes from the last resourceVersion after a clean close without relisting", async () => {
    const { client, source, informer, seen, clock } = await setup();
    informer.start();
    await informer.waitForSync();
    await settle();
    clock.advance(60_000); // a watch that lived a while, then the server-side timeout
    source.closeWatches();
    await settle();
    await client.create(cm("new"));
    await settle();
    expect(seen).toEqual(["add new"]);
    expect(source.calls.list).toBe(1);
    expect(source.calls.watch).toBe(2);
    await informer.stop();
  });

  it("retries a failing list with growing backoff and syncs once it works", async () => {
    const { source, informer, clock } = await setup();
    source.failNext.push(new Error("boom 1"), new Error("boom 2"));
    informer.start();
    await settle();
    expect(informer.synced).toBe(false);
    expect(informer.stats.errors).toBe(1);
    clock.advance(800); // first retry (base 800 ms, jitter centred)
    await settle();
    expect(informer.stats.errors).toBe(2);
    clock.advance(800);
    await settle();
    expect(informer.synced).toBe(false);
    clock.advance(800); // second retry waits 1600 ms in total
    await settle();
    expect(informer.synced).toBe(true);
    await informer.stop();
  });

  it("relists when the watch goes silent past the watchdog and catches up", async () => {
    const { client, source, informer, seen, clock } = await setup({ watchdogMs: 60_000 });
    client.seed(cm("a"));
    informer.start();
    await informer.waitForSync();
    await settle();
    // The connection stays "open" but delivers nothing: a silent stall.
    source.breakWatches();
    await settle();
    clock.advance(1000); // past the retry backoff: the new watch opens but stays mute
    await settle();
    await client.delete("v1", "ConfigMap", "ns", "a");
    source.reconnect();
    await settle();
    expect(seen).toEqual(["add a"]);
    clock.advance(60_000);
    await settle(50);
    expect(seen).toEqual(["add a", "delete a"]);
    expect(source.calls.list).toBe(2);
    await informer.stop();
  });

  it("bookmarks keep the watchdog quiet", async () => {
    const { source, informer, clock } = await setup({ watchdogMs: 60_000 });
    informer.start();
    await informer.waitForSync();
    await settle();
    for (let i = 0; i < 10; i++) {
      clock.advance(20_000);
      source.bookmark();
      await settle();
    }
    expect(source.calls.list).toBe(1);
    await informer.stop();
  });

  it("a 410 on watch start relists", async () => {
    const { source, informer, clock } = await setup();
    informer.start();
    await informer.waitForSync();
    await settle();
    source.failNext.push(goneError());
    source.closeWatches();
    await settle();
    clock.advance(2000);
    await settle(50);
    expect(source.calls.list).toBe(2);
    await informer.stop();
  });

  it("filters by label selector and serves cache reads by namespace and selector", async () => {
    const { client, informer, seen } = await setup({ labelSelector: "app=x" });
    client.seed(cm("in", {}, { app: "x", tier: "web" }));
    client.seed(cm("out", {}, { app: "y" }));
    informer.start();
    await informer.waitForSync();
    expect(seen).toEqual(["add in"]);
    expect(informer.list("ns", "tier=web")).toHaveLength(1);
    expect(informer.list("other")).toHaveLength(0);
    await informer.stop();
  });

  it("stop ends the loop and no further events are delivered", async () => {
    const { client, source, informer, seen } = await setup();
    informer.start();
    await informer.waitForSync();
    await settle();
    await informer.stop();
    expect(source.activeWatches()).toBe(0);
    await client.create(cm("late"));
    expect(seen).toEqual([]);
  });

  it("trims objects on entry (list and watch) and answers label lookups from its index", async () => {
    const { client, informer, seen } = await setup({
      transform: (o) => ({ apiVersion: o.apiVersion, kind: o.kind, metadata: o.metadata }),
      indexLabels: ["task"],
    });
    client.seed(cm("a", { big: "x" }, { task: "t1" }));
    client.seed(cm("b", { big: "x" }, { task: "t2", extra: "y" }));
    informer.start();
    await informer.waitForSync();
    await settle();
    await client.create(cm("c", { big: "x" }, { task: "t1" }));
    expect(informer.get("ns/a")?.data).toBeUndefined();
    expect(informer.get("ns/c")?.data).toBeUndefined();
    const names = (sel: string, ns = "ns") =>
      informer
        .list(ns, sel)
        .map((o) => o.metadata.name)
        .sort();
    expect(names("task=t1")).toEqual(["a", "c"]);
    expect(names("task=t2,extra=y")).toEqual(["b"]);
    expect(names("task=t2,extra=z")).toEqual([]);
    expect(names("task=t1", "other")).toEqual([]);
    // Relabelled and deleted objects leave the index.
    await client.apply(cm("c", { big: "x" }, { task: "t2" }));
    await client.delete("v1", "ConfigMap", "ns", "a");
    expect(names("task=t1")).toEqual([]);
    expect(names("task=t2")).toEqual(["b", "c"]);
    informer.addIndex("extra");
    expect(names("extra=y")).toEqual(["b"]);
    expect(seen).toContain("delete a");
    await informer.stop();
  });

  it("answers with an object this process wrote until the watch delivers that version", async () => {
    const { client, source, informer } = await setup({ labelSelector: "mine=yes" });
    client.seed(cm("a", { v: "1" }, { mine: "yes" }));
    informer.start();
    await informer.waitForSync();
    await settle();
    // The watch is slow (events held back): our write is seen only through mutated().
    source.breakWatches();
    const written = await client.apply(cm("a", { v: "2" }, { mine: "yes" }));
    expect(informer.get("ns/a")?.data).toEqual({ v: "1" });
    informer.mutated(written);
    expect(informer.get("ns/a")?.data).toEqual({ v: "2" });
    // An older version, or one outside the selector, never replaces what is cached.
    informer.mutated({
      ...cm("a", { v: "0" }, { mine: "yes" }),
      metadata: { name: "a", namespace: "ns", labels: { mine: "yes" }, resourceVersion: "1" },
    });
    informer.mutated(await client.apply(cm("b", { v: "9" }, { mine: "no" })));
    expect(informer.get("ns/a")?.data).toEqual({ v: "2" });
    expect(informer.get("ns/b")).toBeUndefined();
    await informer.stop();
  });

  it("trims a written object only when it is read before its watch event", async () => {
    let trims = 0;
    const transform = (o: KubeObject): KubeObject => {
      trims++;
      return { ...o, data: { trimmed: "yes" } };
    };
    const { client, source, informer } = await setup({ transform });
    informer.start();
    await informer.waitForSync();
    source.breakWatches();
    informer.mutated(await client.apply(cm("a", { v: "1" })));
    informer.mutated(await client.apply(cm("b", { v: "1" })));
    expect(trims).toBe(0);
    expect(informer.get("ns/a")?.data).toEqual({ trimmed: "yes" });
    expect(informer.get("ns/a")?.data).toEqual({ trimmed: "yes" });
    expect(trims).toBe(1);
    await informer.stop();
  });
});
