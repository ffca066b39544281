import { describe, expect, it } from "vitest";
import type { ScalePlatform } from "../../api/v1alpha1/scaleplatform.ts";
import type { KubeObject } from "../../runtime/types.ts";
import { TRAEFIK_CONTROLLER, TRAEFIK_MIDDLEWARE_CRD } from "./desired/edge.ts";
import { clusterObjects, makeCtx, makePlatform, settle, testReconciler } from "./testing.ts";

// The edge Middlewares through the reconciler behind a Traefik IngressClass: created with the
// platform, untouched at steady state, raised by a plan upgrade; the condition says so.

const key = { namespace: "ns", name: "shop" };

function setup() {
  const objects = clusterObjects().map((o) =>
    o.kind === "IngressClass" ? { ...o, spec: { controller: TRAEFIK_CONTROLLER } } : o,
  );
  objects.push({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: TRAEFIK_MIDDLEWARE_CRD },
    spec: {},
    status: { conditions: [{ type: "Established", status: "True" }] },
  } as KubeObject);
  const env = makeCtx([makePlatform("shop"), ...objects]);
  return { ...env, rec: testReconciler() };
}

describe("edge protection in the reconciler", () => {
  it("applies the Middlewares once, writes nothing at steady state, and raises them on upgrade", async () => {
    const s = setup();
    await settle(s);
    const rate = async () =>
      (
        (await s.client.get("traefik.io/v1alpha1", "Middleware", "ns", "shop-ratelimit"))?.spec as {
          rateLimit: { average: number };
        }
      )?.rateLimit.average;
    expect(await rate()).toBe(50);
    const p = (await s.client.get("cronscale.io/v1alpha1", "ScalePlatform", "ns", "shop")) as ScalePlatform;
    expect(p.status?.conditions?.find((c) => c.type === "EdgeProtected")).toMatchObject({
      status: "True",
      reason: "TraefikMiddlewares",
    });
    s.client.clearWrites();
    for (let i = 0; i < 3; i++) {
      s.clock.advance(20_000);
      await s.rec.reconcile(key, s.ctx);
    }
    expect(s.client.writes.map((w) => `${w.verb} ${w.kind}/${w.name}`)).toEqual([]);
    await s.client.replace({ ...p, spec: { ...p.spec, plan: "Professional" } });
    await s.rec.reconcile(key, s.ctx);
    expect(await rate()).toBe(100);
    // Moved to a class Traefik does not serve: the Middlewares go, the condition says so.
    const up = (await s.client.get("cronscale.io/v1alpha1", "ScalePlatform", "ns", "shop")) as ScalePlatform;
    await s.client.replace({ ...up, spec: { ...up.spec, ingressClassName: "other" } });
    await s.rec.reconcile(key, s.ctx);
    expect(await rate()).toBeUndefined();
    const moved = (await s.client.get(
      "cronscale.io/v1alpha1",
      "ScalePlatform",
      "ns",
      "shop",
    )) as ScalePlatform;
    expect(moved.status?.conditions?.find((c) => c.type === "EdgeProtected")).toMatchObject({
      status: "False",
      reason: "UnsupportedIngressClass",
    });
  });
});
