import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { Logger } from "pino";
import type { Counter, Gauge, Histogram } from "prom-client";
import { reconcileLogger } from "../log.ts";
import type { BackoffOptions } from "./backoff.ts";
import type { KubeClient } from "./client.ts";
import type { TimerClock } from "./clock.ts";
import { OwnApplies, RecordingClient } from "./echoes.ts";
import { errorMessage, isConflict, RetryableError, TerminalError, WaitError } from "./errors.ts";
import type { EventRecorder } from "./events.ts";
import type { Informer } from "./informer.ts";
import type { RuntimeMetrics } from "./metrics.ts";
import {
  type CacheReader,
  type KubeObject,
  keyString,
  type ObjectKey,
  objectKey,
  parseKey,
  type ReconcileContext,
  type Reconciler,
  type ResourceType,
  splitApiVersion,
} from "./types.ts";
import { WorkQueue } from "./workqueue.ts";

/** How an informer lists, watches and keeps a type (informers with equal options are shared). */
export interface CacheOptions {
  /** Only objects matching it are listed, watched and cached. */
  labelSelector?: string;
  /** List and watch PartialObjectMetadata: metadata only, never spec, data or status. */
  metadataOnly?: boolean;
  /** Trims each object on entry (see InformerOptions.transform); share one function per shape. */
  transform?: (obj: KubeObject) => KubeObject;
  /** Labels the cache indexes, so `list(ns, "label=value")` does not scan the whole cache. */
  indexLabels?: readonly string[];
}

/** A watched type plus how its events map to keys of the controller's primary kind. */
export interface WatchSpec extends CacheOptions {
  type: ResourceType;
  /** Maps a changed object to the primary keys to reconcile. */
  map: (obj: KubeObject) => ObjectKey[];
}

/** What `Manager.addController` takes. */
export interface ControllerSpec<Ctx extends ReconcileContext = ReconcileContext> {
  name: string;
  /** The primary kind: its events enqueue its own key. */
  for: ResourceType;
  /** How the primary kind is cached. */
  forCache?: CacheOptions;
  /**
   * Skip updates of the primary that change only its status (controller-runtime's
   * GenerationChangedPredicate, with labels, annotations, finalizers and deletion still counted):
   * for a controller that writes the status itself and does not act on it, the echo of its own
   * status write is a reconcile that can only find nothing to do.
   */
  ignoreStatusOnlyUpdates?: boolean;
  /**
   * Only events of primary objects it accepts wake the controller (controller-runtime's predicate
   * on For; an update is judged on the new object): for a reconciler that does nothing at all for
   * the others, whose passes would only cost CPU. Events of watched kinds are not filtered.
   */
  forPredicate?: (obj: KubeObject) => boolean;
  /**
   * Skip the watch event that is the echo of an apply made by this controller's own pass for the
   * same key (same resourceVersion as the apply's answer: nothing changed since; see echoes.ts).
   * Only for a reconciler that takes what it applied into account in the same pass (e.g. derives
   * its status from the apply's answer, not from a read made before it), so the pass the echo
   * would bring could only find nothing to do. Creates, deletes and everyone else's writes still
   * wake it.
   */
  skipOwnApplyEchoes?: boolean;
  /** Child kinds: their events enqueue the owner named by their controller ownerReference. */
  owns?: ResourceType[];
  /** Other kinds with a custom mapping to primary keys. */
  watches?: WatchSpec[];
  reconciler: Reconciler<Ctx>;
  /** Concurrent reconciles (different keys only). */
  workers?: number;
  /** Extends the base context with controller-specific fields. */
  makeContext?: (base: ReconcileContext) => Ctx;
  /** Called after a TerminalError, e.g. to log or count; the reconciler records condition and Event. */
  onTerminalError?: (key: ObjectKey, err: TerminalError, ctx: Ctx) => void | Promise<void>;
  backoff?: BackoffOptions;
}

/** Same group (versions may differ) and kind. */
export function sameKind(
  a: { apiVersion: string; kind: string },
  b: { apiVersion: string; kind: string },
): boolean {
  return a.kind === b.kind && splitApiVersion(a.apiVersion).group === splitApiVersion(b.apiVersion).group;
}

/** The key of the controlling owner of `child` if it is of kind `owner`. */
export function ownerKey(child: KubeObject, owner: ResourceType): ObjectKey | undefined {
  const ref = child.metadata.ownerReferences?.find((r) => r.controller && sameKind(r, owner));
  return ref ? { namespace: child.metadata.namespace ?? "", name: ref.name } : undefined;
}

