import type { Logger } from "pino";
import { controllerLogger } from "../log.ts";
import type { KubeClient } from "./client.ts";
import { RealClock, type TimerClock } from "./clock.ts";
import { type CacheOptions, Controller, type ControllerSpec } from "./controller.ts";
import { errorMessage, RetryableError } from "./errors.ts";
import { type EventRecorder, KubeEventRecorder } from "./events.ts";
import { GatedKubeClient } from "./gated-client.ts";
import { ProbeServer } from "./http.ts";
import { Informer, type InformerOptions } from "./informer.ts";
import { LeaderElector } from "./leader.ts";
import type { ListWatchSource } from "./listwatch.ts";
import { RuntimeMetrics } from "./metrics.ts";
import type { CacheReader, KubeObject, ReconcileContext, ResourceType } from "./types.ts";

function metadataOnlyThen(then?: (o: KubeObject) => KubeObject): (o: KubeObject) => KubeObject {
  return (o) => {
    const meta = { apiVersion: o.apiVersion, kind: o.kind, metadata: o.metadata };
    return then ? then(meta) : meta;
  };
}

/** Leader election settings (durations in ms). */
export interface ManagerLeaderElection {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

/** Everything a Manager is built from; the client and list/watch sources are injected. */
export interface ManagerOptions {
  client: KubeClient;
  /**
   * Builds the list/watch source of a type within the manager's namespace scope; `metadataOnly`
   * asks for PartialObjectMetadata.
   */
  sourceFor: (
    type: ResourceType,
    namespace: string | undefined,
    opts?: { metadataOnly?: boolean },
  ) => ListWatchSource;
  log: Logger;
  clock?: TimerClock;
  /** Namespace to watch; empty or undefined watches all namespaces. */
  namespace?: string;
  http?: { host: string; port: number } | false;
  leaderElection?: ManagerLeaderElection | false;
  metrics?: RuntimeMetrics;
  events?: EventRecorder;
  /** Identity in Events (reportingInstance); defaults to the leader identity or "cronscale". */
  instance?: string;
  /** Longest wait for in-flight reconciles on shutdown. */
  shutdownTimeoutMs?: number;
  informer?: Pick<InformerOptions, "pageSize" | "watchdogMs" | "minWatchTimeoutSeconds" | "backoff">;
}

/** Why a manager stopped. */
export type StopReason = "shutdown" | "lost-leadership";

/**
 * Owns the shared informers, the controllers, leader election, the probe/metrics server and the
 * shutdown sequence. Informers run on every replica (standbys stay warm and ready); controllers
 * run only while this replica leads, and their client refuses writes otherwise.
 */
export class Manager {
  readonly metrics: RuntimeMetrics;
  readonly cache: CacheReader;
  private readonly o: ManagerOptions;
  private readonly clock: TimerClock;
  private readonly log: Logger;
  private readonly informers = new Map<string, Informer>();
  /** Ids of transform functions, so informers with the same trimming are shared. */
  private readonly transformIds = new Map<(o: KubeObject) => KubeObject, number>();
  /** Metric label of each informer ("v1/ConfigMap"). */
  private readonly resourceLabel = new Map<Informer, string>();
  private readonly controllers: Controller<ReconcileContext>[] = [];
  private readonly gated: GatedKubeClient;
  private readonly events: EventRecorder;
  private elector: LeaderElector | undefined;
  private http: ProbeServer | undefined;
  private boundPort: number | undefined;
  private writesAllowed = true;
  private started = false;
  private stopping: Promise<void> | undefined;
  private resolveDone!: (r: StopReason) => void;
  /** Resolves when the manager has stopped, with the reason. */
  readonly done: Promise<StopReason>;

