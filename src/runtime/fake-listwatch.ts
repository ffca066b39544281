import { ApiError } from "./errors.ts";
import type { FakeKubeClient } from "./fake-client.ts";
import type { ListPage, ListParams, ListWatchSource, WatchHandle, WatchParams } from "./listwatch.ts";
import { parseSelector } from "./selector.ts";
import type { KubeObject } from "./types.ts";

interface HistoryEntry {
  rv: number;
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: KubeObject;
}

interface ActiveWatch {
  params: WatchParams;
  onEvent: (type: string, obj: unknown) => void;
  onDone: (err?: unknown) => void;
  closed: boolean;
}

/**
 * A ListWatchSource over a FakeKubeClient for unit tests, with knobs to break things the way a
 * real server does: drop every watch (connection lost), compact history (watch → 410), fail the
 * next requests, and count the calls made.
 */
export class FakeListWatch implements ListWatchSource {
  readonly description: string;
  readonly calls = { list: 0, watch: 0, pages: [] as (string | undefined)[] };
  private readonly client: FakeKubeClient;
  private readonly apiVersion: string;
  private readonly kind: string;
  private readonly namespace: string | undefined;
  private readonly history: HistoryEntry[] = [];
  private readonly watches = new Set<ActiveWatch>();
  private compactedRv = 0;
  private disconnected = false;
  /** Errors thrown by the next list/watch calls, in order. */
  readonly failNext: Error[] = [];

  private readonly metadataOnly: boolean;

  /** `metadataOnly`: serve objects as PartialObjectMetadata would (metadata only), like the real source. */
  constructor(
    client: FakeKubeClient,
    apiVersion: string,
    kind: string,
    namespace?: string,
    metadataOnly = false,
  ) {
    this.client = client;
    this.metadataOnly = metadataOnly;
    this.apiVersion = apiVersion;
    this.kind = kind;
    this.namespace = namespace || undefined;
    this.description = `fake ${apiVersion}/${kind}`;
    client.subscribe((e) => {
      if (e.object.apiVersion !== apiVersion || e.object.kind !== kind) return;
      if (this.namespace && e.object.metadata.namespace !== this.namespace) return;
      const rv = Number(e.object.metadata.resourceVersion ?? client.currentResourceVersion());
      const entry = { rv, type: e.type, object: e.object };
      this.history.push(entry);
      // While "disconnected" events are stored but not delivered, as on a dead connection.
      if (!this.disconnected) for (const w of this.watches) this.send(w, entry);
    });
  }

  /** Open watches. */
  activeWatches(): number {
    return this.watches.size;
  }

  /** Ends every watch with an error, and keeps new ones from receiving events until `reconnect`. */
  breakWatches(err: Error = new Error("connection reset")): void {
    this.disconnected = true;
    for (const w of [...this.watches]) this.finish(w, err);
  }

  /** Lets watches receive events again. */
  reconnect(): void {
    this.disconnected = false;
  }

  /** Ends every watch cleanly, as at the server-side timeout. */
  closeWatches(): void {
    for (const w of [...this.watches]) this.finish(w, undefined);
  }

  /** Forgets history: watches from an older resourceVersion get 410 Gone. */
  compact(): void {
    this.compactedRv = Number(this.client.currentResourceVersion());
  }

  /** Sends a BOOKMARK to every open watch. */
  bookmark(): void {
    const rv = this.client.currentResourceVersion();
    for (const w of this.watches)
      w.onEvent("BOOKMARK", {
        kind: this.kind,
        apiVersion: this.apiVersion,
        metadata: { resourceVersion: rv },
      });
  }

  async list(params: ListParams): Promise<ListPage> {
    this.calls.list++;
    this.calls.pages.push(params.continue);
    const err = this.failNext.shift();
    if (err) throw err;
    const match = parseSelector(params.labelSelector);
    // all(), not list(): an informer's LIST is not a read a reconciler made (FakeKubeClient.reads).
    const all = this.client
      .all(this.apiVersion, this.kind)
      .filter((o) => !this.namespace || o.metadata.namespace === this.namespace)
      .filter((o) => match(o.metadata.labels))
      .sort((a, b) =>
        `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(
          `${b.metadata.namespace}/${b.metadata.name}`,
        ),
      );
    const start = params.continue ? Number(params.continue) : 0;
    const items = all.slice(start, start + params.limit);
    const next = start + params.limit < all.length ? String(start + params.limit) : undefined;
    return {
      items: items.map((o) => this.shape(o)),
      resourceVersion: this.client.currentResourceVersion(),
      continue: next,
    };
  }

  async watch(
    params: WatchParams,
    onEvent: (type: string, obj: unknown) => void,
    onDone: (err?: unknown) => void,
  ): Promise<WatchHandle> {
    this.calls.watch++;
    const err = this.failNext.shift();
    if (err) throw err;
    const w: ActiveWatch = { params, onEvent, onDone, closed: false };
    const from = Number(params.resourceVersion || 0);
    if (from < this.compactedRv) {
      onEvent("ERROR", { kind: "Status", code: 410, reason: "Expired", message: "too old resource version" });
      onDone(undefined);
      return { abort: () => {} };
    }
    this.watches.add(w);
    if (!this.disconnected) for (const e of this.history.filter((h) => h.rv > from)) this.send(w, e);
    return { abort: () => this.finish(w, undefined, false) };
  }

  private send(w: ActiveWatch, e: HistoryEntry): void {
    if (w.closed) return;
    if (!parseSelector(w.params.labelSelector)(e.object.metadata.labels)) return;
    w.onEvent(e.type, this.shape(structuredClone(e.object)));
  }

  private shape(o: KubeObject): KubeObject {
    return this.metadataOnly ? { apiVersion: o.apiVersion, kind: o.kind, metadata: o.metadata } : o;
  }

  private finish(w: ActiveWatch, err: unknown, notify = true): void {
    if (w.closed) return;
    w.closed = true;
    this.watches.delete(w);
    if (notify) w.onDone(err);
  }
}

/** A 410 error as returned by a LIST/WATCH with a compacted resourceVersion. */
export function goneError(): ApiError {
  return new ApiError(410, "Expired", "too old resource version");
}
