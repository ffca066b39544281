import { platformAppName, platformTlsName } from "../../api/v1alpha1/names.ts";
import { controlledBy } from "../../runtime/owners.ts";
import type { KubeObject, ReconcileContext } from "../../runtime/types.ts";
import { childKey, type LiveChildren, readChild } from "./children.ts";
import { nameOf, type PlatformInputs } from "./desired/common.ts";

// The operator touches only objects this platform controls (controller ownerReference): a
// child's name taken by someone else's object refuses the platform instead of overwriting it,
// and pruning skips objects that are not ours.

/**
 * Reads the live object of every desired child. Returns them keyed by kind and name, or the
 * refusal message of the first name held by an object this platform does not control.
 */
export async function readOwnedChildren(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  ns: string,
  inp: PlatformInputs,
  desired: readonly KubeObject[],
): Promise<{ live: LiveChildren } | { conflict: string }> {
  const live: LiveChildren = new Map();
  for (const d of desired) {
    const name = d.metadata.name ?? "";
    const l = await readChild(ctx, cached, d.apiVersion, d.kind, ns, name);
    if (l && !controlledBy(l, inp.platform.metadata.uid))
      return { conflict: `${d.kind} ${name} already exists and does not belong to this platform` };
    live.set(childKey(d.kind, d.metadata.name), l);
  }
  return { live };
}

/** Deletes the HPA while stopped (`noHpa`), and a Certificate no longer wanted (`noCert`). */
export async function pruneChildren(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  inp: PlatformInputs,
  noHpa: boolean,
  noCert: boolean,
): Promise<void> {
  const ns = inp.platform.metadata.namespace ?? "";
  const gone: [string, string, string][] = [];
  if (noHpa) gone.push(["autoscaling/v2", "HorizontalPodAutoscaler", platformAppName(nameOf(inp))]);
  if (noCert && inp.features.certManager)
    gone.push(["cert-manager.io/v1", "Certificate", platformTlsName(nameOf(inp))]);
  for (const [apiVersion, kind, name] of gone) {
    const l = await readChild(ctx, cached, apiVersion, kind, ns, name);
    if (!l || !controlledBy(l, inp.platform.metadata.uid)) continue;
    await ctx.client.delete(apiVersion, kind, ns, name);
    ctx.log.info({ platform: nameOf(inp), kind, name }, "deleted child");
  }
}
