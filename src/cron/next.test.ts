import { describe, expect, it } from "vitest";
import { formatInZone, nextRuns } from "./index.ts";

// Expected values are robfig/cron v3's own answers (hack/cron-oracle, the same requests), kept
// here as readable specifications; hack/cron-oracle/differential.test.ts checks thousands more.

function runs(expr: string, zone: string, from: string, count: number): string[] {
  return nextRuns(expr, zone, new Date(from), count).map((d) => formatInZone(d, zone));
}

describe("nextRuns equals the Kubernetes CronJob scheduler (robfig/cron v3)", () => {
  it("skips a time that falls in a spring-forward gap (New York 02:30 on 2021-03-14)", () => {
    expect(runs("30 2 * * *", "America/New_York", "2021-03-13T00:00:00Z", 3)).toEqual([
      "2021-03-13T02:30:00-05:00",
      "2021-03-15T02:30:00-04:00",
      "2021-03-16T02:30:00-04:00",
    ]);
  });

  it("skips the gap east of Greenwich too (Berlin 02:30 on 2021-03-28)", () => {
    expect(runs("30 2 * * *", "Europe/Berlin", "2021-03-27T12:00:00Z", 3)).toEqual([
      "2021-03-29T02:30:00+02:00",
      "2021-03-30T02:30:00+02:00",
      "2021-03-31T02:30:00+02:00",
    ]);
  });

  it("runs twice in a fall-back overlap (New York 01:30 on 2021-11-07)", () => {
    expect(runs("30 1 * * *", "America/New_York", "2021-11-06T00:00:00Z", 3)).toEqual([
      "2021-11-06T01:30:00-04:00",
      "2021-11-07T01:30:00-04:00",
      "2021-11-07T01:30:00-05:00",
    ]);
  });

  it("runs twice in the overlap east of Greenwich (Berlin 02:30 on 2021-10-31)", () => {
    expect(runs("30 2 * * *", "Europe/Berlin", "2021-10-30T12:00:00Z", 3)).toEqual([
      "2021-10-31T02:30:00+02:00",
      "2021-10-31T02:30:00+01:00",
      "2021-11-01T02:30:00+01:00",
    ]);
  });

  it("repeats sub-hour slots of the repeated hour, but not the ones already passed", () => {
    expect(runs("*/30 1 * * *", "America/New_York", "2021-11-07T05:00:00Z", 6)).toEqual([
      "2021-11-07T01:30:00-04:00",
      "2021-11-07T01:00:00-05:00",
      "2021-11-07T01:30:00-05:00",
      "2021-11-08T01:00:00-05:00",
      "2021-11-08T01:30:00-05:00",
      "2021-11-09T01:00:00-05:00",
    ]);
  });

  it("drops the slots of a missing hour (London 01:xx on 2021-03-28)", () => {
    expect(runs("*/20 1-3 * * *", "Europe/London", "2021-03-28T00:00:00Z", 6)).toEqual([
      "2021-03-28T02:00:00+01:00",
      "2021-03-28T02:20:00+01:00",
      "2021-03-28T02:40:00+01:00",
      "2021-03-28T03:00:00+01:00",
      "2021-03-28T03:20:00+01:00",
      "2021-03-28T03:40:00+01:00",
    ]);
  });

  it("handles a 30-minute DST shift (Lord Howe)", () => {
    expect(runs("15 2 * * *", "Australia/Lord_Howe", "2021-10-02T00:00:00Z", 2)).toEqual([
      "2021-10-04T02:15:00+11:00",
      "2021-10-05T02:15:00+11:00",
    ]);
    expect(runs("15 1 * * *", "Australia/Lord_Howe", "2021-04-03T12:00:00Z", 3)).toEqual([
      "2021-04-04T01:15:00+11:00",
      "2021-04-05T01:15:00+10:30",
      "2021-04-06T01:15:00+10:30",
    ]);
  });

  it("skips a whole day when its midnight does not exist (Santiago, 2021-09-05)", () => {
    expect(runs("0 0 * * *", "America/Santiago", "2021-09-03T12:00:00Z", 3)).toEqual([
      "2021-09-04T00:00:00-04:00",
      "2021-09-06T00:00:00-03:00",
      "2021-09-07T00:00:00-03:00",
    ]);
  });

  it("ORs day-of-month and day-of-week when both are restricted, `*/n` counting as restricted", () => {
    expect(runs("0 0 13 * 5", "UTC", "2026-11-01T00:00:00Z", 4)).toEqual([
      "2026-11-06T00:00:00+00:00",
      "2026-11-13T00:00:00+00:00",
      "2026-11-20T00:00:00+00:00",
      "2026-11-27T00:00:00+00:00",
    ]);
    expect(runs("0 0 */10 * 1", "UTC", "2026-11-01T00:00:00Z", 4)).toEqual([
      "2026-11-02T00:00:00+00:00",
      "2026-11-09T00:00:00+00:00",
      "2026-11-11T00:00:00+00:00",
      "2026-11-16T00:00:00+00:00",
    ]);
  });

  it("treats an explicit full range 0-6 as a restriction, so `0 0 1 * 0-6` runs every day", () => {
    expect(runs("0 0 1 * 0-6", "UTC", "2026-11-01T00:00:00Z", 3)).toEqual([
      "2026-11-02T00:00:00+00:00",
      "2026-11-03T00:00:00+00:00",
      "2026-11-04T00:00:00+00:00",
    ]);
  });

  it("finds leap days, and gives up after five years like robfig (zero time → no run)", () => {
    expect(runs("0 0 29 2 *", "UTC", "2026-11-01T00:00:00Z", 2)).toEqual([
      "2028-02-29T00:00:00+00:00",
      "2032-02-29T00:00:00+00:00",
    ]);
    expect(runs("0 0 29 2 *", "UTC", "2097-01-01T00:00:00Z", 1)).toEqual([]);
  });

  it("starts strictly after `from`, at whole seconds", () => {
    expect(runs("* * * * *", "UTC", "2026-01-01T00:00:00.000Z", 1)).toEqual(["2026-01-01T00:01:00+00:00"]);
    expect(runs("* * * * *", "UTC", "2026-01-01T00:00:59.999Z", 1)).toEqual(["2026-01-01T00:01:00+00:00"]);
  });

  it("is fast for rare schedules (no minute-by-minute scan)", () => {
    const started = performance.now();
    for (let i = 0; i < 200; i++)
      nextRuns("0 0 29 2 *", "Europe/Berlin", new Date(Date.UTC(2020, 0, 1) + i * 86_400_000), 3);
    for (let i = 0; i < 200; i++)
      nextRuns("59 23 31 12 *", "America/New_York", new Date(Date.UTC(2020, 0, 1) + i * 3_600_000), 3);
    // Generous bound for a loaded 2-core machine; a minute-by-minute scan takes seconds per call.
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
