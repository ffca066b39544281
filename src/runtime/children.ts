import { needsApply } from "./apply.ts";
import { isConflict } from "./errors.ts";
import { controlledBy } from "./owners.ts";
import { readList, readOne } from "./read.ts";
import type { KubeObject, ReconcileContext } from "./types.ts";

// One plan of children per reconcile: a controller reads the world once, plans its children
// with a pure function (each with a policy), and this executor is the only code that writes
// them: it applies what differs, creates what is created once, patches what someone else
// creates, and deletes what the owner controls (found by label) but did not plan.

/** How a planned child is written. */
export type ChildPolicy =
  /** Server-side apply whenever the live object differs from the planned one. */
  | "apply"
  /** Created when absent, never rewritten (generated values: passwords, keys, a first Job). */
  | "createOnce"
  /** Applied only to an object that exists: someone else creates it (a StatefulSet's volume). */
  | "patchOnly"
  /** Left as it is this pass (planned, so not pruned, but not written). */
  | "keep";

/** apiVersion, kind and name of a child (namespace: the owner's). */
export interface ChildRef {
  apiVersion: string;
  kind: string;
  name: string;
}

/** A child type the owner may stop planning: its controlled objects not planned are deleted. */
export interface ChildType {
  apiVersion: string;
  kind: string;
}

/** One child of a plan; `part` names the group it belongs to for the controller's own use. */
export type PlannedChild<P extends string = string> = {
  part: P;
  /** The owner does not control it (a Secret meant to outlive it): no ownership check. */
  unowned?: boolean;
} & (
  | { policy: "apply" | "patchOnly" | "keep"; object: KubeObject }
  /** `make` is called only when the child is absent (it may draw randomness). */
  | { policy: "createOnce"; ref: ChildRef; make: () => KubeObject }
);

/** The children an owner wants, in write order, and the types it prunes. */
export interface ChildPlan<P extends string = string> {
  children: PlannedChild<P>[];
  prune: ChildType[];
}

/** Live children keyed by {@link childKey}; undefined: read, and absent. */
export type LiveChildren = Map<string, KubeObject | undefined>;

/** Key of a child in {@link LiveChildren}. */
export function childKey(kind: string, name: string | undefined): string {
  return `${kind}/${name}`;
}

/** The child a planned entry names. */
export function refOf(c: PlannedChild): ChildRef {
  if (c.policy === "createOnce") return c.ref;
  return { apiVersion: c.object.apiVersion, kind: c.object.kind, name: c.object.metadata.name ?? "" };
}

/**
 * Reads each child by name: the cache first, then the API server (the caches hold only the
 * operator's labelled objects, so a miss may be an object of someone else).
 */
export async function readChildren(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  namespace: string,
  refs: readonly ChildRef[],
): Promise<LiveChildren> {
  const live: LiveChildren = new Map();
  for (const r of refs) {
    let l = await readOne(ctx, cached, r.apiVersion, r.kind, namespace, r.name);
    if (!l && cached.has(`${r.apiVersion}|${r.kind}`))
      l = await ctx.client.get(r.apiVersion, r.kind, namespace, r.name);
    live.set(childKey(r.kind, r.name), l);
  }
  return live;
}

/** The objects of the given types that carry `selector` (the owner's label), typed. */
export async function readLabelled(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  namespace: string,
  types: readonly ChildType[],
  selector: string,
): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const t of types) {
    // Cached list items may lack apiVersion/kind.
    for (const o of await readList(ctx, cached, t.apiVersion, t.kind, namespace, selector))
      out.push({ ...o, apiVersion: t.apiVersion, kind: t.kind });
  }
  return out;
}

/** The refusal message of the first planned child whose name an object of someone else holds. */
export function foreignChild(
  plan: ChildPlan,
  live: LiveChildren,
  ownerUid: string | undefined,
  ownerKind: string,
): string | undefined {
  for (const c of plan.children) {
    if (c.unowned || c.policy === "patchOnly") continue;
    const r = refOf(c);
    const l = live.get(childKey(r.kind, r.name));
    if (l && !controlledBy(l, ownerUid))
      return `${r.kind} ${r.name} already exists and does not belong to this ${ownerKind}`;
  }
  return undefined;
}

/** What the executor did: the live children after it, and the planned children it created. */
export interface ExecutedPlan<P extends string> {
  live: LiveChildren;
  created: { child: PlannedChild<P>; object: KubeObject }[];
}

/**
 * Writes the plan: each child by its policy, only where it differs; then deletes the objects in
 * `labelled` of a pruned type that the owner controls and did not plan. `world.live` must hold
 * every planned child (read by {@link readChildren}); the live children returned are those with
 * what the API server answered to each write.
 */
export async function executePlan<P extends string>(
  ctx: ReconcileContext,
  plan: ChildPlan<P>,
  world: { live: LiveChildren; labelled: readonly KubeObject[] },
  owner: { uid: string | undefined; log: Record<string, unknown> },
): Promise<ExecutedPlan<P>> {
  const live: LiveChildren = new Map(world.live);
  const created: ExecutedPlan<P>["created"] = [];
  const planned = new Set<string>();
  for (const c of plan.children) {
    const r = refOf(c);
    const k = childKey(r.kind, r.name);
    planned.add(`${r.apiVersion}|${k}`);
    if (!live.has(k)) throw new Error(`planned child ${k} was not read before the plan`);
    const l = live.get(k);
    const fields = { ...owner.log, kind: r.kind, name: r.name };
    if (c.policy === "keep") continue;
    if (c.policy === "createOnce") {
      if (l) continue;
      try {
        const o = await ctx.client.create(c.make());
        live.set(k, o);
        created.push({ child: c, object: o });
        ctx.log.info(fields, "created child");
      } catch (err) {
        if (!isConflict(err)) throw err; // created meanwhile: keep the existing one
      }
      continue;
    }
    if (c.policy === "patchOnly" && !l) continue;
    if (!needsApply(c.object, l)) continue;
    const o = await ctx.client.apply(c.object);
    live.set(k, o);
    if (!l) created.push({ child: c, object: o });
    ctx.log.info(fields, c.policy === "patchOnly" ? "patched child" : "applied child");
  }
  const pruned = new Set(plan.prune.map((t) => `${t.apiVersion}|${t.kind}`));
  for (const o of world.labelled) {
    const name = o.metadata.name ?? "";
    if (!pruned.has(`${o.apiVersion}|${o.kind}`) || !controlledBy(o, owner.uid)) continue;
    if (planned.has(`${o.apiVersion}|${childKey(o.kind, name)}`)) continue;
    await ctx.client.delete(o.apiVersion, o.kind, o.metadata.namespace ?? "", name, {
      propagationPolicy: "Background",
    });
    live.set(childKey(o.kind, name), undefined);
    ctx.log.info({ ...owner.log, kind: o.kind, name }, "deleted child");
  }
  return { live, created };
}
