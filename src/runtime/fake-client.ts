import { isDeepStrictEqual } from "node:util";
import type { ApplyOptions, DeleteOptions, KubeClient } from "./client.ts";
import { ApiError } from "./errors.ts";
import { parseSelector } from "./selector.ts";
import type { Clock, KubeObject } from "./types.ts";

/** One write the fake client received (every write verb is recorded, even when it changed nothing). */
export interface RecordedWrite {
  verb: "apply" | "applyStatus" | "create" | "replace" | "delete";
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  /** Whether stored state changed (a no-op apply keeps resourceVersion, as on a real server). */
  changed: boolean;
  object?: KubeObject;
}

/** A change notification, as a watch would deliver it. */
export type FakeEvent = { type: "ADDED" | "MODIFIED" | "DELETED"; object: KubeObject };

/** Answers a raw GET (see FakeKubeClient.serveRaw): the body, or undefined for 404. */
export type RawHandler = (query: Record<string, string>) => unknown;

/** Lets a test fail a request: return an error to throw it, or undefined to proceed. */
export type ErrorInjector = (
  verb: string,
  apiVersion: string,
  kind: string,
  name: string,
) => Error | undefined;

function clone<T>(x: T): T {
  return structuredClone(x);
}

function typeKey(apiVersion: string, kind: string): string {
  return `${apiVersion}|${kind}`;
}

function objKey(namespace: string | undefined, name: string | undefined): string {
  return `${namespace ?? ""}/${name ?? ""}`;
}

/** The part of an object whose change bumps metadata.generation. */
function specPart(o: KubeObject): unknown {
  const { metadata: _m, status: _s, ...rest } = o;
  return rest;
}

/**
 * In-memory KubeClient for unit tests. It assigns uid/resourceVersion/generation like a server,
 * records every write, evaluates label selectors, garbage-collects dependents by ownerReference,
 * honours finalizers, and can notify subscribers like a watch.
 *
 * Apply semantics approximate server-side apply by one field manager: top-level fields sent are
 * replaced whole, fields sent before and now omitted are removed, labels and annotations merge
 * with others' keys while ours follow the latest apply.
 */
export class FakeKubeClient implements KubeClient {
  readonly writes: RecordedWrite[] = [];
  /** Reads reconcilers made through the client (`get`/`list`/`getRaw`); informers' fake sources are not counted. */
  readonly reads: { verb: "get" | "list" | "getRaw"; apiVersion: string; kind: string; name: string }[] = [];
  injectError: ErrorInjector | undefined;
  private readonly store = new Map<string, Map<string, KubeObject>>();
  private readonly listeners = new Set<(e: FakeEvent) => void>();
  private readonly raw = new Map<string, RawHandler>();
  /** What our apply last set per object, to remove fields an apply no longer carries. */
  private readonly applied = new Map<string, { fields: string[]; labels: string[]; annotations: string[] }>();
  private rv = 1000;
  private uid = 0;
  private readonly clock: Clock;

  constructor(opts: { clock?: Clock; objects?: KubeObject[] } = {}) {
    this.clock = opts.clock ?? { now: () => new Date() };
    for (const o of opts.objects ?? []) this.seed(o);
  }

  /** Stores an object without recording a write (test setup). Returns the stored copy. */
  seed<T extends KubeObject>(obj: T): T {
    const stored = this.stamp(clone(obj), undefined);
    this.bucket(obj.apiVersion, obj.kind).set(objKey(obj.metadata.namespace, obj.metadata.name), stored);
    this.emit("ADDED", stored);
    return clone(stored) as T;
  }

  /** Serves raw GETs of `path` (an aggregated API, say); unserved paths answer 404. */
  serveRaw(path: string, handler: RawHandler): void {
    this.raw.set(path, handler);
  }

