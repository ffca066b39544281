import { describe, expect, it } from "vitest";
import { backoffDelay, KeyBackoff } from "./backoff.ts";
import { FakeClock } from "./clock.ts";
import { WorkQueue } from "./workqueue.ts";

function queue(clock = new FakeClock()) {
  const depths: number[] = [];
  const q = new WorkQueue({
    clock,
    backoff: { baseMs: 100, maxMs: 10_000, jitter: 0 },
    onDepth: (d) => depths.push(d),
  });
  return { q, clock, depths };
}

describe("WorkQueue", () => {
  it("de-duplicates a key that is already waiting", async () => {
    const { q } = queue();
    q.add("ns/a");
    q.add("ns/a");
    q.add("ns/b");
    expect(q.len()).toBe(2);
    expect(await q.get()).toBe("ns/a");
    expect(await q.get()).toBe("ns/b");
  });

  it("never hands out a key twice at once; an add during processing requeues it once on done", async () => {
    const { q } = queue();
    q.add("k");
    const k = await q.get();
    expect(k).toBe("k");
    q.add("k");
    q.add("k");
    expect(q.len()).toBe(0);
    let second: string | undefined;
    void q.get().then((x) => {
      second = x;
    });
    await Promise.resolve();
    expect(second).toBeUndefined();
    q.done("k");
    await Promise.resolve();
    expect(second).toBe("k");
    expect(q.inFlight()).toBe(1);
  });

  it("a key done without being re-added does not come back", async () => {
    const { q } = queue();
    q.add("k");
    q.done((await q.get())!);
    expect(q.len()).toBe(0);
    expect(q.inFlight()).toBe(0);
  });

  it("blocks get until a key arrives and hands it to the waiting worker", async () => {
    const { q } = queue();
    const p = q.get();
    q.add("late");
    expect(await p).toBe("late");
    expect(q.len()).toBe(0);
  });

  it("addAfter fires at the requested time and the earliest pending add wins", async () => {
    const { q, clock } = queue();
    q.addAfter("k", 5000);
    q.addAfter("k", 1000);
    q.addAfter("k", 3000);
    expect(q.pendingDelayed()).toBe(1);
    clock.advance(999);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
    clock.advance(10_000);
    expect(q.len()).toBe(1);
  });

  it("addAfter with zero delay adds at once", () => {
    const { q } = queue();
    q.addAfter("k", 0);
    expect(q.len()).toBe(1);
  });

  it("backs off per key exponentially and forget resets it", () => {
    const { q, clock } = queue();
    expect(q.addRateLimited("a")).toBe(100);
    expect(q.addRateLimited("a")).toBe(200);
    expect(q.addRateLimited("a")).toBe(400);
    expect(q.addRateLimited("b")).toBe(100);
    expect(q.numRequeues("a")).toBe(3);
    q.forget("a");
    expect(q.numRequeues("a")).toBe(0);
    expect(q.addRateLimited("a")).toBe(100);
    clock.advance(100);
    expect(q.len()).toBe(2);
  });

  it("shutdown releases blocked workers, drops waiting keys and ignores new ones", async () => {
    const { q, clock } = queue();
    const waiting = q.get();
    q.shutdown();
    expect(await waiting).toBeUndefined();
    q.add("x");
    q.addAfter("y", 10);
    clock.advance(100);
    expect(q.len()).toBe(0);
    expect(await q.get()).toBeUndefined();
  });

  it("shutdownWithDrain waits for in-flight keys to finish", async () => {
    const { q } = queue();
    q.add("a");
    q.add("b");
    const a = (await q.get())!;
    let drained = false;
    const d = q.shutdownWithDrain().then(() => {
      drained = true;
    });
    await Promise.resolve();
    expect(drained).toBe(false);
    q.add(a); // an add while draining must not resurrect the key
    q.done(a);
    await d;
    expect(drained).toBe(true);
    expect(q.len()).toBe(0);
  });

  it("reports depth changes for the workqueue_depth gauge", async () => {
    const { q, depths } = queue();
    q.add("a");
    q.add("b");
    await q.get();
    expect(depths).toEqual([1, 2, 1]);
  });
});

describe("backoff", () => {
  it("doubles from the base and stops at the maximum", () => {
    const d = [0, 1, 2, 3, 10, 100].map((n) => backoffDelay(n, { baseMs: 5, maxMs: 1000, jitter: 0 }));
    expect(d).toEqual([5, 10, 20, 40, 1000, 1000]);
  });

  it("spreads delays by the jitter fraction, never past the maximum", () => {
    expect(backoffDelay(3, { baseMs: 100, maxMs: 10_000, jitter: 0.2, random: () => 0 })).toBe(640);
    expect(backoffDelay(3, { baseMs: 100, maxMs: 10_000, jitter: 0.2, random: () => 0.999999 })).toBe(960);
    expect(backoffDelay(20, { baseMs: 100, maxMs: 10_000, jitter: 0.2, random: () => 0.999999 })).toBe(
      10_000,
    );
  });

  it("keeps independent failure counts per key", () => {
    const b = new KeyBackoff({ baseMs: 1, jitter: 0 });
    b.when("a");
    b.when("a");
    b.when("b");
    expect([b.retries("a"), b.retries("b")]).toEqual([2, 1]);
  });
});
