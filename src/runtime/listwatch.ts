import { type KubeTransport, METADATA_ACCEPT, METADATA_LIST_ACCEPT } from "./rest.ts";
import type { KubeObject, ResourceType } from "./types.ts";

/** One page of a LIST. */
export interface ListPage {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
}

/** Parameters of one LIST page request. */
export interface ListParams {
  limit: number;
  continue?: string;
  labelSelector?: string;
}

/** Parameters of one WATCH request. */
export interface WatchParams {
  resourceVersion: string;
  labelSelector?: string;
  timeoutSeconds: number;
  allowWatchBookmarks: boolean;
}

/** A running watch. */
export interface WatchHandle {
  abort(): void;
}

/** Where an informer gets its data: paginated LIST plus WATCH from a resourceVersion. */
export interface ListWatchSource {
  /** A human-readable description for logs ("v1/ConfigMap in ns"). */
  readonly description: string;
  list(params: ListParams): Promise<ListPage>;
  /**
   * Starts a watch. `onEvent` gets raw watch events (ADDED/MODIFIED/DELETED/BOOKMARK/ERROR);
   * `onDone` is called when the watch ends (err undefined for a clean server close), also when it
   * could not be started; callers must tolerate both a rejection and a second `onDone`.
   */
  watch(
    params: WatchParams,
    onEvent: (type: string, obj: unknown) => void,
    onDone: (err?: unknown) => void,
  ): Promise<WatchHandle>;
}

/** ListWatchSource over the real API server, for one type in one namespace (or all). */
export class KubeListWatch implements ListWatchSource {
  readonly description: string;
  private readonly t: KubeTransport;
  private readonly type: ResourceType;
  private readonly namespace: string | undefined;
  private readonly metadataOnly: boolean;

  /**
   * `metadataOnly`: list and watch PartialObjectMetadata (as controller-runtime's metadata-only
   * watches do): existence, labels, annotations and owners, never spec, data or status — for
   * kinds where that is all the controller needs, e.g. Secrets whose values must not sit in memory.
   */
  constructor(transport: KubeTransport, type: ResourceType, namespace?: string, metadataOnly = false) {
    this.t = transport;
    this.type = type;
    this.namespace = namespace || undefined;
    this.metadataOnly = metadataOnly;
    this.description = `${type.apiVersion}/${type.kind}${metadataOnly ? " (metadata)" : ""}${namespace ? ` in ${namespace}` : ""}`;
  }

  async list(params: ListParams): Promise<ListPage> {
    const path = await this.t.path(this.type, this.namespace);
    const res = await this.t.request<{
      items: KubeObject[];
      metadata: { resourceVersion: string; continue?: string };
    }>("GET", path, {
      query: {
        limit: params.limit,
        continue: params.continue,
        labelSelector: params.labelSelector || undefined,
      },
      accept: this.metadataOnly ? METADATA_LIST_ACCEPT : undefined,
    });
    // List items carry no apiVersion/kind; handlers and caches expect complete objects.
    // An empty PartialObjectMetadataList says `items: null`.
    const items = (res.items ?? []).map((o) => ({
      ...o,
      apiVersion: this.type.apiVersion,
      kind: this.type.kind,
    }));
    return {
      items,
      resourceVersion: res.metadata.resourceVersion,
      continue: res.metadata.continue || undefined,
    };
  }

  async watch(
    params: WatchParams,
    onEvent: (type: string, obj: unknown) => void,
    onDone: (err?: unknown) => void,
  ): Promise<WatchHandle> {
    const path = await this.t.path(this.type, this.namespace);
    const controller = await this.t.watch(
      path,
      {
        resourceVersion: params.resourceVersion,
        allowWatchBookmarks: params.allowWatchBookmarks,
        timeoutSeconds: params.timeoutSeconds,
        labelSelector: params.labelSelector || undefined,
      },
      (type, obj) => onEvent(type, this.metadataOnly ? this.retype(obj) : obj),
      (err) => onDone(err ?? undefined),
      // client-node's Watch aborts after 30 s without data; the server sends bookmarks only about
      // once a minute, so allow the whole server-side timeout plus slack before calling it stalled.
      (params.timeoutSeconds + 30) * 1000,
      this.metadataOnly ? METADATA_ACCEPT : undefined,
    );
    return { abort: () => controller.abort() };
  }

  /** PartialObjectMetadata says kind "PartialObjectMetadata": name the watched type instead. */
  private retype(obj: unknown): unknown {
    const o = obj as { kind?: string } | undefined;
    return o?.kind === "PartialObjectMetadata"
      ? { ...o, apiVersion: this.type.apiVersion, kind: this.type.kind }
      : obj;
  }
}