  /** Subscribes to changes; returns an unsubscribe function. */
  subscribe(fn: (e: FakeEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Writes that changed something (what "zero writes at steady state" is about, plus no-op applies). */
  changedWrites(): RecordedWrite[] {
    return this.writes.filter((w) => w.changed);
  }

  /** Forgets recorded writes (e.g. after the first reconcile). */
  clearWrites(): void {
    this.writes.length = 0;
    this.reads.length = 0;
  }

  /** Current resourceVersion counter (as a list's metadata.resourceVersion would show it). */
  currentResourceVersion(): string {
    return String(this.rv);
  }

  /** Every stored object of a type (all namespaces). */
  all<T extends KubeObject>(apiVersion: string, kind: string): T[] {
    return [...this.bucket(apiVersion, kind).values()].map((o) => clone(o) as T);
  }

  async get<T extends KubeObject>(apiVersion: string, kind: string, namespace: string, name: string) {
    this.maybeFail("get", apiVersion, kind, name);
    this.reads.push({ verb: "get", apiVersion, kind, name });
    const o = this.bucket(apiVersion, kind).get(objKey(namespace, name));
    return o ? (clone(o) as T) : undefined;
  }

  async list<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    namespace?: string,
    labelSelector?: string,
  ) {
    this.maybeFail("list", apiVersion, kind, "");
    this.reads.push({ verb: "list", apiVersion, kind, name: labelSelector ?? "" });
    const match = parseSelector(labelSelector);
    return [...this.bucket(apiVersion, kind).values()]
      .filter((o) => !namespace || o.metadata.namespace === namespace)
      .filter((o) => match(o.metadata.labels))
      .map((o) => clone(o) as T);
  }

  async getRaw<T>(path: string, query: Record<string, string> = {}) {
    this.maybeFail("getRaw", "", "", path);
    this.reads.push({ verb: "getRaw", apiVersion: "", kind: "", name: path });
    const body = this.raw.get(path)?.(query);
    return body === undefined ? undefined : (clone(body) as T);
  }

  async apply<T extends KubeObject>(obj: KubeObject, _opts?: ApplyOptions) {
    this.maybeFail("apply", obj.apiVersion, obj.kind, obj.metadata.name ?? "");
    const key = objKey(obj.metadata.namespace, obj.metadata.name);
    const bucket = this.bucket(obj.apiVersion, obj.kind);
    const live = bucket.get(key);
    const { status: _s, metadata, ...body } = clone(obj);
    const owned = this.applied.get(this.ownedKey(obj)) ?? { fields: [], labels: [], annotations: [] };
    let next: KubeObject;
    if (live) {
      // Like SSA by our single manager: fields we set are replaced whole, fields we set before
      // and no longer send are removed, others' fields (and labels) stay.
      next = clone(live);
      for (const f of owned.fields) if (!(f in body)) delete next[f];
      Object.assign(next, body);
      const meta = next.metadata;
      for (const m of ["labels", "annotations"] as const) {
        const merged: Record<string, string> = { ...(meta[m] ?? {}) };
        for (const k of owned[m]) if (!metadata[m] || !(k in metadata[m])) delete merged[k];
        Object.assign(merged, metadata[m] ?? {});
        if (Object.keys(merged).length) meta[m] = merged;
        else delete meta[m];
      }
      for (const f of ["ownerReferences", "finalizers"] as const) {
        if (metadata[f] !== undefined) meta[f] = metadata[f] as never;
      }
    } else {
      next = { ...body, metadata } as KubeObject;
    }
    const result = await this.commit<T>("apply", bucket, key, live, next);
    this.applied.set(this.ownedKey(obj), {
      fields: Object.keys(body).filter((f) => f !== "apiVersion" && f !== "kind"),
      labels: Object.keys(metadata.labels ?? {}),
      annotations: Object.keys(metadata.annotations ?? {}),
    });
    return result;
  }

  private ownedKey(o: KubeObject): string {
    return `${typeKey(o.apiVersion, o.kind)}|${objKey(o.metadata.namespace, o.metadata.name)}`;
  }

  async applyStatus<T extends KubeObject>(obj: KubeObject) {
    this.maybeFail("applyStatus", obj.apiVersion, obj.kind, obj.metadata.name ?? "");
    const key = objKey(obj.metadata.namespace, obj.metadata.name);
    const bucket = this.bucket(obj.apiVersion, obj.kind);
    const live = bucket.get(key);
    if (!live) throw new ApiError(404, "NotFound", `${obj.kind} ${key} not found`);
    const want = obj.metadata.resourceVersion;
    if (want && want !== live.metadata.resourceVersion) {
      throw new ApiError(409, "Conflict", `${obj.kind} ${key}: the object has been modified`);
    }
    const next = { ...clone(live), status: clone(obj.status) };
    return this.commit<T>("applyStatus", bucket, key, live, next);
  }

  async create<T extends KubeObject>(obj: KubeObject) {
    this.maybeFail("create", obj.apiVersion, obj.kind, obj.metadata.name ?? "");
    const bucket = this.bucket(obj.apiVersion, obj.kind);
    const o = clone(obj);
    if (!o.metadata.name && o.metadata.generateName) {
      o.metadata.name = `${o.metadata.generateName}${(this.uid + 1).toString(36).padStart(5, "0")}`;
    }
    const key = objKey(o.metadata.namespace, o.metadata.name);
    if (bucket.has(key)) throw new ApiError(409, "AlreadyExists", `${obj.kind} ${key} already exists`);
    return this.commit<T>("create", bucket, key, undefined, o);
  }

  async replace<T extends KubeObject>(obj: KubeObject) {
    this.maybeFail("replace", obj.apiVersion, obj.kind, obj.metadata.name ?? "");
    const bucket = this.bucket(obj.apiVersion, obj.kind);
    const key = objKey(obj.metadata.namespace, obj.metadata.name);
    const live = bucket.get(key);
    if (!live) throw new ApiError(404, "NotFound", `${obj.kind} ${key} not found`);
    const want = obj.metadata.resourceVersion;
    if (want && want !== live.metadata.resourceVersion) {
      throw new ApiError(409, "Conflict", `${obj.kind} ${key}: the object has been modified`);
    }
    return this.commit<T>("replace", bucket, key, live, clone(obj));
  }

  async delete(apiVersion: string, kind: string, namespace: string, name: string, opts: DeleteOptions = {}) {
    this.maybeFail("delete", apiVersion, kind, name);
    const bucket = this.bucket(apiVersion, kind);
    const key = objKey(namespace, name);
    const live = bucket.get(key);
    const rec = { verb: "delete" as const, apiVersion, kind, namespace, name };
    if (!live) {
      this.writes.push({ ...rec, changed: false });
      return false;
    }
    this.writes.push({ ...rec, changed: true });
    this.remove(bucket, key, live, opts.propagationPolicy !== "Orphan");
    return true;
  }

  /** Removes a finalizer-free object or marks it deleting; cascades to dependents like the GC. */
  private remove(bucket: Map<string, KubeObject>, key: string, live: KubeObject, cascade: boolean): void {
    if (live.metadata.finalizers?.length) {
      if (!live.metadata.deletionTimestamp) {
        live.metadata.deletionTimestamp = this.clock.now().toISOString();
        live.metadata.resourceVersion = String(++this.rv);
        this.emit("MODIFIED", live);
      }
      return;
    }
    bucket.delete(key);
    this.emit("DELETED", live);
    if (!cascade || !live.metadata.uid) return;
    for (const b of this.store.values()) {
      for (const [k, o] of [...b.entries()]) {
        if (o.metadata.ownerReferences?.some((r) => r.uid === live.metadata.uid)) this.remove(b, k, o, true);
      }
    }
  }

  private commit<T extends KubeObject>(
    verb: RecordedWrite["verb"],
    bucket: Map<string, KubeObject>,
    key: string,
    live: KubeObject | undefined,
    next: KubeObject,
  ): T {
    const rec = {
      verb,
      apiVersion: next.apiVersion,
      kind: next.kind,
      namespace: next.metadata.namespace ?? "",
      name: next.metadata.name ?? "",
    };
    if (live) {
      // Server-owned metadata survives whatever the client sent.
      for (const f of ["uid", "creationTimestamp", "generation", "resourceVersion", "deletionTimestamp"]) {
        if (live.metadata[f] !== undefined) next.metadata[f] = live.metadata[f];
        else delete next.metadata[f];
      }
      if (verb !== "applyStatus" && verb !== "replace") next.status = clone(live.status);
      if (next.status === undefined) delete next.status;
      if (isDeepStrictEqual(live, next)) {
        this.writes.push({ ...rec, changed: false, object: clone(next) });
        return clone(live) as T;
      }
    }
    const stored = this.stamp(next, live);
    bucket.set(key, stored);
    this.writes.push({ ...rec, changed: true, object: clone(stored) });
    this.emit(live ? "MODIFIED" : "ADDED", stored);
    // A finalizer removed from a deleting object completes the deletion.
    if (stored.metadata.deletionTimestamp && !stored.metadata.finalizers?.length) {
      this.remove(bucket, key, stored, true);
    }
    return clone(stored) as T;
  }

  /** Assigns server-populated metadata to a new or changed object. */
  private stamp(o: KubeObject, live: KubeObject | undefined): KubeObject {
    o.metadata.resourceVersion = String(++this.rv);
    if (!live) {
      o.metadata.uid ??= `00000000-0000-4000-8000-${String(++this.uid).padStart(12, "0")}`;
      o.metadata.creationTimestamp ??= this.clock
        .now()
        .toISOString()
        .replace(/\.\d+Z$/, "Z");
      o.metadata.generation ??= 1;
    } else if (!isDeepStrictEqual(specPart(live), specPart(o))) {
      o.metadata.generation = (live.metadata.generation ?? 1) + 1;
    }
    return o;
  }

  private bucket(apiVersion: string, kind: string): Map<string, KubeObject> {
    const k = typeKey(apiVersion, kind);
    let b = this.store.get(k);
    if (!b) {
      b = new Map();
      this.store.set(k, b);
    }
    return b;
  }

  private emit(type: FakeEvent["type"], obj: KubeObject): void {
    for (const l of this.listeners) l({ type, object: clone(obj) });
  }

  private maybeFail(verb: string, apiVersion: string, kind: string, name: string): void {
    const err = this.injectError?.(verb, apiVersion, kind, name);
    if (err) throw err;
  }
}