  constructor(opts: ManagerOptions) {
    this.o = opts;
    this.clock = opts.clock ?? new RealClock();
    this.log = opts.log;
    this.metrics = opts.metrics ?? new RuntimeMetrics();
    this.done = new Promise((r) => {
      this.resolveDone = r;
    });
    this.gated = new GatedKubeClient(
      opts.client,
      () => this.writesAllowed && (this.elector?.isLeader() ?? true),
      (obj) => this.written(obj),
    );
    this.events =
      opts.events ??
      new KubeEventRecorder({
        client: this.gated,
        clock: this.clock,
        log: this.log,
        reportingInstance:
          opts.instance ?? (opts.leaderElection ? opts.leaderElection.identity : "cronscale"),
      });
    this.cache = {
      get: <T extends KubeObject>(apiVersion: string, kind: string, namespace: string, name: string) =>
        this.syncedInformer(apiVersion, kind)?.get(namespace ? `${namespace}/${name}` : name) as
          | T
          | undefined,
      list: <T extends KubeObject>(
        apiVersion: string,
        kind: string,
        namespace?: string,
        labelSelector?: string,
      ) => (this.syncedInformer(apiVersion, kind)?.list(namespace, labelSelector) ?? []) as T[],
    };
  }

  /** The client reconcilers get: writes only while leading and not shutting down. */
  get client(): KubeClient {
    return this.gated;
  }

  /** The port the probe server listens on (after start). */
  get port(): number | undefined {
    return this.boundPort;
  }

  /** Whether this replica currently leads (always true without leader election). */
  isLeader(): boolean {
    return this.elector ? this.elector.isLeader() : this.started;
  }

  /** Ready when every informer has synced. */
  ready(): { ok: boolean; detail?: string } {
    if (!this.started) return { ok: false, detail: "not started" };
    const unsynced = [...this.informers.values()].filter((i) => !i.synced).map((i) => i.description);
    return unsynced.length
      ? { ok: false, detail: `informers not synced: ${unsynced.join(", ")}` }
      : { ok: true };
  }

  /** The shared informer of a type (one per type, selector, metadata-only and transform). */
  informerFor(type: ResourceType, cache: string | CacheOptions = {}): Informer {
    const opts: CacheOptions = typeof cache === "string" ? { labelSelector: cache } : cache;
    let tid = "";
    if (opts.transform) {
      if (!this.transformIds.has(opts.transform))
        this.transformIds.set(opts.transform, this.transformIds.size + 1);
      tid = String(this.transformIds.get(opts.transform));
    }
    const key = `${type.apiVersion}|${type.kind}|${opts.labelSelector ?? ""}|${opts.metadataOnly ? "m" : ""}|${tid}`;
    let inf = this.informers.get(key);
    if (inf) {
      for (const l of opts.indexLabels ?? []) inf.addIndex(l);
    } else {
      inf = new Informer({
        source: this.o.sourceFor(type, this.o.namespace || undefined, { metadataOnly: opts.metadataOnly }),
        log: this.log.child({ informer: `${type.apiVersion}/${type.kind}` }),
        clock: this.clock,
        labelSelector: opts.labelSelector,
        // Written objects reach metadata-only caches too (Informer.mutated): keep their metadata only.
        transform: opts.metadataOnly ? metadataOnlyThen(opts.transform) : opts.transform,
        indexLabels: opts.indexLabels,
        ...this.o.informer,
      });
      const resource = `${type.apiVersion}/${type.kind}`;
      this.resourceLabel.set(inf, resource);
      const last = this.metrics.informerLastEvent.labels(resource);
      inf.addHandlers({
        onAdd: () => last.set(Date.now() / 1000),
        onUpdate: () => last.set(Date.now() / 1000),
        onDelete: () => last.set(Date.now() / 1000),
      });
      this.informers.set(key, inf);
      if (this.started) inf.start();
    }
    return inf;
  }

  /**
   * The informer serving shared cache reads of a type: an unfiltered whole-object one if there is
   * one, else a whole-object one, else any. Unsynced, it refuses rather than answer "nothing".
   */
  private syncedInformer(apiVersion: string, kind: string): Informer | undefined {
    const prefix = `${apiVersion}|${kind}|`;
    const all = [...this.informers].filter(([k]) => k.startsWith(prefix));
    const inf =
      all.find(([k]) => k === `${prefix}||`)?.[1] ?? all.find(([k]) => !k.split("|")[3])?.[1] ?? all[0]?.[1];
    if (inf && !inf.synced) throw new RetryableError(`cache of ${inf.description} not synced yet`);
    return inf;
  }

  /** An object the API server returned for our write: every informer of its type records it. */
  private written(obj: KubeObject): void {
    if (!obj?.metadata) return;
    const prefix = `${obj.apiVersion}|${obj.kind}|`;
    for (const [k, inf] of this.informers) if (k.startsWith(prefix)) inf.mutated(obj);
  }

