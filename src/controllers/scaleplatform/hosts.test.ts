import { describe, expect, it } from "vitest";
import type { ScalePlatform } from "../../api/v1alpha1/scaleplatform.ts";
import type { FakeKubeClient } from "../../runtime/fake-client.ts";
import { FeatureDetector } from "./features.ts";
import { HealthTracker } from "./health.ts";
import { hostClash } from "./hosts.ts";
import { ScalePlatformReconciler } from "./reconciler.ts";
import { clusterObjects, counterRandom, fakeProbe, makeCtx, makePlatform, TEST_CONFIG } from "./testing.ts";

function platform(name: string, created: string, host = "shop.example.test"): ScalePlatform {
  const p = makePlatform(name, { domains: { platform: host } });
  p.metadata.creationTimestamp = created;
  return p;
}

const claimant = (p: ScalePlatform, serving: string[] = []) => ({
  platform: p,
  hosts: [p.spec.domains.platform],
  serving: new Set(serving),
});

describe("hostClash", () => {
  const older = platform("older", "2026-01-01T00:00:00Z");
  const newer = platform("newer", "2026-01-02T00:00:00Z");

  it("the older platform keeps a host neither serves yet; the rule agrees from both sides", () => {
    expect(hostClash(claimant(newer), [claimant(older)])).toEqual({
      host: "shop.example.test",
      holder: "ns/older",
    });
    expect(hostClash(claimant(older), [claimant(newer)])).toBeUndefined();
  });

  it("the platform whose Ingress serves the host keeps it, even against an older one", () => {
    const live = claimant(newer, ["shop.example.test"]);
    expect(hostClash(claimant(older), [live])).toEqual({ host: "shop.example.test", holder: "ns/newer" });
    expect(hostClash(live, [claimant(older)])).toBeUndefined();
  });

  it("platforms with different hosts do not clash", () => {
    const other = platform("other", "2026-01-01T00:00:00Z", "other.example.test");
    expect(hostClash(claimant(newer), [claimant(other)])).toBeUndefined();
  });
});

async function getPlatform(client: FakeKubeClient, name: string): Promise<ScalePlatform> {
  return (await client.get("cronscale.io/v1alpha1", "ScalePlatform", "ns", name)) as ScalePlatform;
}

describe("ScalePlatformReconciler and hosts", () => {
  it("holds the second platform claiming a host, naming the first, and lets it go once the host is free", async () => {
    const first = platform("first", "2026-01-01T00:00:00Z");
    const second = platform("second", "2026-01-01T00:00:10Z");
    const { ctx, client, events } = makeCtx([first, second, ...clusterObjects({})]);
    const rec = new ScalePlatformReconciler(TEST_CONFIG, {
      random: counterRandom().random,
      probe: fakeProbe(true).probe,
      detector: new FeatureDetector(60_000),
      health: new HealthTracker(),
      jitter: () => 0.5,
    });
    const key = { namespace: "ns", name: "second" };
    await rec.reconcile({ namespace: "ns", name: "first" }, ctx);
    const delays = [];
    for (let i = 0; i < 2; i++) delays.push((await rec.reconcile(key, ctx)).requeueAfter);
    // Re-checked with backoff: nothing about the second platform changes when the first goes.
    expect(delays).toEqual([2000, 4000]);
    const held = await getPlatform(client, "second");
    expect(held.status?.phase).toBe("Failed");
    const ready = held.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "HostConflict" });
    expect(ready?.message).toContain("host shop.example.test is served by ScalePlatform ns/first");
    expect(events.withReason("HostConflict")).toHaveLength(1);
    expect(await client.get("networking.k8s.io/v1", "Ingress", "ns", "second")).toBeUndefined();

    await client.delete("cronscale.io/v1alpha1", "ScalePlatform", "ns", "first");
    await client.delete("networking.k8s.io/v1", "Ingress", "ns", "first");
    const res = await rec.reconcile(key, ctx);
    expect(res.requeueAfter).toBe(2000); // provisioning pace, not the conflict's backoff
    const ingress = await client.get("networking.k8s.io/v1", "Ingress", "ns", "second");
    expect((ingress?.spec as { rules?: { host: string }[] } | undefined)?.rules?.[0]?.host).toBe(
      "shop.example.test",
    );
    const freed = await getPlatform(client, "second");
    expect(freed.status?.phase).toBe("Provisioning");
    expect(freed.status?.conditions?.find((c) => c.type === "Ready")?.reason).not.toBe("HostConflict");
  });
});
