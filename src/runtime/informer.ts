import type { Logger } from "pino";
import { type BackoffOptions, KeyBackoff } from "./backoff.ts";
import { RealClock, type TimerClock } from "./clock.ts";
import { errorMessage, isGone } from "./errors.ts";
import type { ListPage, ListWatchSource, WatchHandle } from "./listwatch.ts";
import { parseSelector } from "./selector.ts";
import { type KubeObject, keyString, objectKey } from "./types.ts";

/** Callbacks of an informer; they should only enqueue keys (they run synchronously). */
export interface InformerHandlers<T extends KubeObject = KubeObject> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  /** Also called for deletes discovered by a relist (the object is the last one seen). */
  onDelete?(obj: T): void;
}

/** Options of an Informer. */
export interface InformerOptions {
  source: ListWatchSource;
  log: Logger;
  clock?: TimerClock;
  labelSelector?: string;
  /** Page size of LIST requests. */
  pageSize?: number;
  /** Server-side watch timeout; a random value in [min, 2·min) spreads reconnects (client-go style). */
  minWatchTimeoutSeconds?: number;
  /** Relist when no watch event (bookmarks included) arrived for this long. */
  watchdogMs?: number;
  /** Backoff between failed list/watch attempts. */
  backoff?: BackoffOptions;
  random?: () => number;
  /**
   * Trims every object on entry (list and watch), before it is cached or handed to handlers, as
   * client-go's SetTransform does: keep only the fields the controllers read.
   */
  transform?: (obj: KubeObject) => KubeObject;
  /**
   * Labels to index by: `list(namespace, "label=value")` on one of them answers from the index
   * instead of scanning the whole cache.
   */
  indexLabels?: readonly string[];
}

type WatchEnd = { kind: "closed" } | { kind: "gone" } | { kind: "error"; err: unknown } | { kind: "relist" };

/** How long a written object may stand in for one the watch has not delivered. */
const MUTATION_TTL_MS = 60_000;

/**
 * Whether `a` is a later version than `b`. resourceVersions are opaque to clients in general, but
 * the API server's are etcd revisions (client-go's MutationCache relies on the same); anything
 * not an integer counts as not newer, so the watched object wins.
 */
function newer(a: KubeObject, b: KubeObject): boolean {
  const x = Number(a.metadata.resourceVersion);
  const y = Number(b.metadata.resourceVersion);
  return Number.isInteger(x) && Number.isInteger(y) && x > y;
}

function indexAdd(index: Map<string, Set<string>>, value: string, key: string): void {
  const set = index.get(value);
  if (set) set.add(key);
  else index.set(value, new Set([key]));
}

/**
 * A list+watch cache that keeps going: failed lists and watches are retried with jittered
 * exponential backoff, a 410 or a watchdog timeout triggers a paginated relist, and each relist is
 * diffed against the cache so deletes missed while the watch was down are still delivered.
 */
export class Informer<T extends KubeObject = KubeObject> {
  private readonly cache = new Map<string, T>();
  private readonly handlers: InformerHandlers<T>[] = [];
  private readonly opts: Required<
    Omit<InformerOptions, "labelSelector" | "backoff" | "transform" | "indexLabels">
  > &
    InformerOptions;
  /** Objects this process wrote that the watch has not delivered yet (see `mutated`). */
  /** `raw` as written; `obj` its trimmed form, made on first read (most are never read). */
  private readonly mutations = new Map<string, { raw: KubeObject; obj?: T; atMs: number }>();
  private readonly selects: (labels: Record<string, string> | undefined) => boolean;
  /** label → "namespace/value" → keys of the cached objects carrying it. */
  private readonly indexes = new Map<string, Map<string, Set<string>>>();
  private readonly clock: TimerClock;
  private readonly retry: KeyBackoff;
  private resourceVersion = "";
  private isSynced = false;
  private inRelist = false;
  private lastEvent: Date | undefined;
  private lastActivityMs = 0;
  private stopped = true;
  private stopCtl = new AbortController();
  private currentWatch: { handle?: WatchHandle; end: (e: WatchEnd) => void } | undefined;
  private watchdogCancel: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private syncWaiters: (() => void)[] = [];
  /** Counters for tests and metrics. */
  readonly stats = { lists: 0, watches: 0, events: 0, relistDeletes: 0, errors: 0 };

