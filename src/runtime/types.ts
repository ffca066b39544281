import type { Logger } from "pino";
import type { KubeClient } from "./client.ts";
import type { EventRecorder } from "./events.ts";

/** Identifies one object; cluster-scoped objects use namespace "". */
export interface ObjectKey {
  namespace: string;
  name: string;
}

/** What a reconcile asks of the loop: nothing (done) or another pass after `requeueAfter` ms. */
export interface ReconcileResult {
  requeueAfter?: number;
}

/** The source of "now"; injected so builders and status logic stay pure and testable. */
export interface Clock {
  now(): Date;
}

/** A minimal Kubernetes object: what every kind has in common. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  // Kind-specific top-level fields (spec, status, data, ...).
  [key: string]: unknown;
}

/** The metadata subset the runtime reads and writes. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: unknown[];
  [key: string]: unknown;
}

/** metadata.ownerReferences entry. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** Names a resource type well enough to list, watch and address it. */
export interface ResourceType {
  apiVersion: string;
  kind: string;
  /** Lower-case plural used in URLs (e.g. "configmaps"). Looked up by discovery when absent. */
  plural?: string;
  /** API group ("" for core). Derived from apiVersion when absent. */
  group?: string;
  /** API version (e.g. "v1"). Derived from apiVersion when absent. */
  version?: string;
  /** Whether objects live in namespaces. Looked up by discovery when absent. */
  namespaced?: boolean;
}

/** Read access to informer caches, keyed by resource type. */
export interface CacheReader {
  /** Returns the cached object, or undefined when absent or when no informer watches that type. */
  get<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    namespace: string,
    name: string,
  ): T | undefined;
  /** Lists cached objects of a type, optionally within one namespace and matching a label selector. */
  list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    namespace?: string,
    labelSelector?: string,
  ): T[];
}

/** Everything a reconciler may touch; time, client and events are injected. */
export interface ReconcileContext {
  client: KubeClient;
  clock: Clock;
  log: Logger;
  events: EventRecorder;
  reconcileId: string;
  /** Informer caches (present when run by a Manager); read-only and possibly slightly stale. */
  cache?: CacheReader;
}

/** The one method a controller implements: make the world match the object named by `key`. */
export interface Reconciler<Ctx extends ReconcileContext = ReconcileContext> {
  reconcile(key: ObjectKey, ctx: Ctx): Promise<ReconcileResult>;
}

/** Formats a key the way queues and logs show it: "namespace/name" or "name". */
export function keyString(key: ObjectKey): string {
  return key.namespace ? `${key.namespace}/${key.name}` : key.name;
}

/** Parses "namespace/name" (or "name") back into an ObjectKey. */
export function parseKey(s: string): ObjectKey {
  const i = s.indexOf("/");
  return i < 0 ? { namespace: "", name: s } : { namespace: s.slice(0, i), name: s.slice(i + 1) };
}

/** The key of an object. */
export function objectKey(obj: { metadata?: { namespace?: string; name?: string } }): ObjectKey {
  return { namespace: obj.metadata?.namespace ?? "", name: obj.metadata?.name ?? "" };
}

/** Splits "group/version" (or "v1") into its parts; the core group is "". */
export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf("/");
  return i < 0
    ? { group: "", version: apiVersion }
    : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}
