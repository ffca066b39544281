import { describe, expect, it } from "vitest";
import { silentLogger } from "../log.ts";
import { FakeClock } from "./clock.ts";
import { EventDeduper, KubeEventRecorder, MemoryEventRecorder } from "./events.ts";
import { FakeKubeClient } from "./fake-client.ts";

const target = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm", namespace: "ns", uid: "u1" } };

describe("KubeEventRecorder", () => {
  it("creates an events.k8s.io/v1 Event about the object", async () => {
    const clock = new FakeClock("2026-02-02T02:02:02.123Z");
    const client = new FakeKubeClient({ clock });
    const rec = new KubeEventRecorder({ client, clock, log: silentLogger(), reportingInstance: "pod-1" });
    await rec.warning(target, "InvalidSchedule", "Validate", "bad cron");
    const [ev] = await client.list("events.k8s.io/v1", "Event", "ns");
    expect(ev).toMatchObject({
      type: "Warning",
      reason: "InvalidSchedule",
      action: "Validate",
      note: "bad cron",
      eventTime: "2026-02-02T02:02:02.123000Z",
      reportingController: "cronscale.io/operator",
      reportingInstance: "pod-1",
      regarding: { kind: "ConfigMap", name: "cm", namespace: "ns", uid: "u1" },
    });
  });

  it("does not spam: repeats become one Event whose series count is refreshed at most once a minute", async () => {
    const clock = new FakeClock();
    const client = new FakeKubeClient({ clock });
    const rec = new KubeEventRecorder({ client, clock, log: silentLogger(), reportingInstance: "p" });
    for (let i = 0; i < 50; i++) {
      await rec.normal(target, "Applied", "Apply", "same");
      clock.advance(2_000);
    }
    const events = await client.list("events.k8s.io/v1", "Event", "ns");
    expect(events).toHaveLength(1);
    // 100 s of repeats: one create plus one series update after the first minute.
    expect(client.writes.filter((w) => w.kind === "Event").map((w) => w.verb)).toEqual(["create", "replace"]);
    expect(events[0]?.series).toMatchObject({ count: 31 });
  });

  it("never throws when the API refuses the Event", async () => {
    const clock = new FakeClock();
    const client = new FakeKubeClient({ clock });
    client.injectError = () => new Error("forbidden");
    const rec = new KubeEventRecorder({ client, clock, log: silentLogger(), reportingInstance: "p" });
    await expect(rec.normal(target, "R", "A", "n")).resolves.toBeUndefined();
  });

  it("truncates notes to the 1 kB API limit", async () => {
    const clock = new FakeClock();
    const client = new FakeKubeClient({ clock });
    const rec = new KubeEventRecorder({ client, clock, log: silentLogger(), reportingInstance: "p" });
    await rec.normal(target, "R", "A", "x".repeat(5000));
    const [ev] = await client.list("events.k8s.io/v1", "Event", "ns");
    expect(String(ev?.note).length).toBe(1024);
  });
});

describe("EventDeduper", () => {
  it("creates again after the window", () => {
    const d = new EventDeduper({ windowMs: 1000, patchEveryMs: 100 });
    expect(d.decide("k", 0).kind).toBe("create");
    d.created("k", "n", "ns", 0);
    expect(d.decide("k", 50).kind).toBe("suppress");
    expect(d.decide("k", 150)).toEqual({ kind: "patch", name: "n", namespace: "ns", count: 3 });
    expect(d.decide("k", 1001).kind).toBe("create");
  });
});

describe("MemoryEventRecorder", () => {
  it("keeps every call for assertions", async () => {
    const m = new MemoryEventRecorder();
    await m.normal(target, "A", "Apply", "n1");
    await m.warning(target, "B", "Apply", "n2");
    expect(m.events.map((e) => `${e.type}/${e.reason}`)).toEqual(["Normal/A", "Warning/B"]);
    expect(m.withReason("B")[0]?.regarding.name).toBe("cm");
  });
});
