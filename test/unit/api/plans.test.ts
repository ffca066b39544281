import { describe, expect, it } from "vitest";
import {
  APP_SHARE,
  PLAN_TABLE,
  planBudget,
  planRank,
  requestsFrom,
  toQuantity,
} from "../../../src/api/plans.ts";

describe("platform plans", () => {
  it("carries the §8.2 figures", () => {
    expect(PLAN_TABLE.Standard).toMatchObject({
      cpuMillis: 4000,
      memoryMiB: 8192,
      storageGiB: 100,
      maxProducts: 10_000,
    });
    expect(PLAN_TABLE.Professional).toMatchObject({
      cpuMillis: 8000,
      memoryMiB: 16384,
      storageGiB: 250,
      maxProducts: 50_000,
    });
    expect(PLAN_TABLE.Enterprise).toMatchObject({ cpuMillis: 16000, memoryMiB: 32768, storageGiB: 500 });
    expect(PLAN_TABLE.Enterprise.maxProducts).toBeUndefined();
  });

  it.each(["Standard", "Professional", "Enterprise"] as const)(
    "never lets %s exceed the plan total at full scale-out",
    (plan) => {
      const b = planBudget(plan);
      expect(b.app.cpuMillis * b.app.maxReplicas + b.database.cpuMillis).toBeLessThanOrEqual(
        b.total.cpuMillis,
      );
      expect(b.app.memoryMiB * b.app.maxReplicas + b.database.memoryMiB).toBeLessThanOrEqual(
        b.total.memoryMiB,
      );
      expect(b.database.storageGiB).toBe(b.total.storageGiB);
      expect(b.database.cpuMillis).toBe(b.total.cpuMillis * (1 - APP_SHARE));
    },
  );

  it("splits Standard into 3 app pods of 1 vCPU / 2 GiB and a database of 1 vCPU / 2 GiB", () => {
    expect(planBudget("Standard")).toEqual({
      plan: "Standard",
      total: { cpuMillis: 4000, memoryMiB: 8192, storageGiB: 100 },
      app: { cpuMillis: 1000, memoryMiB: 2048, minReplicas: 1, maxReplicas: 3 },
      database: { cpuMillis: 1000, memoryMiB: 2048, storageGiB: 100 },
    });
  });

  it("takes Custom figures from the spec and refuses Custom without them", () => {
    const b = planBudget("Custom", { cpuMillis: 24000, memoryMiB: 49152, storageGiB: 1024, maxReplicas: 6 });
    expect(b.app).toEqual({ cpuMillis: 3000, memoryMiB: 6144, minReplicas: 1, maxReplicas: 6 });
    expect(() => planBudget("Custom")).toThrow(/Custom needs explicit resources/);
  });

  it("orders tiers Standard < Professional < Enterprise < Custom", () => {
    expect(
      ["Custom", "Standard", "Enterprise", "Professional"].sort(
        (a, b) => planRank(a as never) - planRank(b as never),
      ),
    ).toEqual(["Standard", "Professional", "Enterprise", "Custom"]);
  });

  it("derives requests as a fraction of limits, with a floor", () => {
    expect(requestsFrom({ cpuMillis: 1000, memoryMiB: 2048 }, 0.1)).toEqual({
      cpuMillis: 100,
      memoryMiB: 204,
    });
    expect(requestsFrom({ cpuMillis: 50, memoryMiB: 64 }, 0.1)).toEqual({ cpuMillis: 10, memoryMiB: 32 });
  });

  it("formats quantities", () => {
    expect([
      toQuantity.cpu(1500),
      toQuantity.cpu(2000),
      toQuantity.memory(2048),
      toQuantity.memory(1536),
    ]).toEqual(["1500m", "2", "2Gi", "1536Mi"]);
  });
});