  /** Registers a controller; call before `start`. */
  addController<Ctx extends ReconcileContext>(spec: ControllerSpec<Ctx>): Controller<Ctx> {
    const c = new Controller<Ctx>(spec, {
      client: this.gated,
      clock: this.clock,
      log: controllerLogger(this.log, spec.name),
      events: this.events,
      metrics: this.metrics,
      cache: this.cache,
      informerFor: (t, cache) => this.informerFor(t, cache),
    });
    this.controllers.push(c as unknown as Controller<ReconcileContext>);
    if (this.started && this.isLeader()) c.start();
    return c;
  }

  /** Starts the probe server, the informers and the election (or the controllers at once). */
  async start(): Promise<void> {
    if (this.started) return;
    if (this.o.http) {
      this.http = new ProbeServer({
        ...this.o.http,
        registry: this.metrics.registry,
        ready: () => this.ready(),
      });
      this.boundPort = await this.http.listen();
      this.log.info({ port: this.boundPort }, "probe server listening");
    }
    this.started = true;
    for (const inf of this.informers.values()) inf.start();
    const le = this.o.leaderElection;
    if (le) {
      const gauge = this.metrics.leaderStatus.labels(le.name);
      gauge.set(0);
      this.elector = new LeaderElector({
        ...le,
        client: this.o.client,
        clock: this.clock,
        log: this.log,
        onStartedLeading: () => {
          gauge.set(1);
          this.startControllers();
        },
        onStoppedLeading: () => {
          gauge.set(0);
          this.writesAllowed = false;
          void this.stop("lost-leadership");
        },
      });
      this.elector.start();
    } else {
      this.startControllers();
    }
    this.collectInformerMetrics();
  }

  private startControllers(): void {
    for (const c of this.controllers) c.start();
  }

  private collectInformerMetrics(): void {
    const tick = () => {
      for (const inf of this.informers.values())
        this.metrics.informerSynced
          .labels(this.resourceLabel.get(inf) ?? inf.description)
          .set(inf.synced ? 1 : 0);
      if (this.started && !this.stopping) this.clock.setTimer(tick, 5000);
    };
    tick();
  }

  /**
   * Graceful stop: take no new keys, wait for in-flight reconciles (bounded), refuse further
   * writes, release the lease, stop informers and the probe server.
   */
  stop(reason: StopReason = "shutdown"): Promise<void> {
    this.stopping ??= this.doStop(reason);
    return this.stopping;
  }

  private async doStop(reason: StopReason): Promise<void> {
    this.log.info({ reason }, "manager stopping");
    const drain = Promise.all(this.controllers.map((c) => c.stop()));
    const limit = this.o.shutdownTimeoutMs ?? 30_000;
    let timedOut = false;
    await Promise.race([
      drain,
      new Promise<void>((r) =>
        this.clock.setTimer(() => {
          timedOut = true;
          r();
        }, limit),
      ),
    ]);
    if (timedOut) this.log.warn({ timeoutMs: limit }, "in-flight reconciles did not finish in time");
    // Stragglers past the timeout must not write once the lease may belong to someone else.
    this.writesAllowed = false;
    if (this.elector) {
      try {
        await this.elector.stop({ release: reason === "shutdown" });
      } catch (err) {
        this.log.warn({ err: errorMessage(err) }, "leader election stop failed");
      }
    }
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
    await this.http?.close();
    this.log.info({ reason }, "manager stopped");
    this.resolveDone(reason);
  }

  /**
   * Starts, then runs until SIGTERM/SIGINT (graceful, exit code 0) or lost leadership (exit code 1,
   * like controller-runtime: a process that lost the lease stops and lets its supervisor restart it).
   */
  async runUntilSignal(): Promise<number> {
    const onSignal = (sig: string) => {
      this.log.info({ signal: sig }, "signal received");
      void this.stop("shutdown");
    };
    process.once("SIGTERM", onSignal);
    process.once("SIGINT", onSignal);
    try {
      await this.start();
      const reason = await this.done;
      return reason === "shutdown" ? 0 : 1;
    } finally {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    }
  }
}
