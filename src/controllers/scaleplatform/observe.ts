import { appPodSelector, LABEL_MANAGED_BY, LABEL_PLATFORM, MANAGED_BY } from "../../api/v1alpha1/labels.ts";
import { platformDatabasePvcName } from "../../api/v1alpha1/names.ts";
import { childKey, type LiveChildren, readChildren, readLabelled } from "../../runtime/children.ts";
import { readList } from "../../runtime/read.ts";
import type { KubeObject, ReconcileContext } from "../../runtime/types.ts";
import { backupSelector } from "./backup/desired.ts";
import type { BackupWorld } from "./backup/plan.ts";
import { nameOf, type PlatformInputs } from "./desired/common.ts";
import { issuerOf, tlsSecretName } from "./desired/ingress.ts";
import type { FeatureDetector } from "./features.ts";
import { childRefs, type PlatformWorld, prunedTypes, volumeBelowPlan } from "./plan.ts";
import type { TlsObservation } from "./progress.ts";
import type { SecretResolution } from "./secrets.ts";

// The one read of the world per pass: every child the plan may name, the labelled objects of
// the pruned kinds, the volume, the app pods, the backups' Jobs and the database pod, the
// user's TLS Secret, the IngressClass. Thin I/O; the plan (plan.ts) and the derivations decide.

const DEFAULT_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class";

/** Reads what the plan and the status of one pass are derived from. */
export async function observePlatform(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  inp: PlatformInputs,
  secrets: SecretResolution,
  detector: FeatureDetector,
): Promise<PlatformWorld> {
  const ns = inp.platform.metadata.namespace ?? "";
  const name = nameOf(inp);
  const live = await readChildren(ctx, cached, ns, childRefs(inp));
  // Only the operator's own objects: a Secret another tool made for the platform is never pruned.
  const selector = `${LABEL_MANAGED_BY}=${MANAGED_BY},${LABEL_PLATFORM}=${name}`;
  const labelled = await readLabelled(ctx, cached, ns, prunedTypes(inp), selector);
  const pvc = live.get(childKey("PersistentVolumeClaim", platformDatabasePvcName(name)));
  const sc = (pvc?.spec as { storageClassName?: string } | undefined)?.storageClassName ?? "";
  const expandable =
    volumeBelowPlan(inp, pvc) && sc ? await detector.expandable(ctx.client, sc, ctx.clock.now()) : false;
  const pods = await readList(ctx, cached, "v1", "Pod", ns, appPodSelector(name));
  // A user's Secret carries none of our labels: ask the API server, not the cache.
  const tlsSecret = inp.spec.tls?.secretName
    ? await ctx.client.get("v1", "Secret", ns, tlsSecretName(inp))
    : undefined;
  return {
    now: ctx.clock.now(),
    live,
    labelled,
    secrets,
    pvc,
    expandable,
    pods,
    tlsSecret,
    ingressClassExists: inp.spec.stopped ? false : await ingressClassExists(ctx, inp),
    backup: inp.spec.backup ? await observeBackups(ctx, cached, ns, name) : undefined,
  };
}

/** The backup Jobs, their pods and the database pod. */
async function observeBackups(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  ns: string,
  name: string,
): Promise<BackupWorld> {
  const selector = backupSelector(name);
  const jobs = await readList(ctx, cached, "batch/v1", "Job", ns, selector);
  const pods = await readList(ctx, cached, "v1", "Pod", ns, selector);
  const dbPod = (
    await readChildren(ctx, cached, ns, [{ apiVersion: "v1", kind: "Pod", name: `${name}-db-0` }])
  ).get(childKey("Pod", `${name}-db-0`));
  return { jobs, pods, dbPod };
}

/** Whether the Ingress's class (or a default class when none is named) exists. */
async function ingressClassExists(ctx: ReconcileContext, inp: PlatformInputs): Promise<boolean> {
  const name = inp.spec.ingressClassName;
  if (name) return (await ctx.client.get("networking.k8s.io/v1", "IngressClass", "", name)) !== undefined;
  const classes = await ctx.client.list("networking.k8s.io/v1", "IngressClass");
  return classes.some((c) => c.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === "true");
}

/** How TLS is provided and the live object showing its progress (`live`: after the plan's writes). */
export function tlsObservation(
  inp: PlatformInputs,
  live: LiveChildren,
  tlsSecret: KubeObject | undefined,
): TlsObservation {
  if (inp.spec.tls?.secretName) return { kind: "secret", name: tlsSecretName(inp), secret: tlsSecret };
  if (!issuerOf(inp)) return { kind: "noIssuer" };
  if (!inp.features.certManager) return { kind: "waitingForCertManager" };
  return { kind: "certificate", certificate: live.get(childKey("Certificate", tlsSecretName(inp))) };
}
