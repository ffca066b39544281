import { toQuantity } from "../../api/plans.ts";
import { platformAppName, platformDatabasePvcName } from "../../api/v1alpha1/names.ts";
import { needsApply } from "../../runtime/apply.ts";
import { readList, readOne } from "../../runtime/read.ts";
import type { KubeObject, ReconcileContext } from "../../runtime/types.ts";
import type { PlatformControllerConfig } from "./config.ts";
import { appPodSelector, bytes, nameOf, type PlatformInputs } from "./desired/common.ts";
import { desiredPvcExpansion } from "./desired/database.ts";
import { issuerOf, tlsSecretName } from "./desired/ingress.ts";
import type { FeatureDetector } from "./features.ts";
import type { TlsObservation } from "./progress.ts";
import type { StorageObservation } from "./status.ts";

// Reads of the live world that the steps and status are derived from, plus the two small
// actions that depend on them (PVC growth). Thin I/O; the decisions are in progress.ts/status.ts.

const DEFAULT_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class";

/** App pods of a platform. */
export function appPods(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  inp: PlatformInputs,
): Promise<KubeObject[]> {
  return readList(
    ctx,
    cached,
    "v1",
    "Pod",
    inp.platform.metadata.namespace ?? "",
    appPodSelector(nameOf(inp)),
  );
}

/** Whether the Ingress's class (or a default class when none is named) exists. */
export async function ingressClassExists(ctx: ReconcileContext, inp: PlatformInputs): Promise<boolean> {
  const name = inp.spec.ingressClassName;
  if (name) return (await ctx.client.get("networking.k8s.io/v1", "IngressClass", "", name)) !== undefined;
  const classes = await ctx.client.list("networking.k8s.io/v1", "IngressClass");
  return classes.some((c) => c.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === "true");
}

/** How TLS is provided and the live object showing its progress. */
export async function observeTls(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  inp: PlatformInputs,
): Promise<TlsObservation> {
  const ns = inp.platform.metadata.namespace ?? "";
  if (inp.spec.tls?.secretName) {
    const name = tlsSecretName(inp);
    // A user's Secret carries none of our labels: ask the API server, not the cache.
    const secret = await ctx.client.get("v1", "Secret", ns, name);
    return { kind: "secret", name, secret };
  }
  if (!issuerOf(inp)) return { kind: "noIssuer" };
  if (!inp.features.certManager) return { kind: "waitingForCertManager" };
  const certificate = await readOne(ctx, cached, "cert-manager.io/v1", "Certificate", ns, tlsSecretName(inp));
  return { kind: "certificate", certificate };
}

interface PvcLike {
  spec?: { storageClassName?: string; resources?: { requests?: { storage?: string } } };
  status?: { capacity?: { storage?: string } };
}

/**
 * The database volume: grows it to the plan's size when its StorageClass allows expansion, and
 * reports whether it has that size.
 */
export async function reconcileStorage(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  inp: PlatformInputs,
  detector: FeatureDetector,
): Promise<{ pvc?: KubeObject; storage: StorageObservation }> {
  const ns = inp.platform.metadata.namespace ?? "";
  const name = platformDatabasePvcName(nameOf(inp));
  const pvc = await readOne(ctx, cached, "v1", "PersistentVolumeClaim", ns, name);
  if (!pvc) return { storage: { kind: "unknown" } };
  const p = pvc as PvcLike;
  const wanted = toQuantity.storage(inp.budget.database.storageGiB);
  const requested = p.spec?.resources?.requests?.storage ?? "0";
  const actual = p.status?.capacity?.storage;
  if (bytes(requested) >= bytes(wanted)) {
    if (actual && bytes(actual) < bytes(requested))
      return { pvc, storage: { kind: "expanding", from: actual, to: requested } };
    return { pvc, storage: { kind: "sized" } };
  }
  const sc = p.spec?.storageClassName ?? "";
  const expandable = sc ? await detector.expandable(ctx.client, sc, ctx.clock.now()) : false;
  if (!expandable)
    return {
      pvc,
      storage: { kind: "notExpandable", storageClass: sc || "(none)", actual: actual ?? requested, wanted },
    };
  const patch = desiredPvcExpansion(inp, name);
  if (needsApply(patch, pvc)) {
    await ctx.client.apply(patch);
    ctx.log.info(
      { platform: nameOf(inp), pvc: name, from: requested, to: wanted },
      "expanding database volume",
    );
  }
  return { pvc, storage: { kind: "expanding", from: actual ?? requested, to: wanted } };
}

interface PodLike {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
  metadata: { name?: string; deletionTimestamp?: string };
}

/** URL of the health check: the Service's DNS name, or a ready app pod's IP; undefined when no pod is ready. */
export function healthUrl(
  config: PlatformControllerConfig,
  inp: PlatformInputs,
  pods: KubeObject[],
): string | undefined {
  const ns = inp.platform.metadata.namespace ?? "";
  if (config.healthCheck.target === "service") {
    return `http://${platformAppName(nameOf(inp))}.${ns}.svc.${config.healthCheck.clusterDomain}:80${config.healthPath}`;
  }
  // The first ready pod by name: a stable choice, so the URL in status does not flip between
  // pods of a scaled-out app (which would be a status write at steady state).
  const ready = (pods as PodLike[])
    .filter((p) => !p.metadata.deletionTimestamp && p.status?.podIP)
    .sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""))
    .filter((p) => (p.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True"));
  const ip = ready[0]?.status?.podIP;
  if (!ip) return undefined;
  const host = ip.includes(":") ? `[${ip}]` : ip;
  return `http://${host}:${config.appPort}${config.healthPath}`;
}
