import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { KubeClient } from "./client.ts";
import { errorMessage } from "./errors.ts";
import type { Clock, KubeObject } from "./types.ts";

/** The object an Event is about (events.k8s.io/v1 `regarding`). */
export interface EventTarget {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

/** Records Kubernetes Events; best effort (never throws), repeats are deduplicated. */
export interface EventRecorder {
  /** A Normal event: `reason` is CamelCase, `action` what was done, `note` human text (no secrets). */
  normal(obj: EventTarget, reason: string, action: string, note: string): Promise<void>;
  /** A Warning event. */
  warning(obj: EventTarget, reason: string, action: string, note: string): Promise<void>;
}

/** One recorded event. */
export interface RecordedEvent {
  type: "Normal" | "Warning";
  reason: string;
  action: string;
  note: string;
  regarding: { apiVersion: string; kind: string; namespace: string; name: string; uid?: string };
}

/** The Event API caps notes at 1 kB. */
const MAX_NOTE = 1024;

function regardingOf(obj: EventTarget): RecordedEvent["regarding"] {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    namespace: obj.metadata.namespace ?? "",
    name: obj.metadata.name ?? "",
    uid: obj.metadata.uid,
  };
}

/** In-memory recorder for unit tests: keeps every call in order. */
export class MemoryEventRecorder implements EventRecorder {
  readonly events: RecordedEvent[] = [];

  async normal(obj: EventTarget, reason: string, action: string, note: string) {
    this.events.push({ type: "Normal", reason, action, note, regarding: regardingOf(obj) });
  }

  async warning(obj: EventTarget, reason: string, action: string, note: string) {
    this.events.push({ type: "Warning", reason, action, note, regarding: regardingOf(obj) });
  }

  /** Events with a given reason. */
  withReason(reason: string): RecordedEvent[] {
    return this.events.filter((e) => e.reason === reason);
  }
}

interface SeriesState {
  name: string;
  namespace: string;
  count: number;
  firstMs: number;
  lastPatchMs: number;
}

/** What to do with one occurrence of an event. */
export type DedupeDecision =
  | { kind: "create" }
  | { kind: "suppress" }
  | { kind: "patch"; name: string; namespace: string; count: number };

/**
 * Decides create / patch-series / suppress for repeated events, like client-go's event series:
 * the same (object, type, reason, action, note) within `windowMs` becomes one Event whose
 * series.count is refreshed at most every `patchEveryMs`.
 */
export class EventDeduper {
  private readonly seen = new Map<string, SeriesState>();
  private readonly windowMs: number;
  private readonly patchEveryMs: number;
  private readonly maxKeys: number;

  constructor(opts: { windowMs?: number; patchEveryMs?: number; maxKeys?: number } = {}) {
    this.windowMs = opts.windowMs ?? 10 * 60_000;
    this.patchEveryMs = opts.patchEveryMs ?? 60_000;
    this.maxKeys = opts.maxKeys ?? 4096;
  }

  /** Classifies an occurrence at time `nowMs`. */
  decide(key: string, nowMs: number): DedupeDecision {
    const s = this.seen.get(key);
    if (!s || nowMs - s.firstMs > this.windowMs) return { kind: "create" };
    s.count++;
    if (nowMs - s.lastPatchMs < this.patchEveryMs) return { kind: "suppress" };
    s.lastPatchMs = nowMs;
    return { kind: "patch", name: s.name, namespace: s.namespace, count: s.count };
  }

  /** Remembers that an Event was created for `key`. */
  created(key: string, name: string, namespace: string, nowMs: number): void {
    if (this.seen.size >= this.maxKeys) {
      // Drop the oldest entry: a bounded memory beats perfect deduplication.
      const first = this.seen.keys().next().value;
      if (first !== undefined) this.seen.delete(first);
    }
    this.seen.set(key, { name, namespace, count: 1, firstMs: nowMs, lastPatchMs: nowMs });
  }
}

/** MicroTime with microsecond precision, as events.k8s.io/v1 eventTime requires. */
function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** Writes events.k8s.io/v1 Events through a KubeClient. */
export class KubeEventRecorder implements EventRecorder {
  private readonly client: KubeClient;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly controller: string;
  private readonly instance: string;
  private readonly dedupe: EventDeduper;

  constructor(opts: {
    client: KubeClient;
    clock: Clock;
    log: Logger;
    reportingController?: string;
    reportingInstance: string;
    deduper?: EventDeduper;
  }) {
    this.client = opts.client;
    this.clock = opts.clock;
    this.log = opts.log;
    this.controller = opts.reportingController ?? "cronscale.io/operator";
    this.instance = opts.reportingInstance.slice(0, 128);
    this.dedupe = opts.deduper ?? new EventDeduper();
  }

  normal(obj: EventTarget, reason: string, action: string, note: string) {
    return this.record("Normal", obj, reason, action, note);
  }

  warning(obj: EventTarget, reason: string, action: string, note: string) {
    return this.record("Warning", obj, reason, action, note);
  }

  private async record(
    type: "Normal" | "Warning",
    obj: EventTarget,
    reason: string,
    action: string,
    note: string,
  ): Promise<void> {
    const regarding = regardingOf(obj);
    const trimmed = note.length > MAX_NOTE ? `${note.slice(0, MAX_NOTE - 3)}...` : note;
    const key = JSON.stringify([
      regarding.uid ?? regarding.name,
      regarding.kind,
      regarding.namespace,
      type,
      reason,
      action,
      trimmed,
    ]);
    const now = this.clock.now();
    const decision = this.dedupe.decide(key, now.getTime());
    // Events live in the object's namespace; cluster-scoped objects put them in "default".
    const namespace = regarding.namespace || "default";
    try {
      if (decision.kind === "suppress") return;
      if (decision.kind === "patch") {
        const live = await this.client.get<KubeObject>(
          "events.k8s.io/v1",
          "Event",
          decision.namespace,
          decision.name,
        );
        if (live) {
          live.series = { count: decision.count, lastObservedTime: microTime(now) };
          await this.client.replace(live);
          return;
        }
      }
      const name = `${regarding.name}.${randomBytes(8).toString("hex")}`;
      await this.client.create({
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { name, namespace },
        eventTime: microTime(now),
        reportingController: this.controller,
        reportingInstance: this.instance,
        action: action.slice(0, 128),
        reason: reason.slice(0, 128),
        note: trimmed,
        type,
        regarding: {
          apiVersion: regarding.apiVersion,
          kind: regarding.kind,
          namespace: regarding.namespace || undefined,
          name: regarding.name,
          uid: regarding.uid,
          resourceVersion: obj.metadata.resourceVersion,
        },
      });
      this.dedupe.created(key, name, namespace, now.getTime());
    } catch (err) {
      // Events are advisory: losing one must never fail a reconcile.
      this.log.warn(
        { err: errorMessage(err), reason, kind: regarding.kind, name: regarding.name },
        "event not recorded",
      );
    }
  }
}
