import { ANNOTATION_DATA_CLAIM, ANNOTATION_RESTORE_HOLD } from "../../api/v1alpha1/labels.ts";
import { platformDatabaseName } from "../../api/v1alpha1/names.ts";
import { needsApply } from "../../runtime/apply.ts";
import { readOne } from "../../runtime/read.ts";
import type { KubeObject, ObjectKey, ReconcileContext } from "../../runtime/types.ts";
import { desiredAppDeployment, desiredAppService } from "./desired/app.ts";
import type { PlatformInputs } from "./desired/common.ts";
import { desiredConfigMap } from "./desired/configmap.ts";
import { desiredDatabaseService, desiredDatabaseStatefulSet } from "./desired/database.ts";
import { desiredMiddlewares } from "./desired/edge.ts";
import { desiredHpa } from "./desired/hpa.ts";
import { desiredCertificate, desiredIngress } from "./desired/ingress.ts";

// The owned children of a platform: the desired set (pure builders, in apply order) and the
// writes that bring the live objects to it. Writes happen only where the live object differs.

/** Live children keyed by `kind/name`: two Services (app and database) share a kind. */
export type LiveChildren = Map<string, KubeObject | undefined>;

/** Key of a child in {@link LiveChildren}. */
export function childKey(kind: string, name: string | undefined): string {
  return `${kind}/${name}`;
}

/** Reads a child: cache first, then the API server (a cache miss may be an object of someone else). */
export async function readChild(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  apiVersion: string,
  kind: string,
  ns: string,
  name: string,
): Promise<KubeObject | undefined> {
  return (
    (await readOne(ctx, cached, apiVersion, kind, ns, name)) ??
    (await ctx.client.get(apiVersion, kind, ns, name))
  );
}

/** The desired children in apply order; the HPA and Certificate also apart (absent ones are pruned). */
export interface DesiredChildren {
  objects: KubeObject[];
  hpa?: KubeObject;
  certificate?: KubeObject;
}

/**
 * Builds the desired children. Reads the live StatefulSet first: its `volumeClaimTemplates` are
 * immutable, so the desired one keeps the live template's storage size.
 */
export async function desiredChildren(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  key: ObjectKey,
  inp: PlatformInputs,
  data: Record<string, string>,
): Promise<DesiredChildren> {
  const liveSts = await readChild(
    ctx,
    cached,
    "apps/v1",
    "StatefulSet",
    key.namespace,
    platformDatabaseName(key.name),
  );
  const templateStorage = (
    liveSts?.spec as
      | { volumeClaimTemplates?: { spec?: { resources?: { requests?: { storage?: string } } } }[] }
      | undefined
  )?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage;
  const objects: KubeObject[] = [
    desiredConfigMap(inp, data),
    desiredDatabaseService(inp),
    desiredDatabaseStatefulSet(inp, templateStorage, liveSts?.metadata.annotations?.[ANNOTATION_DATA_CLAIM]),
    desiredAppService(inp),
    desiredAppDeployment(inp, data),
    // The Middlewares before the Ingress that references them (Traefik skips a router whose
    // middleware is missing).
    ...desiredMiddlewares(inp),
    desiredIngress(inp),
  ];
  const certificate = desiredCertificate(inp);
  if (certificate) objects.push(certificate);
  const hpa = desiredHpa(inp);
  if (hpa) objects.push(hpa);
  return { objects, hpa, certificate };
}

/**
 * Applies every desired child that differs from its live object, updating `live` with what the
 * API server returned; returns the children that did not exist before (`Kind/name`). While the
 * configuration is held (`configHeld`), the ConfigMap and Deployment stay as they are.
 */
export async function applyChildren(
  ctx: ReconcileContext,
  key: ObjectKey,
  inp: PlatformInputs,
  desired: readonly KubeObject[],
  live: LiveChildren,
  configHeld: string | undefined,
): Promise<string[]> {
  const missing: string[] = [];
  for (let d of desired) {
    const l = live.get(childKey(d.kind, d.metadata.name));
    if (configHeld && (d.kind === "ConfigMap" || d.kind === "Deployment")) continue;
    // Starting after a stop: an HPA never scales a Deployment at 0 replicas, so set its minimum
    // once; later applies leave replicas out again and the HPA owns it. Not while a restore's
    // cutover holds the app at zero (until the hold's time at most).
    if (
      d.kind === "Deployment" &&
      !inp.spec.stopped &&
      (l?.spec as { replicas?: number } | undefined)?.replicas === 0 &&
      !restoreHeld(l, ctx.clock.now())
    ) {
      d = { ...d, spec: { ...(d.spec as object), replicas: inp.budget.app.minReplicas } };
    } else if (!needsApply(d, l)) continue;
    const applied = await ctx.client.apply(d);
    if (!l) missing.push(`${d.kind}/${d.metadata.name}`);
    live.set(childKey(d.kind, d.metadata.name), applied);
    ctx.log.info({ platform: key.name, kind: d.kind, name: d.metadata.name }, "applied child");
  }
  return missing;
}

/** Whether a restore's cutover holds the app Deployment `live` at zero at `now` (ANNOTATION_RESTORE_HOLD). */
export function restoreHeld(live: KubeObject | undefined, now: Date): boolean {
  const hold = live?.metadata.annotations?.[ANNOTATION_RESTORE_HOLD];
  const until = Date.parse(hold?.slice(hold.lastIndexOf("@") + 1) ?? "");
  return now.getTime() < until;
}
