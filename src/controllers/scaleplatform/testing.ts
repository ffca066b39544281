import pino from "pino";
import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import {
  type ScalePlatform,
  type ScalePlatformSpec,
  scalePlatformSpecSchema,
} from "../../api/v1alpha1/scaleplatform.ts";
import { FakeClock } from "../../runtime/clock.ts";
import { MemoryEventRecorder } from "../../runtime/events.ts";
import { FakeKubeClient } from "../../runtime/fake-client.ts";
import type { KubeObject, ReconcileContext } from "../../runtime/types.ts";
import { DEFAULT_PLATFORM_CONFIG, type PlatformControllerConfig } from "./config.ts";
import { FeatureDetector } from "./features.ts";
import { type HealthProbe, HealthTracker } from "./health.ts";
import { ScalePlatformReconciler } from "./reconciler.ts";

// Shared fixtures of the ScalePlatform unit tests (not a test file itself).

/** Config with recognisable images and pod-IP health checks. */
export const TEST_CONFIG: PlatformControllerConfig = {
  ...DEFAULT_PLATFORM_CONFIG,
  images: { platform: "img/commerce:1", database: "img/postgres:1", backupRunner: "img/node:1" },
  healthCheck: { ...DEFAULT_PLATFORM_CONFIG.healthCheck, target: "pod" },
  defaultIssuer: { name: "test-ca", kind: "ClusterIssuer" },
};

/** spec.backup with an S3 repository, as the unit tests write it. */
export const TEST_BACKUP = {
  repository: {
    s3: {
      endpoint: "s3.kube-system.svc:443",
      bucket: "backups",
      credentialsSecretRef: { name: "s3-creds" },
      caRef: { configMapName: "kube-root-ca.crt" },
    },
  },
};

/** A platform as the apiserver stores it (defaults applied). */
export function makePlatform(
  name: string,
  spec: Partial<ScalePlatformSpec> = {},
  generation = 1,
): ScalePlatform {
  return {
    apiVersion: API_VERSION,
    kind: "ScalePlatform",
    metadata: {
      name,
      namespace: "ns",
      uid: `uid-${name}`,
      generation,
      creationTimestamp: "2026-01-01T00:00:00Z",
    },
    spec: scalePlatformSpecSchema.parse({
      plan: "Standard",
      domains: { platform: `${name}.example.test` },
      ...spec,
    }),
  };
}

/** Deterministic "random" strings: a counter, so tests can tell generations apart. */
export function counterRandom(): { random: (n: number) => string; calls: () => number } {
  let i = 0;
  return { random: (n) => String(++i).padStart(n, "x"), calls: () => i };
}

/** A probe that answers as `state.ok` says and records the URLs it was asked for. */
export function fakeProbe(ok = true): { probe: HealthProbe; urls: string[]; state: { ok: boolean } } {
  const urls: string[] = [];
  const state = { ok };
  const probe: HealthProbe = async (url) => {
    urls.push(url);
    return state.ok
      ? { ok: true, latencyMs: 3, url, statusCode: 200, message: "HTTP 200: ok (database answers)" }
      : { ok: false, latencyMs: 3, url, statusCode: 503, message: "HTTP 503: database: connection refused" };
  };
  return { probe, urls, state };
}

/** A reconciler with deterministic randomness, a healthy probe and fresh detector and tracker. */
export function testReconciler(
  deps: { health?: HealthTracker; recheckMs?: number; config?: PlatformControllerConfig } = {},
): ScalePlatformReconciler {
  return new ScalePlatformReconciler(deps.config ?? TEST_CONFIG, {
    random: counterRandom().random,
    probe: fakeProbe(true).probe,
    detector: new FeatureDetector(deps.recheckMs ?? 60_000),
    health: deps.health ?? new HealthTracker(),
  });
}

/** A reconcile context over a fake client, fake clock and in-memory event recorder. */
export function makeCtx(objects: KubeObject[] = [], now = "2026-01-01T00:00:30Z") {
  const clock = new FakeClock(now);
  const client = new FakeKubeClient({ clock, objects });
  const events = new MemoryEventRecorder();
  const log = pino({ level: "silent" });
  const ctx: ReconcileContext = { client, clock, events, log, reconcileId: "test" };
  return { ctx, client, clock, events };
}

/**
 * Plays the cluster's controllers once: the database pod is ready, its volume bound, the app
 * rolled out with one ready pod of the current template, the Ingress has an address, the
 * Certificate (if any) is Ready.
 */
