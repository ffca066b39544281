import { describe, expect, it } from "vitest";
import {
  DEFAULT_BILLING,
  formatDecimal,
  measureRun,
  parseDecimal,
  parseRunnerReport,
  runCost,
  sumCosts,
} from "./billing.ts";

const at = (s: number) => new Date(Date.UTC(2026, 10, 1, 0, 0, s)).toISOString();

describe("billing", () => {
  it("parses the runner's report, with or without a compile time or a run", () => {
    expect(parseRunnerReport("cronscale-runner/v1 run-ms=2403 compile-ms=\n")).toEqual({
      runMs: 2403,
      compileMs: undefined,
    });
    expect(parseRunnerReport("cronscale-runner/v1 run-ms= compile-ms=812")).toEqual({
      runMs: undefined,
      compileMs: 812,
    });
    expect(parseRunnerReport("something else")).toBeUndefined();
    expect(parseRunnerReport(undefined)).toBeUndefined();
  });

  it("bills the runner's milliseconds rounded to the nearest second, compile excluded", () => {
    expect(measureRun({ runMs: 2400 }, at(0), at(3))).toMatchObject({
      measuredBy: "Runner",
      billedSeconds: 2,
    });
    expect(measureRun({ runMs: 2600 }, at(0), at(3))).toMatchObject({ billedSeconds: 3 });
    expect(measureRun({ runMs: 2500 }, at(0), at(3))).toMatchObject({ billedSeconds: 3 });
    expect(measureRun({ runMs: 1200, compileMs: 9000 }, at(0), at(10))).toEqual({
      measuredBy: "Runner",
      runMilliseconds: 1200,
      compileMilliseconds: 9000,
      billedSeconds: 1,
    });
    expect(measureRun({ compileMs: 900 }, at(0), at(1))).toMatchObject({ billedSeconds: 0 });
  });

  it("falls back to the container's timestamps without a report, or with one that disagrees", () => {
    expect(measureRun(undefined, at(0), at(4))).toEqual({
      measuredBy: "ContainerTimes",
      runMilliseconds: 4000,
      billedSeconds: 4,
    });
    // A script that wrote a tiny figure into the termination message itself is not believed.
    expect(measureRun({ runMs: 10 }, at(0), at(60))).toMatchObject({
      measuredBy: "ContainerTimes",
      billedSeconds: 60,
    });
    expect(measureRun({ runMs: 90_000 }, at(0), at(60))).toMatchObject({ measuredBy: "ContainerTimes" });
    expect(measureRun(undefined)).toEqual({ measuredBy: "None", billedSeconds: 0 });
  });

  it("prices in exact decimals", () => {
    expect(parseDecimal("0.000004")).toBe(4000n);
    expect(formatDecimal(parseDecimal("1.5"))).toBe("1.50");
    expect(runCost(DEFAULT_BILLING, "Micro", 3)).toBe("0.000012");
    expect(runCost(DEFAULT_BILLING, "Large", 0)).toBe("0.00");
    expect(sumCosts(["0.1", "0.2"])).toBe("0.30");
    expect(() => parseDecimal("1e-6")).toThrow(/not a decimal/);
  });
});
