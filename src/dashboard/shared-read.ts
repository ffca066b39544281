import type { Logger } from "pino";
import { gvkOf } from "../api/v1alpha1/kind.ts";
import { type ScalePlatform, scalePlatformKind } from "../api/v1alpha1/scaleplatform.ts";
import { type ScalePlatformBackup, scalePlatformBackupKind } from "../api/v1alpha1/scaleplatformbackup.ts";
import { type ScalePlatformRestore, scalePlatformRestoreKind } from "../api/v1alpha1/scaleplatformrestore.ts";
import { ApiError } from "../runtime/errors.ts";
import type { ListWatchSource } from "../runtime/listwatch.ts";
import type { KubeObject, ResourceType } from "../runtime/types.ts";
import { allowed } from "./access.ts";
import { type ListCache, SharedListCache } from "./list-cache.ts";
import { type Session, viewerApi } from "./sessions.ts";

// Reading the shared lists (list-cache.ts) for one viewer: what the cache holds is shown only
// when a SelfSubjectAccessReview made with the viewer's token allows what the viewer's own
// request would need (`list` for a list, `get` for one object), in that namespace; a refusal is
// the 403 the viewer's own request would get. Access answers are cached per session (30 s, a
// refusal 5 s: access.ts), so a revoked RoleBinding stops a live page within 30 s.

/** The API server's refusal of `verb resource` in `namespace` to this viewer. */
export function forbidden(s: Session, verb: string, resource: string, namespace: string): ApiError {
  return new ApiError(403, "Forbidden", "forbidden", {
    message: `${resource}.cronscale.io is forbidden: User "${s.user?.username}" cannot ${verb} resource "${resource}" in API group "cronscale.io" in the namespace "${namespace}"`,
  });
}

/**
 * The namespace's cached `resource` objects for this viewer: undefined when there is no cache or
 * the namespace is not cached (read with the viewer's token then); throws the 403 when the viewer
 * may not `verb` them there.
 */
export async function sharedList<T extends KubeObject>(
  s: Session,
  cache: Pick<ListCache<T>, "list"> | undefined,
  resource: string,
  namespace: string,
  verb: "list" | "get" | "watch" = "list",
): Promise<readonly T[] | undefined> {
  if (!cache) return undefined;
  const [may, items] = await Promise.all([allowed(s, verb, resource, namespace), cache.list(namespace)]);
  if (!items) return undefined;
  if (!may) throw forbidden(s, verb, resource, namespace);
  return items;
}

/**
 * Follows the namespace's cached list until `signal` aborts, calling `onChange` once at the start
 * (as a watch begins with the current objects: a change between the page and its event stream is
 * not missed) and then after changes, at most once per `burstMs` (status writes come in bursts);
 * false at once when the namespace is not cached (the caller then watches as the viewer).
 */
export async function followShared<T extends KubeObject>(
  cache: ListCache<T> | undefined,
  namespace: string,
  signal: AbortSignal,
  onChange: () => void,
  burstMs = 200,
): Promise<boolean> {
  if (!cache || !(await cache.list(namespace))) return false;
  let timer: NodeJS.Timeout | undefined;
  const off = cache.subscribe(namespace, () => {
    timer ??= setTimeout(() => {
      timer = undefined;
      if (!signal.aborted) onChange();
    }, burstMs);
  });
  onChange();
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
  off();
  clearTimeout(timer);
  return true;
}

/**
 * One platform for a live page's update: from the shared list when the namespace is cached (the
 * viewer may `get` platforms there), else read as the viewer. Full pages always read as the
 * viewer, so a change the viewer just made is on the page that follows it.
 */
export async function livePlatform(
  s: Session,
  lists: PlatformLists | undefined,
  namespace: string,
  name: string,
): Promise<ScalePlatform> {
  const cached = await sharedList(s, lists?.platforms, "scaleplatforms", namespace, "get");
  if (!cached) return viewerApi(s).getPlatform(namespace, name);
  const p = cached.find((x) => x.metadata.name === name);
  if (!p) throw new ApiError(404, "NotFound", `scaleplatforms.cronscale.io "${name}" not found`);
  return p;
}

/** The platform kinds' shared lists. */
export interface PlatformLists {
  platforms: ListCache<ScalePlatform>;
  backups: ListCache<ScalePlatformBackup>;
  restores: ListCache<ScalePlatformRestore>;
}

/** Resource types of the platform lists, for the dashboard's own list/watch. */
export const PLATFORM_LIST_TYPES: Record<keyof PlatformLists, ResourceType> = {
  platforms: gvkOf(scalePlatformKind),
  backups: gvkOf(scalePlatformBackupKind),
  restores: gvkOf(scalePlatformRestoreKind),
};

/** One shared list per platform kind, each read with `sourceFor` (the dashboard's own identity). */
export function platformLists(
  sourceFor: (type: ResourceType, namespace: string) => ListWatchSource,
  log: Logger,
): PlatformLists & { stop(): Promise<void> } {
  const make = <T extends KubeObject>(what: keyof PlatformLists) =>
    new SharedListCache<T>({ log, what, sourceFor: (ns) => sourceFor(PLATFORM_LIST_TYPES[what], ns) });
  const lists = {
    platforms: make<ScalePlatform>("platforms"),
    backups: make<ScalePlatformBackup>("backups"),
    restores: make<ScalePlatformRestore>("restores"),
  };
  return {
    ...lists,
    stop: async () => {
      await Promise.all(Object.values(lists).map((l) => l.stop()));
    },
  };
}
