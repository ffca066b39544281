import { type EdgeLimits, edgeLimits } from "../../../api/plans.ts";
import { platformAppName } from "../../../api/v1alpha1/names.ts";
import type { KubeObject } from "../../../runtime/types.ts";
import { childMeta, nameOf, type PlatformInputs } from "./common.ts";

// Edge protection (README.md here, "Edge protection"): per-client-address request rate and
// concurrent-request limits and a request body limit by plan, configured at the Ingress
// controller in front of the app. Traefik: three traefik.io Middlewares referenced from the
// Ingress; ingress-nginx: its documented annotations; any other class: nothing is enforced and
// the EdgeProtected condition says so. Header and idle timeouts are the controller's entrypoint
// settings (global, not per Ingress): see the controller README. Pure.

/** spec.controller of Traefik's and ingress-nginx's IngressClasses. */
export const TRAEFIK_CONTROLLER = "traefik.io/ingress-controller";
export const NGINX_CONTROLLER = "k8s.io/ingress-nginx";
/** CRD of Traefik's Middleware. */
export const TRAEFIK_MIDDLEWARE_CRD = "middlewares.traefik.io";
export const TRAEFIK_API_VERSION = "traefik.io/v1alpha1";
/** The Ingress annotation listing Traefik middlewares (`<namespace>-<name>@kubernetescrd`). */
export const TRAEFIK_MIDDLEWARES_ANNOTATION = "traefik.ingress.kubernetes.io/router.middlewares";

/** How the edge of a platform is protected. */
export type EdgeMode =
  | { kind: "traefik" }
  | { kind: "nginx" }
  | { kind: "none"; reason: "UnsupportedIngressClass" | "MiddlewareCRDMissing"; message: string };

/** The Ingress class a platform's Ingress is served by: its own, else the cluster's default. */
export function ingressClassOf(inp: PlatformInputs): string | undefined {
  return inp.spec.ingressClassName ?? inp.features.edge?.defaultClass;
}

/** Which mechanism protects the platform's edge, from the class's controller. */
export function edgeMode(inp: PlatformInputs): EdgeMode {
  const cls = ingressClassOf(inp);
  const controller = cls ? inp.features.edge?.classes[cls] : undefined;
  if (controller === TRAEFIK_CONTROLLER) {
    if (inp.features.edge?.traefikMiddleware) return { kind: "traefik" };
    return {
      kind: "none",
      reason: "MiddlewareCRDMissing",
      message: `IngressClass ${cls} is Traefik but the ${TRAEFIK_MIDDLEWARE_CRD} CRD is not installed: no rate, concurrency or body limit is enforced`,
    };
  }
  if (controller === NGINX_CONTROLLER) return { kind: "nginx" };
  return {
    kind: "none",
    reason: "UnsupportedIngressClass",
    message: `IngressClass ${cls ?? "(none)"} (controller ${controller ?? "unknown"}) is neither Traefik nor ingress-nginx: no rate, concurrency or body limit is enforced; configure them at that controller`,
  };
}

/** Names of the three Middlewares of a platform. */
export function middlewareNames(platform: string) {
  const app = platformAppName(platform);
  return { rateLimit: `${app}-ratelimit`, inFlight: `${app}-inflight`, body: `${app}-body` };
}

/** The Traefik Middlewares (rate limit, in-flight limit, body limit), keyed by client address. */
export function desiredMiddlewares(inp: PlatformInputs): KubeObject[] {
  if (edgeMode(inp).kind !== "traefik") return [];
  const l = edgeLimits(inp.spec.plan);
  const n = middlewareNames(nameOf(inp));
  // depth 0: the client address is the connection's remote address, not a forwarded header a
  // client could set to dodge its limit.
  const sourceCriterion = { ipStrategy: { depth: 0 } };
  const mw = (name: string, spec: object): KubeObject => ({
    apiVersion: TRAEFIK_API_VERSION,
    kind: "Middleware",
    metadata: childMeta(inp, name, "app"),
    spec,
  });
  return [
    mw(n.rateLimit, {
      rateLimit: { average: l.ratePerSecond, period: "1s", burst: l.burst, sourceCriterion },
    }),
    mw(n.inFlight, { inFlightReq: { amount: l.maxInFlight, sourceCriterion } }),
    mw(n.body, { buffering: { maxRequestBodyBytes: l.maxBodyMiB * 2 ** 20 } }),
  ];
}

/** The Ingress annotations that enforce the limits (empty when the class has no known mechanism). */
export function edgeAnnotations(inp: PlatformInputs): Record<string, string> {
  const mode = edgeMode(inp);
  const l = edgeLimits(inp.spec.plan);
  if (mode.kind === "traefik") {
    const ns = inp.platform.metadata.namespace ?? "";
    const n = middlewareNames(nameOf(inp));
    const refs = [n.rateLimit, n.inFlight, n.body].map((m) => `${ns}-${m}@kubernetescrd`);
    return { [TRAEFIK_MIDDLEWARES_ANNOTATION]: refs.join(",") };
  }
  if (mode.kind === "nginx") return nginxAnnotations(l);
  return {};
}

/** ingress-nginx's documented per-client-address annotations. */
function nginxAnnotations(l: EdgeLimits): Record<string, string> {
  return {
    "nginx.ingress.kubernetes.io/limit-rps": String(l.ratePerSecond),
    // limit-burst-multiplier × limit-rps is the burst ingress-nginx allows.
    "nginx.ingress.kubernetes.io/limit-burst-multiplier": String(
      Math.max(1, Math.round(l.burst / l.ratePerSecond)),
    ),
    "nginx.ingress.kubernetes.io/limit-connections": String(l.maxInFlight),
    "nginx.ingress.kubernetes.io/proxy-body-size": `${l.maxBodyMiB}m`,
  };
}

/** The EdgeProtected condition: what is and is not enforced. */
export function edgeCondition(inp: PlatformInputs): {
  status: "True" | "False";
  reason: string;
  message: string;
} {
  const mode = edgeMode(inp);
  if (mode.kind === "none") return { status: "False", reason: mode.reason, message: mode.message };
  const l = edgeLimits(inp.spec.plan);
  const what = `${l.ratePerSecond} req/s (burst ${l.burst}) and ${l.maxInFlight} concurrent requests per client address, request body up to ${l.maxBodyMiB} MiB`;
  return mode.kind === "traefik"
    ? { status: "True", reason: "TraefikMiddlewares", message: `Traefik enforces ${what}` }
    : { status: "True", reason: "NginxAnnotations", message: `ingress-nginx enforces ${what}` };
}
