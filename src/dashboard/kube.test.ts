import { describe, expect, it } from "vitest";
import { quantity } from "./kube.ts";

describe("quantity", () => {
  it("reads the metrics API's CPU and memory quantities", () => {
    expect(quantity("250m")).toBeCloseTo(0.25);
    expect(quantity("12500000n")).toBeCloseTo(0.0125);
    expect(quantity("2")).toBe(2);
    expect(quantity("512Mi")).toBe(512 * 1024 ** 2);
    expect(quantity("1.5Gi")).toBe(1.5 * 1024 ** 3);
    expect(quantity("100k")).toBe(100_000);
    expect(quantity("lots")).toBeNaN();
  });
});
