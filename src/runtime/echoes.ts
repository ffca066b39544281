import type { ApplyOptions, KubeClient } from "./client.ts";
import { DelegatingClient } from "./delegating-client.ts";
import type { KubeObject, ObjectKey } from "./types.ts";
import { keyString } from "./types.ts";

// A controller's applies come back to it as watch events: the ConfigMap and CronJob a task pass
// applies wake the task once more, and that pass can only find what the first one left. Such an
// event is recognised exactly: the object's resourceVersion is the one the API server answered the
// apply with, so nothing happened to it since — the pass that applied it had that very object in
// hand. Anything else (a different resourceVersion, an event mapping to another key, a delete, a
// write by another controller or client) wakes the controller as before.

/** How long an applied object waits for its watch event before it is forgotten. */
const ECHO_TTL_MS = 60_000;

interface Applied {
  rv: string;
  /** The key (keyString) of the pass that applied it. */
  key: string;
  atMs: number;
}

const objectId = (apiVersion: string | undefined, kind: string | undefined, o: KubeObject) =>
  `${apiVersion}|${kind}|${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;

/** The applies of one controller's passes whose watch events have not arrived yet. */
export class OwnApplies {
  private readonly applied = new Map<string, Applied>();
  private readonly now: () => number;
  /** "apiVersion|kind" of the kinds worth remembering (those the controller watches). */
  private readonly watched: (apiVersion: string, kind: string) => boolean;
  private lastSweepMs = 0;

  constructor(watched: (apiVersion: string, kind: string) => boolean, now: () => number) {
    this.watched = watched;
    this.now = now;
  }

  /** Number of applies waiting for their event (for tests). */
  get size(): number {
    return this.applied.size;
  }

  /** Remembers what the API server answered an apply made by the pass of `key`. */
  record(result: KubeObject, key: ObjectKey): void {
    const rv = result?.metadata?.resourceVersion;
    if (!rv || !this.watched(result.apiVersion, result.kind)) return;
    const now = this.now();
    // Objects outside a label-selected cache never come back as events: drop them after a while.
    if (now - this.lastSweepMs > ECHO_TTL_MS) {
      this.lastSweepMs = now;
      for (const [id, a] of this.applied) if (now - a.atMs > ECHO_TTL_MS) this.applied.delete(id);
    }
    this.applied.set(objectId(result.apiVersion, result.kind, result), {
      rv,
      key: keyString(key),
      atMs: now,
    });
  }

  /**
   * Whether an add or update of `obj` (of the watched type) that maps to `keys` is the echo of an
   * apply by the pass of that same key: same resourceVersion as its answer. Any event of the
   * object ends the wait, echo or not.
   */
  isEcho(type: { apiVersion: string; kind: string }, obj: KubeObject, keys: readonly ObjectKey[]): boolean {
    if (this.applied.size === 0) return false;
    const id = objectId(type.apiVersion, type.kind, obj);
    const a = this.applied.get(id);
    if (!a) return false;
    this.applied.delete(id);
    return (
      a.rv === obj.metadata.resourceVersion &&
      this.now() - a.atMs <= ECHO_TTL_MS &&
      keys.length > 0 &&
      keys.every((k) => keyString(k) === a.key)
    );
  }

  /** A delete of the object: whatever was applied is gone. */
  forget(type: { apiVersion: string; kind: string }, obj: KubeObject): void {
    if (this.applied.size > 0) this.applied.delete(objectId(type.apiVersion, type.kind, obj));
  }
}

/** The client of one pass: as `inner`, with its applies remembered in `applies` for `key`. */
export class RecordingClient extends DelegatingClient {
  private readonly applies: OwnApplies;
  private readonly key: ObjectKey;

  constructor(inner: KubeClient, applies: OwnApplies, key: ObjectKey) {
    super(inner);
    this.applies = applies;
    this.key = key;
  }

  override async apply<T extends KubeObject>(obj: KubeObject, opts?: ApplyOptions) {
    const result = await this.inner.apply<T>(obj, opts);
    this.applies.record(result, this.key);
    return result;
  }

  override async applyStatus<T extends KubeObject>(obj: KubeObject) {
    const result = await this.inner.applyStatus<T>(obj);
    this.applies.record(result, this.key);
    return result;
  }

  // Creates and replaces are not remembered (the base class passes them on): a controller may
  // rely on their events (e.g. a created Job read back from the cache by the next pass).
}