/** Whether `b` differs from `a` in more than its status (and server bookkeeping). */
export function changedBeyondStatus(a: KubeObject, b: KubeObject): boolean {
  const x = a.metadata;
  const y = b.metadata;
  return (
    x.generation !== y.generation ||
    x.deletionTimestamp !== y.deletionTimestamp ||
    !isDeepStrictEqual(x.labels ?? {}, y.labels ?? {}) ||
    !isDeepStrictEqual(x.annotations ?? {}, y.annotations ?? {}) ||
    !isDeepStrictEqual(x.finalizers ?? [], y.finalizers ?? []) ||
    !isDeepStrictEqual(x.ownerReferences ?? [], y.ownerReferences ?? [])
  );
}

/** Reading an informer that has not listed yet would answer "nothing there": refuse instead. */
function assertSynced(inf: Informer): void {
  if (!inf.synced) throw new RetryableError(`cache of ${inf.description} not synced yet`);
}

/** Dependencies a Controller gets from its Manager. */
export interface ControllerDeps {
  client: KubeClient;
  clock: TimerClock;
  log: Logger;
  events: EventRecorder;
  metrics: RuntimeMetrics;
  cache?: CacheReader;
  /** Shared informer of a type (the manager de-duplicates them). */
  informerFor: (type: ResourceType, cache?: CacheOptions) => Informer;
}

/** One controller: informer handlers feed a work queue drained by N workers. */
export class Controller<Ctx extends ReconcileContext = ReconcileContext> {
  readonly name: string;
  readonly queue: WorkQueue;
  private readonly spec: ControllerSpec<Ctx>;
  private readonly deps: ControllerDeps;
  private readonly log: Logger;
  private workers: Promise<void>[] = [];
  private running = false;
  /** The informers this controller reads and is woken by, keyed "apiVersion|kind". */
  private readonly informers = new Map<string, Informer>();
  private starting: Promise<void> | undefined;
  private stopRequested: (() => void) | undefined;
  /** This controller's applies awaiting their watch event (with `skipOwnApplyEchoes`). */
  private readonly ownApplies: OwnApplies | undefined;
  /**
   * Keys whose pass runs now, with the child events for them that arrived meanwhile (with
   * `skipOwnApplyEchoes`): the echo of an apply may come before the apply's answer; at the end
   * of the pass each is an echo or wakes the key again.
   */
  private readonly inFlight = new Map<string, { type: ResourceType; obj: KubeObject }[]>();
  private readonly series: {
    adds: Counter.Internal;
    retries: Counter.Internal;
    active: Gauge.Internal<"controller">;
    time: Histogram.Internal<"controller">;
    success: Counter.Internal;
    requeueAfter: Counter.Internal;
    requeue: Counter.Internal;
    error: Counter.Internal;
    errors: Counter.Internal;
    terminal: Counter.Internal;
  };

  constructor(spec: ControllerSpec<Ctx>, deps: ControllerDeps) {
    this.spec = spec;
    this.deps = deps;
    this.name = spec.name;
    this.log = deps.log;
    const depth = deps.metrics.queueDepth.labels(spec.name, spec.name);
    this.queue = new WorkQueue({ clock: deps.clock, backoff: spec.backoff, onDepth: (d) => depth.set(d) });
    depth.set(0);
    deps.metrics.maxConcurrent.labels(spec.name).set(this.workerCount());
    const m = deps.metrics;
    // This controller's series, looked up once: labels() hashes its values on every call.
    this.series = {
      adds: m.queueAdds.labels(spec.name, spec.name),
      retries: m.queueRetries.labels(spec.name, spec.name),
      active: m.activeWorkers.labels(spec.name),
      time: m.reconcileTime.labels(spec.name),
      success: m.reconcileTotal.labels(spec.name, "success"),
      requeueAfter: m.reconcileTotal.labels(spec.name, "requeue_after"),
      requeue: m.reconcileTotal.labels(spec.name, "requeue"),
      error: m.reconcileTotal.labels(spec.name, "error"),
      errors: m.reconcileErrors.labels(spec.name),
      terminal: m.terminalErrors.labels(spec.name),
    };
    this.series.active.set(0);
    if (spec.skipOwnApplyEchoes)
      this.ownApplies = new OwnApplies(
        (apiVersion, kind) => this.informers.has(`${apiVersion}|${kind}`),
        () => deps.clock.now().getTime(),
      );
    this.wire();
  }

  private workerCount(): number {
    return Math.max(1, this.spec.workers ?? 1);
  }

