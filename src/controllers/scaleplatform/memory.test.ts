import { describe, expect, it } from "vitest";
import type { ScalePlatform } from "../../api/v1alpha1/scaleplatform.ts";
import { HealthTracker } from "./health.ts";
import { clusterObjects, makeCtx, makePlatform, settle, testReconciler } from "./testing.ts";

// What the reconciler keeps in memory per platform is dropped when the platform goes.

describe("ScalePlatformReconciler memory", () => {
  function setup() {
    const health = new HealthTracker();
    const env = makeCtx([makePlatform("shop"), ...clusterObjects({})]);
    return { ...env, rec: testReconciler({ health }), health };
  }
  const key = { namespace: "ns", name: "shop" };

  it("drops a platform's health state when it is deleted", async () => {
    const s = setup();
    await settle(s);
    expect(s.health.size).toBe(1);
    await s.client.delete("cronscale.io/v1alpha1", "ScalePlatform", "ns", "shop");
    await s.rec.reconcile(key, s.ctx);
    expect(s.health.size).toBe(0);
  });

  it("drops the old state when a namesake replaces a platform whose deletion it did not see", async () => {
    const s = setup();
    await settle(s);
    const old = (await s.client.get("cronscale.io/v1alpha1", "ScalePlatform", "ns", "shop")) as ScalePlatform;
    await s.client.delete("cronscale.io/v1alpha1", "ScalePlatform", "ns", "shop");
    await s.client.create({ ...makePlatform("shop"), metadata: { ...old.metadata, uid: "uid-2" } });
    await settle(s);
    expect(s.health.size).toBe(1);
  });
});