  constructor(opts: InformerOptions) {
    this.clock = opts.clock ?? new RealClock();
    this.opts = {
      pageSize: 500,
      minWatchTimeoutSeconds: 300,
      watchdogMs: 5 * 60_000,
      random: Math.random,
      clock: this.clock,
      ...opts,
    };
    for (const l of opts.indexLabels ?? []) this.indexes.set(l, new Map());
    this.selects = parseSelector(opts.labelSelector);
    this.retry = new KeyBackoff({
      baseMs: 800,
      maxMs: 30_000,
      jitter: 0.5,
      random: this.opts.random,
      ...opts.backoff,
    });
  }

  /** Registers callbacks; register before `start` so the initial list is delivered. */
  addHandlers(h: InformerHandlers<T>): void {
    this.handlers.push(h);
  }

  /** True once the first full list has been stored. */
  get synced(): boolean {
    return this.isSynced;
  }

  /**
   * True while the events of a relist are delivered: one such event may stand for several changes
   * the watch missed (handlers that skip known events must not skip these).
   */
  get relisting(): boolean {
    return this.inRelist;
  }

  /** When the last add/update/delete was delivered (undefined before any). */
  get lastEventTime(): Date | undefined {
    return this.lastEvent;
  }

  /** Description of the watched type, for logs and metrics. */
  get description(): string {
    return this.opts.source.description;
  }

  /**
   * A cached object by "namespace/name": the newer of what the watch delivered and what this
   * process wrote last (see `mutated`).
   */
  get(key: string): T | undefined {
    const cached = this.cache.get(key);
    const m = this.mutations.get(key);
    if (!m) return cached;
    if (this.clock.now().getTime() - m.atMs < MUTATION_TTL_MS && (!cached || newer(m.raw, cached))) {
      m.obj ??= this.trim(m.raw);
      return m.obj;
    }
    this.mutations.delete(key);
    return cached;
  }

  /**
   * Records an object as the API server returned it for this process's own write, until the
   * watch delivers that version or a newer one — as client-go's MutationCache does. Without it, a
   * reconcile that follows its own write before the watch event arrives sees the old object and
   * writes the same again. Objects outside the selector are ignored.
   */
  mutated(raw: KubeObject): void {
    if (!this.selects(raw.metadata.labels)) return;
    // Trimmed only if read: the watch event of the write usually comes before any reader.
    const key = keyString(objectKey(raw));
    const cached = this.cache.get(key);
    if (cached && !newer(raw, cached)) return;
    this.mutations.set(key, { raw, atMs: this.clock.now().getTime() });
  }

  /** Adds an index on a label (built from what is cached already). */
  addIndex(label: string): void {
    if (this.indexes.has(label)) return;
    const index = new Map<string, Set<string>>();
    this.indexes.set(label, index);
    for (const [key, o] of this.cache) {
      const v = o.metadata.labels?.[label];
      if (v === undefined) continue;
      indexAdd(index, `${o.metadata.namespace ?? ""}/${v}`, key);
    }
  }

  /** Number of cached objects. */
  get size(): number {
    return this.cache.size;
  }

  /**
   * Cached objects, optionally in one namespace and matching a label selector. A selector that
   * starts with `label=value` on an indexed label, within a namespace, reads the index.
   */
  list(namespace?: string, labelSelector?: string): T[] {
    const first = /^([^\s,!=]+)==?([^\s,]*)(,|$)/.exec(labelSelector ?? "");
    const index = namespace && first ? this.indexes.get(first[1]!) : undefined;
    if (index && first) {
      const keys = index.get(`${namespace}/${first[2]}`);
      // `label=value` alone (every reconcile's read of its children) is the index's answer as it is.
      const match = first[3] ? parseSelector(labelSelector) : undefined;
      const out: T[] = [];
      for (const k of keys ?? []) {
        const o = this.cache.get(k);
        if (o && (!match || match(o.metadata.labels))) out.push(o);
      }
      return out;
    }
    const match = parseSelector(labelSelector);
    return [...this.cache.values()].filter(
      (o) => (!namespace || o.metadata.namespace === namespace) && match(o.metadata.labels),
    );
  }