  /** Subscribes to the informers of the primary, owned and watched kinds. */
  private wire(): void {
    const own = this.ownApplies;
    // A relist may stand for several changes the watch missed: never an echo.
    const echo = (inf: Informer, type: ResourceType, o: KubeObject, keys: ObjectKey[]) =>
      own !== undefined && !inf.relisting && own.isEcho(type, o, keys);
    const enqueue = (k: ObjectKey | undefined) => {
      if (k?.name) this.enqueue(k);
    };
    /** A child event: an echo wakes nothing; during its key's pass it waits for the pass's end. */
    const wake = (inf: Informer, type: ResourceType, o: KubeObject, keys: ObjectKey[]) => {
      if (echo(inf, type, o, keys)) return;
      const pending = own && !inf.relisting && keys.length === 1 && this.inFlight.get(keyString(keys[0]!));
      if (pending) pending.push({ type, obj: o });
      else for (const k of keys) enqueue(k);
    };
    const primary = this.spec.for;
    const primaryInf = this.use(primary, this.spec.forCache);
    const accepts = this.spec.forPredicate ?? (() => true);
    primaryInf.addHandlers({
      onAdd: (o) => {
        if (accepts(o) && !echo(primaryInf, primary, o, [objectKey(o)])) enqueue(objectKey(o));
      },
      // An unchanged resourceVersion is a relist echo, not a change.
      onUpdate: (a, b) => {
        if (a.metadata.resourceVersion === b.metadata.resourceVersion || !accepts(b)) return;
        if (echo(primaryInf, primary, b, [objectKey(b)])) return;
        if (!this.spec.ignoreStatusOnlyUpdates || changedBeyondStatus(a, b)) enqueue(objectKey(b));
      },
      onDelete: (o) => {
        own?.forget(primary, o);
        if (accepts(o)) enqueue(objectKey(o));
      },
    });
    for (const child of this.spec.owns ?? []) {
      const owner = (o: KubeObject) => ownerKey(o, primary);
      const toOwner = (o: KubeObject) => enqueue(owner(o));
      const keys = (o: KubeObject) => {
        const k = owner(o);
        return k ? [k] : [];
      };
      const inf = this.use(child);
      inf.addHandlers({
        onAdd: (o) => wake(inf, child, o, keys(o)),
        onUpdate: (a, b) => {
          if (a.metadata.resourceVersion === b.metadata.resourceVersion) return;
          // An ownerReference moved: both the old and the new owner must look again.
          const ka = keys(a);
          const kb = keys(b);
          wake(
            inf,
            child,
            b,
            ka.length && kb.length && keyString(ka[0]!) === keyString(kb[0]!) ? kb : [...ka, ...kb],
          );
        },
        onDelete: (o) => {
          own?.forget(child, o);
          toOwner(o);
        },
      });
    }
    for (const w of this.spec.watches ?? []) {
      const map = (o: KubeObject) => {
        for (const k of w.map(o)) enqueue(k);
      };
      const inf = this.use(w.type, w);
      inf.addHandlers({
        onAdd: (o) => wake(inf, w.type, o, w.map(o)),
        onUpdate: (a, b) => {
          if (a.metadata.resourceVersion !== b.metadata.resourceVersion) wake(inf, w.type, b, w.map(b));
        },
        onDelete: (o) => {
          own?.forget(w.type, o);
          map(o);
        },
      });
    }
  }

  /** The shared informer of a type, remembered as one this controller reads and waits for. */
  private use(type: ResourceType, cache?: CacheOptions): Informer {
    const inf = this.deps.informerFor(
      type,
      cache && {
        labelSelector: cache.labelSelector,
        metadataOnly: cache.metadataOnly,
        transform: cache.transform,
        indexLabels: cache.indexLabels,
      },
    );
    const k = `${type.apiVersion}|${type.kind}`;
    if (!this.informers.has(k)) this.informers.set(k, inf);
    return inf;
  }

  /**
   * Reads of reconcilers: the kinds this controller watches come from its own informers (which
   * have synced before any worker runs); other kinds from the manager's shared cache.
   */
  private readonly cacheView: CacheReader = {
    get: <T extends KubeObject>(apiVersion: string, kind: string, namespace: string, name: string) => {
      const inf = this.informers.get(`${apiVersion}|${kind}`);
      if (!inf) return this.deps.cache?.get<T>(apiVersion, kind, namespace, name);
      assertSynced(inf);
      return inf.get(namespace ? `${namespace}/${name}` : name) as T | undefined;
    },
    list: <T extends KubeObject>(apiVersion: string, kind: string, namespace?: string, selector?: string) => {
      const inf = this.informers.get(`${apiVersion}|${kind}`);
      if (!inf) return this.deps.cache?.list<T>(apiVersion, kind, namespace, selector) ?? [];
      assertSynced(inf);
      return inf.list(namespace, selector) as T[];
    },
  };

