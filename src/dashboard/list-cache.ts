import type { Logger } from "pino";
import { ApiError } from "../runtime/errors.ts";
import { Informer } from "../runtime/informer.ts";
import type { ListWatchSource } from "../runtime/listwatch.ts";
import type { KubeObject } from "../runtime/types.ts";

// A list shared by every viewer: one informer (LIST once, then WATCH) per namespace the dashboard
// serves, made with the dashboard's own ServiceAccount, so opening a list page, typing a search or
// keeping a live page open never LISTs or WATCHes per viewer. It is only a read-side copy: the
// routes show a namespace's cached objects to a viewer only after a SelfSubjectAccessReview says
// that viewer may `list` the kind there (shared-read.ts), and every change still goes to the API
// server as the viewer. A namespace the dashboard itself may not list (its LIST answered 403) is
// not cached: those viewers' lists are read with their own token.

/** Where the list of one namespace comes from, as the dashboard (not a viewer). */
export type SourceFor = (namespace: string) => ListWatchSource;

/** Objects of one kind per namespace, shared by all viewers. */
export interface ListCache<T extends KubeObject> {
  /** The namespace's objects sorted by name; undefined when the namespace is not cached. */
  list(namespace: string): Promise<readonly T[] | undefined>;
  /**
   * Calls `onChange` after each add, update or delete in the namespace (synchronously, from the
   * informer: callers should only schedule work) until the returned function is called.
   */
  subscribe(namespace: string, onChange: () => void): () => void;
  stop(): Promise<void>;
}

interface Entry<T extends KubeObject> {
  informer?: Informer<T>;
  ready: Promise<boolean>;
  /** The namespace's objects sorted by name, rebuilt on the first read after a change. */
  sorted?: T[];
  listeners: Set<() => void>;
}

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * The fields no page shows, dropped on entry: `managedFields` and kubectl's copy of the last
 * applied object (each as large as the object itself).
 */
export function trimForDisplay(o: KubeObject): KubeObject {
  const { managedFields: _m, ...metadata } = o.metadata as KubeObject["metadata"] & {
    managedFields?: unknown;
  };
  if (metadata.annotations?.[LAST_APPLIED] !== undefined) {
    const { [LAST_APPLIED]: _a, ...rest } = metadata.annotations;
    metadata.annotations = rest;
  }
  return { ...o, metadata };
}

export class SharedListCache<T extends KubeObject> implements ListCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly sourceFor: SourceFor;
  private readonly log: Logger;
  /** What is listed, for logs ("tasks", "platforms"). */
  private readonly what: string;

  constructor(opts: { sourceFor: SourceFor; log: Logger; what: string }) {
    this.sourceFor = opts.sourceFor;
    this.log = opts.log;
    this.what = opts.what;
  }

  async list(namespace: string): Promise<readonly T[] | undefined> {
    const e = this.entry(namespace);
    if (!(await e.ready) || !e.informer) return undefined;
    e.sorted ??= e.informer
      .list(namespace)
      .sort((a, b) => ((a.metadata.name ?? "") < (b.metadata.name ?? "") ? -1 : 1));
    return e.sorted;
  }

  subscribe(namespace: string, onChange: () => void): () => void {
    const e = this.entry(namespace);
    e.listeners.add(onChange);
    return () => e.listeners.delete(onChange);
  }

  private entry(namespace: string): Entry<T> {
    let e = this.entries.get(namespace);
    if (!e) {
      e = this.open(namespace);
      this.entries.set(namespace, e);
    }
    return e;
  }

  private open(namespace: string): Entry<T> {
    const source = this.sourceFor(namespace);
    const e: Entry<T> = { ready: Promise.resolve(false), listeners: new Set() };
    e.ready = (async () => {
      // One small LIST first: a 403 means the dashboard was given no read access here (the chart
      // grants it in the namespaces it serves), and the viewers' own lists are used instead.
      try {
        await source.list({ limit: 1 });
      } catch (err) {
        if (err instanceof ApiError && (err.statusCode === 403 || err.statusCode === 401)) {
          this.log.info(
            { namespace, kind: this.what, status: err.statusCode },
            "list not cached: the dashboard may not list this kind here",
          );
          return false;
        }
        // Anything else (API server unreachable): forget the entry so a later request tries
        // again; its listeners move to that next entry.
        if (this.entries.get(namespace) === e) this.entries.delete(namespace);
        throw err;
      }
      const informer = new Informer<T>({ source, log: this.log, transform: trimForDisplay });
      const changed = () => {
        e.sorted = undefined;
        for (const l of e.listeners) l();
      };
      informer.addHandlers({ onAdd: changed, onUpdate: changed, onDelete: changed });
      informer.start();
      await informer.waitForSync();
      e.informer = informer;
      this.log.info({ namespace, kind: this.what, objects: informer.list(namespace).length }, "list cached");
      return true;
    })();
    e.ready.catch(() => {});
    return e;
  }

  async stop(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map((e) => e.informer?.stop()));
  }
}