  /** Stores (or with `obj` undefined, removes) a cached object and keeps the indexes in step. */
  private put(key: string, obj: T | undefined): void {
    const old = this.cache.get(key);
    for (const [label, index] of this.indexes) {
      const before = old?.metadata.labels?.[label];
      const after = obj?.metadata.labels?.[label];
      if (before === after && old && obj) continue;
      if (old && before !== undefined) {
        const k = `${old.metadata.namespace ?? ""}/${before}`;
        const set = index.get(k);
        set?.delete(key);
        if (set?.size === 0) index.delete(k);
      }
      if (obj && after !== undefined) {
        indexAdd(index, `${obj.metadata.namespace ?? ""}/${after}`, key);
      }
    }
    if (obj) this.cache.set(key, obj);
    else this.cache.delete(key);
    const m = this.mutations.get(key);
    if (m && (!obj || !newer(m.raw, obj))) this.mutations.delete(key);
  }

  private trim(raw: KubeObject): T {
    return (this.opts.transform ? this.opts.transform(raw) : raw) as T;
  }

  /** Starts listing and watching in the background. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.stopCtl = new AbortController();
    this.lastActivityMs = this.clock.now().getTime();
    this.armWatchdog();
    this.loop = this.run();
  }

  /** Stops the informer and waits for its loop to end. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopCtl.abort();
    this.watchdogCancel?.();
    this.endWatch({ kind: "closed" });
    await this.loop;
    for (const w of this.syncWaiters.splice(0)) w();
  }

  /** Resolves when synced (or when stopped). */
  waitForSync(): Promise<void> {
    if (this.isSynced || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  private async run(): Promise<void> {
    let needList = true;
    while (!this.stopped) {
      try {
        if (needList) {
          await this.relist();
          needList = false;
        }
        const startedMs = this.clock.now().getTime();
        const eventsBefore = this.stats.events;
        const end = await this.watchOnce();
        if (this.stopped) break;
        if (end.kind === "closed") {
          // The server ending a watch at its timeout shows the connection was alive.
          this.touch();
          // A watch the server closes at once with nothing delivered must not become a hot loop.
          const quick = this.clock.now().getTime() - startedMs < 1000 && this.stats.events === eventsBefore;
          if (quick) await this.clock.sleep(this.retry.when("all"), this.stopCtl.signal);
          continue;
        }
        if (end.kind === "gone" || end.kind === "relist") {
          this.opts.log.info({ source: this.description, why: end.kind }, "relisting");
          needList = true;
          continue;
        }
        throw end.err;
      } catch (err) {
        if (this.stopped) break;
        this.stats.errors++;
        // A 410 on list/watch start means our resourceVersion is compacted away: relist.
        if (isGone(err)) needList = true;
        const delay = this.retry.when("all");
        this.opts.log.warn(
          { source: this.description, err: errorMessage(err), retryInMs: delay },
          "list/watch failed",
        );
        await this.clock.sleep(delay, this.stopCtl.signal);
      }
    }
  }

  /** Paginated LIST, then diff against the cache: adds, updates and missed deletes are delivered. */
  private async relist(): Promise<void> {
    const fresh = new Map<string, T>();
    let rv = "";
    const fetch = (cont: string | undefined) =>
      this.opts.source.list({
        limit: this.opts.pageSize,
        continue: cont,
        labelSelector: this.opts.labelSelector,
      });
    let next: Promise<ListPage> | undefined = fetch(undefined);
    try {
      while (next) {
        const page: ListPage = await next;
        // The next page is asked for before this one is stored, so its round trip overlaps the
        // work (at 10,000 objects, 20 pages: most of a second of the start otherwise).
        next = page.continue ? fetch(page.continue) : undefined;
        if (this.stopped) return;
        for (const o of page.items) {
          // An object unchanged since the cache saw it keeps its cached copy: a relist then holds
          // one copy of the cache, not two (at 10,000 tasks a second copy is tens of MiB).
          const key = keyString(objectKey(o));
          const cached = this.cache.get(key);
          fresh.set(
            key,
            cached && cached.metadata.resourceVersion === o.metadata.resourceVersion ? cached : this.trim(o),
          );
        }
        rv = page.resourceVersion;
      }
    } finally {
      // A page asked for ahead and no longer wanted (stopped, or a transform threw): its outcome
      // is dropped, not left as an unhandled rejection.
      next?.catch(() => undefined);
    }
    this.stats.lists++;
    this.resourceVersion = rv;
    this.touch();
    this.retry.forget("all");
    this.inRelist = true;
    try {
      for (const [key, obj] of fresh) {
        const old = this.cache.get(key);
        this.put(key, obj);
        if (!old) this.deliver("add", obj);
        else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion)
          this.deliver("update", obj, old);
      }
      for (const [key, old] of [...this.cache]) {
        if (fresh.has(key)) continue;
        this.put(key, undefined);
        this.stats.relistDeletes++;
        this.deliver("delete", old);
      }
    } finally {
      this.inRelist = false;
    }
    if (!this.isSynced) {
      this.isSynced = true;
      this.opts.log.info({ source: this.description, objects: this.cache.size }, "informer synced");
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  /** Runs one watch until it ends; resolves with why it ended. */
  private watchOnce(): Promise<WatchEnd> {
    return new Promise<WatchEnd>((resolve) => {
      // stop() may have run between the list and here; it found no watch to end.
      if (this.stopped) return resolve({ kind: "closed" });
      let ended = false;
      const slot: { handle?: WatchHandle; end: (e: WatchEnd) => void } = {
        end: (e) => {
          if (ended) return;
          ended = true;
          slot.handle?.abort();
          if (this.currentWatch === slot) this.currentWatch = undefined;
          resolve(e);
        },
      };
      this.currentWatch = slot;
      const timeout = Math.floor(this.opts.minWatchTimeoutSeconds * (1 + this.opts.random()));
      this.stats.watches++;
      this.opts.source
        .watch(
          {
            resourceVersion: this.resourceVersion,
            labelSelector: this.opts.labelSelector,
            timeoutSeconds: timeout,
            allowWatchBookmarks: true,
          },
          (type, obj) => {
            if (!ended) this.onWatchEvent(type, obj, slot.end);
          },
          (err) => slot.end(err ? { kind: "error", err } : { kind: "closed" }),
        )
        .then(
          (h) => {
            slot.handle = h;
            if (ended) h.abort();
          },
          (err) => slot.end(isGone(err) ? { kind: "gone" } : { kind: "error", err }),
        );
    });
  }

  private onWatchEvent(type: string, raw: unknown, end: (e: WatchEnd) => void): void {
    if (type === "ERROR") {
      const status = raw as { code?: number; message?: string };
      end(
        status.code === 410
          ? { kind: "gone" }
          : { kind: "error", err: new Error(status.message ?? "watch error") },
      );
      return;
    }
    const rv = (raw as KubeObject | undefined)?.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    this.stats.events++;
    this.touch();
    // A healthy event stream resets the failure backoff.
    this.retry.forget("all");
    if (type === "BOOKMARK") return;
    const obj = this.trim(raw as KubeObject);
    const key = keyString(objectKey(obj));
    const old = this.cache.get(key);
    if (type === "DELETED") {
      this.put(key, undefined);
      this.deliver("delete", obj);
    } else if (type === "ADDED" || type === "MODIFIED") {
      this.put(key, obj);
      if (old) this.deliver("update", obj, old);
      else this.deliver("add", obj);
    }
  }

  private deliver(kind: "add" | "update" | "delete", obj: T, old?: T): void {
    this.lastEvent = this.clock.now();
    for (const h of this.handlers) {
      try {
        if (kind === "add") h.onAdd?.(obj);
        else if (kind === "update") h.onUpdate?.(old!, obj);
        else h.onDelete?.(obj);
      } catch (err) {
        this.opts.log.error({ source: this.description, err: errorMessage(err) }, "informer handler failed");
      }
    }
  }

  private touch(): void {
    this.lastActivityMs = this.clock.now().getTime();
  }

  private endWatch(e: WatchEnd): void {
    this.currentWatch?.end(e);
  }

  /** Checks periodically that the watch still shows signs of life; otherwise forces a relist. */
  private armWatchdog(): void {
    const every = Math.max(1000, Math.floor(this.opts.watchdogMs / 4));
    this.watchdogCancel = this.clock.setTimer(() => {
      if (this.stopped) return;
      const idle = this.clock.now().getTime() - this.lastActivityMs;
      this.opts.log.debug({ idle, watching: !!this.currentWatch }, "watchdog tick");
      if (idle >= this.opts.watchdogMs && this.currentWatch) {
        this.opts.log.warn({ source: this.description, idleMs: idle }, "watch silent too long");
        this.touch();
        this.endWatch({ kind: "relist" });
      }
      this.armWatchdog();
    }, every);
  }
}