  /** Queues a key (also usable by reconcilers of other controllers via the manager). */
  enqueue(key: ObjectKey): void {
    this.series.adds.inc();
    this.queue.add(keyString(key));
  }

  /**
   * Starts the workers once every informer this controller reads has synced (as
   * controller-runtime and cert-manager's WaitForCacheSync do): an unsynced cache answers "none",
   * and a reconcile that believes it could flip a status or prune what a running Job still needs.
   * Keys queued meanwhile wait in the queue.
   */
  start(): void {
    if (this.running) return;
    this.running = true;
    const stopped = new Promise<boolean>((r) => {
      this.stopRequested = () => r(false);
    });
    const synced = Promise.all([...this.informers.values()].map((i) => i.waitForSync())).then(() => true);
    this.starting = Promise.race([synced, stopped]).then((ok) => {
      if (!ok || !this.running) return;
      for (let i = 0; i < this.workerCount(); i++) this.workers.push(this.worker());
      this.log.info({ workers: this.workerCount() }, "controller started");
    });
  }

  /** Whether the workers run (caches synced). */
  get started(): boolean {
    return this.workers.length > 0;
  }

  /** Stops taking keys and waits for in-flight reconciles to finish. */
  async stop(): Promise<void> {
    this.stopRequested?.();
    await this.starting;
    await this.queue.shutdownWithDrain();
    await Promise.all(this.workers);
    this.running = false;
    this.log.info({}, "controller stopped");
  }

  private async worker(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const active = this.series.active;
      active.inc();
      try {
        await this.reconcileKey(key);
      } finally {
        active.dec();
        this.queue.done(key);
      }
    }
  }

  /** The child events that came during the pass of `key`: any that is not its echo wakes it again. */
  private wakeAfterPass(key: string, objKey: ObjectKey): void {
    const pending = this.inFlight.get(key);
    if (!pending || !this.ownApplies) return;
    this.inFlight.delete(key);
    let again = false;
    // Every one is checked: each consumes its apply's record.
    for (const p of pending) if (!this.ownApplies.isEcho(p.type, p.obj, [objKey])) again = true;
    if (again) this.enqueue(objKey);
  }

  /** Runs one reconcile and turns its outcome into metrics, logs and queue actions. */
  async reconcileKey(key: string): Promise<void> {
    const m = this.series;
    const objKey = parseKey(key);
    if (this.ownApplies) this.inFlight.set(key, []);
    const reconcileId = randomUUID();
    const log = reconcileLogger(this.log, reconcileId, objKey.namespace, objKey.name);
    const base: ReconcileContext = {
      client: this.ownApplies
        ? new RecordingClient(this.deps.client, this.ownApplies, objKey)
        : this.deps.client,
      clock: this.deps.clock,
      log,
      events: this.deps.events,
      reconcileId,
      cache: this.cacheView,
    };
    const ctx = this.spec.makeContext ? this.spec.makeContext(base) : (base as Ctx);
    const end = m.time.startTimer();
    log.debug({}, "reconcile started");
    try {
      const res = await this.spec.reconciler.reconcile(objKey, ctx);
      this.queue.forget(key);
      if (res.requeueAfter && res.requeueAfter > 0) {
        this.queue.addAfter(key, res.requeueAfter);
        m.requeueAfter.inc();
      } else {
        m.success.inc();
      }
      log.debug({ requeueAfterMs: res.requeueAfter }, "reconcile finished");
    } catch (err) {
      if (err instanceof WaitError) {
        this.queue.forget(key);
        this.queue.addAfter(key, err.requeueAfterMs);
        m.requeueAfter.inc();
        log.debug({ requeueAfterMs: err.requeueAfterMs, why: err.message }, "reconcile waiting");
      } else if (err instanceof TerminalError) {
        // No retry: only a new generation (which enqueues the key) can fix a spec problem.
        this.queue.forget(key);
        m.error.inc();
        m.terminal.inc();
        log.warn({ reason: err.reason, err: err.message }, "reconcile failed permanently");
        await this.spec.onTerminalError?.(objKey, err, ctx);
      } else if (isConflict(err)) {
        // Someone else changed the object first; a fresh read on retry settles it.
        this.queue.addRateLimited(key);
        m.retries.inc();
        m.requeue.inc();
        log.debug({ err: errorMessage(err) }, "reconcile conflict, requeued");
      } else {
        const delay = this.queue.addRateLimited(key);
        m.retries.inc();
        m.error.inc();
        m.errors.inc();
        log.error(
          { err: errorMessage(err), retryInMs: delay, retries: this.queue.numRequeues(key) },
          "reconcile failed",
        );
      }
    } finally {
      end();
      this.wakeAfterPass(key, objKey);
    }
  }
}
