import { describe, expect, it } from "vitest";
import { formatTime, getCondition, isConditionTrue, removeCondition, setCondition } from "./conditions.ts";

const t0 = new Date("2026-03-01T10:00:00.123Z");
const t1 = new Date("2026-03-01T11:00:00.456Z");

describe("setCondition", () => {
  it("adds a new condition stamped now (second precision) with observedGeneration", () => {
    const c = setCondition([], { type: "Ready", status: "True", reason: "Applied", message: "ok" }, 4, t0);
    expect(c).toEqual([
      {
        type: "Ready",
        status: "True",
        reason: "Applied",
        message: "ok",
        lastTransitionTime: "2026-03-01T10:00:00Z",
        observedGeneration: 4,
      },
    ]);
  });

  it("keeps lastTransitionTime when the status does not flip, but updates reason, message and generation", () => {
    const a = setCondition([], { type: "Ready", status: "False", reason: "Waiting" }, 1, t0);
    const b = setCondition(
      a,
      { type: "Ready", status: "False", reason: "StillWaiting", message: "m" },
      2,
      t1,
    );
    expect(b[0]).toMatchObject({
      reason: "StillWaiting",
      message: "m",
      observedGeneration: 2,
      lastTransitionTime: "2026-03-01T10:00:00Z",
    });
  });

  it("moves lastTransitionTime when the status flips", () => {
    const a = setCondition([], { type: "Ready", status: "False", reason: "Waiting" }, 1, t0);
    const b = setCondition(a, { type: "Ready", status: "True", reason: "Done" }, 1, t1);
    expect(b[0]!.lastTransitionTime).toBe("2026-03-01T11:00:00Z");
  });

  it("leaves other conditions and the input array untouched", () => {
    const a = setCondition([], { type: "A", status: "True", reason: "R" }, 1, t0);
    const b = setCondition(a, { type: "B", status: "False", reason: "R" }, 1, t1);
    expect(a).toHaveLength(1);
    expect(b.map((c) => c.type)).toEqual(["A", "B"]);
    expect(getCondition(b, "A")).toEqual(a[0]);
  });

  it("offers lookups and removal", () => {
    const a = setCondition([], { type: "Ready", status: "True", reason: "R" }, 1, t0);
    expect(isConditionTrue(a, "Ready")).toBe(true);
    expect(isConditionTrue(a, "Other")).toBe(false);
    expect(removeCondition(a, "Ready")).toEqual([]);
  });

  it("formats times as the API server stores them", () => {
    expect(formatTime(t0)).toBe("2026-03-01T10:00:00Z");
  });
});
