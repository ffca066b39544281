import { GROUP } from "../api/v1alpha1/kind.ts";
import { ApiError } from "../runtime/errors.ts";
import type { ViewerApi } from "./kube.ts";
import type { Session } from "./sessions.ts";

// What the viewer may see and do, asked of the API server with the viewer's own token
// (SelfSubjectAccessReview), cached per session for a short while. Only used to hide controls
// and to offer namespaces: every action is still authorised by the API server itself.

const TTL_MS = 30_000;
// A refusal is kept for less time: access just granted (a RoleBinding applied a moment ago,
// which the API server's authorizer sees a little later) shows its controls within seconds.
const DENIED_TTL_MS = 5_000;

async function cached<T>(session: Session, key: string, load: () => Promise<T>): Promise<T> {
  session.access ??= new Map();
  const hit = session.access.get(key);
  const ttl = hit?.value === false ? DENIED_TTL_MS : TTL_MS;
  if (hit && Date.now() - hit.at < ttl) return hit.value as T;
  const value = await load();
  session.access.set(key, { at: Date.now(), value });
  return value;
}

function api(session: Session): ViewerApi {
  if (!session.api) throw new ApiError(401, "Unauthorized", "not signed in");
  return session.api;
}

/** Whether the viewer may `verb` the cronscale `resource` (or core `secrets`) in `namespace`. */
export function allowed(
  session: Session,
  verb: string,
  resource: string,
  namespace: string,
): Promise<boolean> {
  const [plural = "", subresource] = resource.split("/");
  const group = ["secrets", "pods"].includes(plural) ? "" : GROUP;
  return cached(session, `${verb}/${resource}/${namespace}`, () =>
    api(session).can({ verb, resource: plural, group, namespace, ...(subresource ? { subresource } : {}) }),
  );
}

/** The permissions a task page needs. */
export async function taskPermissions(session: Session, namespace: string) {
  const [create, update, del, readSecrets, listPods, readLogs, createRecords] = await Promise.all([
    allowed(session, "create", "scheduledtasks", namespace),
    allowed(session, "patch", "scheduledtasks", namespace),
    allowed(session, "delete", "scheduledtasks", namespace),
    allowed(session, "get", "secrets", namespace),
    allowed(session, "list", "pods", namespace),
    allowed(session, "get", "pods/log", namespace),
    allowed(session, "create", "taskexecutions", namespace),
  ]);
  // A rename creates the new task, moves the records, checks for a running run, deletes the old.
  const rename = create && update && del && createRecords && listPods;
  // Live output is the pod's raw log (kubectl logs -f), so secret values are not masked in it:
  // offered only to viewers who may read the Secrets anyway.
  return {
    create,
    update,
    delete: del,
    rename,
    readSecrets,
    followLogs: listPods && readLogs && readSecrets,
  };
}

/** Namespace of a ServiceAccount user name (system:serviceaccount:NS:NAME). */
export function serviceAccountNamespace(username: string): string | undefined {
  const m = /^system:serviceaccount:([^:]+):[^:]+$/.exec(username);
  return m?.[1];
}

/**
 * Namespaces where the viewer may list `resource`. Those the viewer may list namespaces for, else the
 * configured candidates and the viewer's own ServiceAccount namespace; each kept only when a
 * SelfSubjectAccessReview says the viewer may list tasks there.
 */
export function visibleNamespaces(
  session: Session,
  candidates: readonly string[],
  resource = "scheduledtasks",
): Promise<string[]> {
  return cached(session, `namespaces/${resource}`, async () => {
    const v = api(session);
    let names: string[];
    try {
      names = await v.listNamespaces();
    } catch (err) {
      if (!(err instanceof ApiError) || (err.statusCode !== 403 && err.statusCode !== 401)) throw err;
      const own = serviceAccountNamespace(session.user?.username ?? "");
      names = [...new Set([...candidates, ...(own ? [own] : [])])];
    }
    const everywhere = await allowed(session, "list", resource, "");
    if (everywhere) return names.sort();
    const ok = await Promise.all(names.map((n) => allowed(session, "list", resource, n)));
    return names.filter((_, i) => ok[i]).sort();
  });
}

/** The namespace a page shows: the one asked for, else "default" or the first visible; and the list to offer. */
export async function pickNamespace(
  session: Session,
  candidates: readonly string[],
  asked: string | undefined,
  resource = "scheduledtasks",
): Promise<{ ns: string; all: string[] }> {
  const all = await visibleNamespaces(session, candidates, resource);
  const ns = asked || (all.includes("default") ? "default" : (all[0] ?? "default"));
  return { ns, all: all.includes(ns) ? all : [...all, ns].sort() };
}
