import type { KubeClient } from "../../runtime/client.ts";
import type { KubeObject } from "../../runtime/types.ts";
import type { ClusterFeatures, EdgeFeatures } from "./desired/common.ts";
import { TRAEFIK_MIDDLEWARE_CRD } from "./desired/edge.ts";

// Detection of optional cluster APIs, cached for `ttlMs` so a reconcile does not ask the API
// server every time, and re-checked after that so installing cert-manager or a custom-metrics
// adapter later is noticed without an operator restart.

/** CRD whose presence means cert-manager is installed. */
export const CERTIFICATE_CRD = "certificates.cert-manager.io";
/** APIServices that serve custom.metrics.k8s.io (either is enough; the HPA controller tries both). */
export const CUSTOM_METRICS_APISERVICES = ["v1beta2.custom.metrics.k8s.io", "v1beta1.custom.metrics.k8s.io"];

type Conds = { status?: { conditions?: { type: string; status: string }[] } };

function condTrue(o: KubeObject | undefined, type: string): boolean {
  return ((o as Conds | undefined)?.status?.conditions ?? []).some(
    (c) => c.type === type && c.status === "True",
  );
}

/** A custom metrics API list of values (custom.metrics.k8s.io MetricValueList). */
interface MetricValueList {
  items?: { describedObject?: { name?: string }; value?: string }[];
}

/** Path of the values of `metric` for the pods of a namespace (the pods are picked by labelSelector). */
export function podMetricPath(version: string, namespace: string, metric: string): string {
  return `/apis/custom.metrics.k8s.io/${version}/namespaces/${encodeURIComponent(namespace)}/pods/*/${encodeURIComponent(metric)}`;
}

/** The Ingress classes (and the default one) and whether Traefik's Middleware CRD is established. */
async function detectEdge(client: KubeClient): Promise<EdgeFeatures> {
  type IngressClass = KubeObject & { spec?: { controller?: string } };
  const list = await client.list<IngressClass>("networking.k8s.io/v1", "IngressClass", "");
  const classes: Record<string, string> = {};
  let defaultClass: string | undefined;
  for (const c of list) {
    const name = c.metadata.name ?? "";
    classes[name] = c.spec?.controller ?? "";
    if (c.metadata.annotations?.["ingressclass.kubernetes.io/is-default-class"] === "true")
      defaultClass = name;
  }
  const mw = await client.get(
    "apiextensions.k8s.io/v1",
    "CustomResourceDefinition",
    "",
    TRAEFIK_MIDDLEWARE_CRD,
  );
  return {
    classes,
    ...(defaultClass ? { defaultClass } : {}),
    traefikMiddleware: condTrue(mw, "Established"),
  };
}

/** Detects cert-manager and a served custom-metrics API, caching the answer. */
export class FeatureDetector {
  private readonly ttlMs: number;
  private cached: { at: number; value: ClusterFeatures } | undefined;
  /** Version of the Available custom metrics APIService (v1beta2 preferred). */
  private metricsVersion: string | undefined;
  private readonly metricValues = new Map<string, { at: number; value: Record<string, boolean> }>();
  private readonly storageClasses = new Map<string, { at: number; expandable: boolean | undefined }>();

  constructor(ttlMs: number) {
    this.ttlMs = ttlMs;
  }

  /** The features, from cache when fresher than the TTL. */
  async detect(client: KubeClient, now: Date): Promise<ClusterFeatures> {
    const t = now.getTime();
    if (this.cached && t - this.cached.at < this.ttlMs) return this.cached.value;
    const crd = await client.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", CERTIFICATE_CRD);
    let customMetrics = false;
    this.metricsVersion = undefined;
    for (const name of CUSTOM_METRICS_APISERVICES) {
      const svc = await client.get("apiregistration.k8s.io/v1", "APIService", "", name);
      if (condTrue(svc, "Available")) {
        customMetrics = true;
        this.metricsVersion = name.split(".")[0];
        break;
      }
    }
    const value = {
      certManager: condTrue(crd, "Established"),
      customMetrics,
      edge: await detectEdge(client),
    };
    this.cached = { at: t, value };
    return value;
  }

  /**
   * Which of `metrics` the custom metrics API has values for, for the pods `labelSelector` picks
   * (an HPA never scales down while one of its metrics has none). Cached per `key` (the
   * platform) for the TTL. Call after detect() found the API; a 404, an empty list or an error
   * all mean "no values" — an error is logged by the caller through `onError`.
   */
  async podMetricValues(
    client: KubeClient,
    key: string,
    namespace: string,
    labelSelector: string,
    metrics: readonly string[],
    now: Date,
    onError: (metric: string, err: unknown) => void = () => {},
  ): Promise<Record<string, boolean>> {
    const version = this.metricsVersion;
    if (!version) return Object.fromEntries(metrics.map((m) => [m, false]));
    const hit = this.metricValues.get(key);
    if (hit && now.getTime() - hit.at < this.ttlMs && metrics.every((m) => m in hit.value)) return hit.value;
    const value: Record<string, boolean> = {};
    for (const m of metrics) {
      try {
        const list = await client.getRaw<MetricValueList>(podMetricPath(version, namespace, m), {
          labelSelector,
        });
        value[m] = (list?.items?.length ?? 0) > 0;
      } catch (err) {
        onError(m, err);
        value[m] = false;
      }
    }
    this.metricValues.set(key, { at: now.getTime(), value });
    return value;
  }

  /** Forgets a platform's cached metric values (it was deleted). */
  forgetPlatform(key: string): void {
    this.metricValues.delete(key);
  }

  /** Whether a StorageClass allows volume expansion; undefined when it does not exist. */
  async expandable(client: KubeClient, storageClass: string, now: Date): Promise<boolean | undefined> {
    const hit = this.storageClasses.get(storageClass);
    if (hit && now.getTime() - hit.at < this.ttlMs) return hit.expandable;
    const sc = await client.get<KubeObject & { allowVolumeExpansion?: boolean }>(
      "storage.k8s.io/v1",
      "StorageClass",
      "",
      storageClass,
    );
    const expandable = sc ? sc.allowVolumeExpansion === true : undefined;
    this.storageClasses.set(storageClass, { at: now.getTime(), expandable });
    return expandable;
  }
}
