import { describe, expect, it } from "vitest";
import { EDGE_LIMITS, edgeLimits } from "../../api/plans.ts";
import type { ScalePlatformSpec } from "../../api/v1alpha1/scaleplatform.ts";
import { type EdgeFeatures, platformInputs } from "./desired/common.ts";
import {
  desiredMiddlewares,
  edgeAnnotations,
  edgeCondition,
  NGINX_CONTROLLER,
  TRAEFIK_CONTROLLER,
  TRAEFIK_MIDDLEWARES_ANNOTATION,
} from "./desired/edge.ts";
import { desiredIngress } from "./desired/ingress.ts";
import { makePlatform, TEST_CONFIG } from "./testing.ts";

const classes = { traefik: TRAEFIK_CONTROLLER, nginx: NGINX_CONTROLLER, other: "example.com/haproxy" };
const traefikEdge: EdgeFeatures = { classes, defaultClass: "traefik", traefikMiddleware: true };

function inputs(edge: EdgeFeatures | undefined, spec: Partial<ScalePlatformSpec> = {}) {
  const p = makePlatform("shop", spec);
  return platformInputs(p, p.spec, TEST_CONFIG, { certManager: false, customMetrics: false, edge });
}

type Spec = Record<string, Record<string, unknown>>;

describe("edge protection", () => {
  it("orders the plans' limits Standard < Professional < Enterprise, Custom gets the highest", () => {
    const [s, p, e] = [EDGE_LIMITS.Standard, EDGE_LIMITS.Professional, EDGE_LIMITS.Enterprise];
    for (const k of ["ratePerSecond", "burst", "maxInFlight", "maxBodyMiB"] as const) {
      expect(s[k]).toBeLessThan(p[k]);
      expect(p[k]).toBeLessThan(e[k]);
    }
    expect(edgeLimits("Custom")).toEqual(e);
  });

  it("builds three Traefik Middlewares keyed by the connection's address, referenced from the Ingress", () => {
    const inp = inputs(traefikEdge);
    const mws = desiredMiddlewares(inp);
    expect(mws.map((m) => [m.apiVersion, m.kind, m.metadata.name])).toEqual([
      ["traefik.io/v1alpha1", "Middleware", "shop-ratelimit"],
      ["traefik.io/v1alpha1", "Middleware", "shop-inflight"],
      ["traefik.io/v1alpha1", "Middleware", "shop-body"],
    ]);
    const [rate, inflight, body] = mws.map((m) => m.spec as Spec);
    const crit = { ipStrategy: { depth: 0 } };
    expect(rate?.rateLimit).toEqual({ average: 50, period: "1s", burst: 100, sourceCriterion: crit });
    expect(inflight?.inFlightReq).toEqual({ amount: 20, sourceCriterion: crit });
    expect(body?.buffering).toEqual({ maxRequestBodyBytes: 10 * 2 ** 20 });
    expect(mws[0]?.metadata.ownerReferences?.[0]?.uid).toBe("uid-shop");
    expect(desiredIngress(inp).metadata.annotations).toEqual({
      [TRAEFIK_MIDDLEWARES_ANNOTATION]:
        "ns-shop-ratelimit@kubernetescrd,ns-shop-inflight@kubernetescrd,ns-shop-body@kubernetescrd",
    });
    expect(edgeCondition(inp)).toMatchObject({ status: "True", reason: "TraefikMiddlewares" });
    expect(edgeCondition(inp).message).toContain(
      "50 req/s (burst 100) and 20 concurrent requests per client address",
    );
  });

  it("raises the Middlewares' limits with the plan", () => {
    const spec = (plan: ScalePlatformSpec["plan"]) =>
      desiredMiddlewares(inputs(traefikEdge, { plan })).map((m) => m.spec as Spec);
    expect(spec("Enterprise")[0]?.rateLimit).toMatchObject({ average: 250, burst: 500 });
    expect(spec("Enterprise")[1]?.inFlightReq).toMatchObject({ amount: 100 });
    expect(spec("Professional")[2]?.buffering).toEqual({ maxRequestBodyBytes: 25 * 2 ** 20 });
  });

  it("uses ingress-nginx's annotations for an nginx class, and no Middleware", () => {
    const inp = inputs(traefikEdge, { ingressClassName: "nginx" });
    expect(desiredMiddlewares(inp)).toEqual([]);
    expect(edgeAnnotations(inp)).toEqual({
      "nginx.ingress.kubernetes.io/limit-rps": "50",
      "nginx.ingress.kubernetes.io/limit-burst-multiplier": "2",
      "nginx.ingress.kubernetes.io/limit-connections": "20",
      "nginx.ingress.kubernetes.io/proxy-body-size": "10m",
    });
    expect(edgeCondition(inp)).toMatchObject({ status: "True", reason: "NginxAnnotations" });
  });

  it("says nothing is enforced for another class, or for Traefik without the Middleware CRD", () => {
    const other = inputs(traefikEdge, { ingressClassName: "other" });
    expect(desiredMiddlewares(other)).toEqual([]);
    expect(desiredIngress(other).metadata.annotations).toBeUndefined();
    expect(edgeCondition(other)).toMatchObject({ status: "False", reason: "UnsupportedIngressClass" });
    expect(edgeCondition(other).message).toContain("example.com/haproxy");
    const noCrd = inputs({ ...traefikEdge, traefikMiddleware: false });
    expect(desiredMiddlewares(noCrd)).toEqual([]);
    expect(edgeCondition(noCrd)).toMatchObject({ status: "False", reason: "MiddlewareCRDMissing" });
    expect(edgeCondition(inputs(undefined)).reason).toBe("UnsupportedIngressClass");
  });
});