export async function simulateCluster(
  client: FakeKubeClient,
  name: string,
  opts: { certReady?: boolean } = {},
): Promise<void> {
  const ns = "ns";
  const sts = await client.get("apps/v1", "StatefulSet", ns, `${name}-db`);
  if (sts)
    await client.applyStatus({ ...sts, status: { replicas: 1, readyReplicas: 1, availableReplicas: 1 } });
  const pvcName = `data-${name}-db-0`;
  if (sts && !(await client.get("v1", "PersistentVolumeClaim", ns, pvcName))) {
    const tmpl = (
      sts.spec as { volumeClaimTemplates: { metadata: { labels: Record<string, string> }; spec: unknown }[] }
    ).volumeClaimTemplates[0]!;
    await client.create({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: pvcName, namespace: ns, labels: tmpl.metadata.labels },
      spec: { ...(tmpl.spec as object), storageClassName: "local-path" },
    });
  }
  const pvc = await client.get("v1", "PersistentVolumeClaim", ns, pvcName);
  if (pvc) {
    const size = (pvc.spec as { resources: { requests: { storage: string } } }).resources.requests.storage;
    await client.applyStatus({ ...pvc, status: { phase: "Bound", capacity: { storage: size } } });
  }
  const dep = await client.get("apps/v1", "Deployment", ns, name);
  if (dep) {
    const spec = dep.spec as {
      replicas?: number;
      template: { metadata: { labels: Record<string, string>; annotations: Record<string, string> } };
    };
    const replicas = spec.replicas ?? 1;
    await client.applyStatus({
      ...dep,
      status: {
        observedGeneration: dep.metadata.generation,
        replicas,
        updatedReplicas: replicas,
        availableReplicas: replicas,
        readyReplicas: replicas,
      },
    });
    for (const p of await client.list("v1", "Pod", ns))
      await client.delete("v1", "Pod", ns, p.metadata.name ?? "");
    for (let i = 0; i < replicas; i++) {
      await client.create({
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name: `${name}-pod-${i}`,
          namespace: ns,
          labels: spec.template.metadata.labels,
          annotations: spec.template.metadata.annotations,
        },
        status: {
          phase: "Running",
          podIP: `10.0.0.${10 + i}`,
          conditions: [{ type: "Ready", status: "True" }],
          containerStatuses: [
            {
              name: "platform",
              started: true,
              ready: true,
              restartCount: 0,
              state: { running: { startedAt: "2026-01-01T00:00:20Z" } },
            },
          ],
        },
      });
    }
  }
  const ing = await client.get("networking.k8s.io/v1", "Ingress", ns, name);
  if (ing) await client.applyStatus({ ...ing, status: { loadBalancer: { ingress: [{ ip: "127.0.0.1" }] } } });
  const cert = await client.get("cert-manager.io/v1", "Certificate", ns, `${name}-tls`);
  if (cert && opts.certReady !== false)
    await client.applyStatus({
      ...cert,
      status: { conditions: [{ type: "Ready", status: "True", reason: "Ready", message: "ok" }] },
    });
}

/** Cluster-scoped objects a platform-ready cluster has: default IngressClass, StorageClass, and optionally cert-manager / custom metrics. */
export function clusterObjects(
  opts: { certManager?: boolean; customMetrics?: boolean; expandable?: boolean } = {},
): KubeObject[] {
  const out: KubeObject[] = [
    {
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      metadata: { name: "traefik", annotations: { "ingressclass.kubernetes.io/is-default-class": "true" } },
      spec: {},
    },
    {
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: { name: "local-path" },
      provisioner: "x",
      allowVolumeExpansion: opts.expandable ?? false,
    },
  ];
  if (opts.certManager)
    out.push({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "certificates.cert-manager.io" },
      spec: {},
      status: { conditions: [{ type: "Established", status: "True" }] },
    });
  if (opts.customMetrics)
    out.push({
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: "v1beta2.custom.metrics.k8s.io" },
      spec: {},
      status: { conditions: [{ type: "Available", status: "True" }] },
    });
  return out;
}

/**
 * Makes the fake API server answer the custom metrics API (v1beta2) for `metric` of the pods in
 * namespace "ns": a MetricValueList with one value per pod `podNames` lists (empty list when none).
 * Returns a counter of the queries it answered.
 */
export function serveCustomMetric(
  client: FakeKubeClient,
  metric: string,
  podNames: () => string[],
): { queries: () => number; selectors: string[] } {
  const selectors: string[] = [];
  client.serveRaw(`/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/pods/*/${metric}`, (q) => {
    selectors.push(q.labelSelector ?? "");
    return {
      kind: "MetricValueList",
      apiVersion: "custom.metrics.k8s.io/v1beta2",
      metadata: {},
      items: podNames().map((name) => ({
        describedObject: { kind: "Pod", namespace: "ns", name, apiVersion: "/v1" },
        metric: { name: metric },
        timestamp: "2026-01-01T00:00:00Z",
        value: "3",
      })),
    };
  });
  return { queries: () => selectors.length, selectors };
}

/** What settle() drives: a reconciler of platform ns/shop with its fake cluster. */
export interface Settleable {
  rec: { reconcile(key: { namespace: string; name: string }, ctx: ReconcileContext): Promise<unknown> };
  ctx: ReconcileContext;
  client: FakeKubeClient;
  clock: FakeClock;
}

/**
 * Reconciles platform ns/shop and plays the cluster, `rounds` times 3 s apart, then reconciles
 * once more; resolves with that last result.
 */
export async function settle(s: Settleable, rounds = 6): Promise<unknown> {
  const key = { namespace: "ns", name: "shop" };
  for (let i = 0; i < rounds; i++) {
    await s.rec.reconcile(key, s.ctx);
    await simulateCluster(s.client, "shop");
    s.clock.advance(3000);
  }
  return s.rec.reconcile(key, s.ctx);
}
