import type { KubeObject, ReconcileContext } from "./types.ts";

// Reads go to the informer cache for the kinds the manager watches (cheap, possibly a little
// stale) and to the API server otherwise. `cached` holds "apiVersion|kind" of the watched kinds.

/** Reads one object. */
export async function readOne<T extends KubeObject>(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  apiVersion: string,
  kind: string,
  namespace: string,
  name: string,
): Promise<T | undefined> {
  if (ctx.cache && cached.has(`${apiVersion}|${kind}`))
    return ctx.cache.get<T>(apiVersion, kind, namespace, name);
  return ctx.client.get<T>(apiVersion, kind, namespace, name);
}

/** Lists objects of a namespace by label selector. */
export async function readList<T extends KubeObject>(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  apiVersion: string,
  kind: string,
  namespace: string,
  selector: string,
): Promise<T[]> {
  if (ctx.cache && cached.has(`${apiVersion}|${kind}`))
    return ctx.cache.list<T>(apiVersion, kind, namespace, selector);
  return ctx.client.list<T>(apiVersion, kind, namespace, selector);
}
