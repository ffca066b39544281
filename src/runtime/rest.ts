import { HttpMethod, type KubeConfig, KubernetesObjectApi, RequestContext } from "@kubernetes/client-node";
import { type Dispatcher, getGlobalDispatcher, request as undiciRequest } from "undici";
import { ApiError, RetryableError } from "./errors.ts";
import { type ResourceType, splitApiVersion } from "./types.ts";

/** Discovery facts about one resource type. */
export interface ResourceInfo {
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
}

/** Options of one raw request. */
export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** Accept header (default application/json), e.g. {@link METADATA_LIST_ACCEPT}. */
  accept?: string;
  signal?: AbortSignal;
  /** Overrides the transport's per-request timeout for this request (0: none). */
  timeoutMs?: number;
  /**
   * Called right before the request is handed to the HTTP library, after every await of the
   * transport (credentials), and again when undici has its connection, right before its first
   * byte is written; throwing refuses to send it. The leader's write fence: a write
   * decided on while leading must not go out after a pause (SIGSTOP, a long GC, a starved VM)
   * that outlasted the lease. It belongs to this one request only (no context is carried to
   * timers or other requests the call starts), so the elector's own lease writes and discovery
   * are never held by it.
   */
  fence?: () => void;
}

/** Options of a transport. */
export interface TransportOptions {
  /**
   * Longest time one non-watch request may take, from sending to the last byte of the answer
   * (default {@link DEFAULT_REQUEST_TIMEOUT_MS}; 0: none). A socket the server accepts but never
   * answers would otherwise hold the caller (a reconcile worker) until the kernel gives up.
   * Watches are long-lived and have their own inactivity limit instead.
   */
  requestTimeoutMs?: number;
}

/** Carries the error a fence threw from inside undici to the caller, unwrapped. */
class FenceRefusal extends Error {
  readonly reason: unknown;
  constructor(reason: unknown) {
    super("refused by the write fence");
    this.reason = reason;
  }
}

/**
 * `dispatcher` with `fence` called when a request is about to be written on its connection
 * (undici's onRequestStart, on a connected socket, before the request line); a throw aborts the
 * request there, before any byte of it leaves, and is passed to `onRefused`.
 */
function fencedDispatcher(
  dispatcher: Dispatcher,
  fence: () => void,
  onRefused: (err: unknown) => void,
): Dispatcher {
  return dispatcher.compose((dispatch) => (opts, handler) => {
    // Inherits every other callback of the caller's handler (fetch's), with `this` kept.
    const fenced: Dispatcher.DispatchHandler = Object.create(handler);
    fenced.onRequestStart = function (controller, context) {
      try {
        fence();
      } catch (err) {
        onRefused(err);
        controller.abort(err as Error);
        return;
      }
      handler.onRequestStart?.call(this, controller, context);
    };
    return dispatch(opts, fenced);
  });
}

/** Default per-request timeout, as kubectl's and client-go's usual `--request-timeout` scale. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** A request that got no complete answer within its timeout; retried like any transient failure. */
export class RequestTimeoutError extends RetryableError {
  readonly timeoutMs: number;
  constructor(message: string, timeoutMs: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RequestTimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/** Asks a LIST for PartialObjectMetadataList: names, labels, annotations, owners; no spec/data. */
export const METADATA_LIST_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
/** Asks a WATCH for PartialObjectMetadata events. */
export const METADATA_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * Raw JSON access to the API server, built on @kubernetes/client-node's own transport.
 *
 * Why not call KubernetesObjectApi's verbs directly: its typed (de)serializer turns timestamps of
 * built-in kinds into Date objects and drops fields it does not know, which breaks "compare desired
 * with live" and would silently lose fields; and it cannot address the status subresource. So we
 * reuse its configuration (server, auth, TLS, user agent) and its HTTP library, and speak plain JSON.
 */
export class KubeTransport extends KubernetesObjectApi {
  private readonly kc: KubeConfig;
  private readonly discovery = new Map<string, Promise<Map<string, ResourceInfo>>>();
  private dispatcher: unknown;
  private readonly requestTimeoutMs: number;

  private constructor(kc: KubeConfig, base: KubernetesObjectApi, opts: TransportOptions) {
    // biome-ignore lint/suspicious/noExplicitAny: reuse the configuration client-node built for this kubeconfig
    super((base as any).configuration);
    this.kc = kc;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  }

  /** Creates a transport for the current context of `kc`. */
  static create(kc: KubeConfig, opts: TransportOptions = {}): KubeTransport {
    return new KubeTransport(kc, KubernetesObjectApi.makeApiClient(kc), opts);
  }

  /** The kubeconfig this transport authenticates with. */
  get kubeConfig(): KubeConfig {
    return this.kc;
  }

  /** Sends one request and returns the parsed JSON body; non-2xx answers throw ApiError. */
  async request<T = unknown>(method: Method, path: string, opts: RequestOptions = {}): Promise<T> {
    const ctx = this.configuration.baseServer.makeRequestContext(path, method as never);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v !== undefined) ctx.setQueryParam(k, String(v));
    }
    ctx.setHeaderParam("Accept", opts.accept ?? "application/json");
    ctx.setHeaderParam("User-Agent", "cronscale");
    if (opts.body !== undefined) {
      ctx.setHeaderParam("Content-Type", opts.contentType ?? "application/json");
      ctx.setBody(JSON.stringify(opts.body));
    }
    // One timer per request, cleared as soon as the answer is read (AbortSignal.timeout would keep
    // a timer alive for the full period after every request).
    const timeoutMs = opts.timeoutMs ?? this.requestTimeoutMs;
    const timer = timeoutMs > 0 ? new AbortController() : undefined;
    const timeout = timer ? setTimeout(() => timer.abort(), timeoutMs) : undefined;
    const signals = [opts.signal, timer?.signal].filter((x): x is AbortSignal => x !== undefined);
    if (signals.length)
      ctx.setSignal((signals.length === 1 ? signals[0] : AbortSignal.any(signals)) as never);
    try {
      return await this.send<T>(method, path, ctx, opts.fence);
    } catch (err) {
      if (timer?.signal.aborted && !opts.signal?.aborted) {
        throw new RequestTimeoutError(`${method} ${path}: no answer within ${timeoutMs} ms`, timeoutMs, {
          cause: err,
        });
      }
      throw err;
    } finally {
      clearTimeout(timeout);
    }
  }

  private async send<T>(method: Method, path: string, ctx: RequestContext, fence?: () => void): Promise<T> {
    await this.kc.applySecurityAuthentication(ctx);
    // client-node builds a fresh connection pool per request; keep the first one so
    // connections (and TLS sessions) are reused across requests.
    this.dispatcher ??= ctx.getDispatcher();
    if (this.dispatcher) ctx.setDispatcher(this.dispatcher as never);
    // After the transport's last await: the lease may have lapsed while the credentials were made.
    fence?.();
    let status: number;
    let text: string;
    try {
      if (fence) ({ status, text } = await this.sendFenced(ctx, fence));
      else {
        const res = await this.configuration.httpApi.send(ctx).toPromise();
        status = res.httpStatusCode;
        text = await res.body.text();
      }
    } catch (err) {
      if (err instanceof FenceRefusal) throw err.reason;
      // undici reports "fetch failed" and hides the reason (ECONNREFUSED, reset, ...) in `cause`.
      const cause = (err as { cause?: { message?: string; code?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (err as { code?: string }).code ?? (err as Error).message;
      throw new Error(`${method} ${path}: ${why}`, { cause: err });
    }
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    if (status < 200 || status > 299) {
      const st = parsed as { reason?: string; message?: string } | undefined;
      throw new ApiError(
        status,
        st?.reason ?? "Unknown",
        `${method} ${path}: ${status} ${st?.message ?? text.slice(0, 200)}`,
        parsed,
      );
    }
    return parsed as T;
  }

  /**
   * Sends a fenced request so that nothing can fall between the last check and the bytes leaving:
   * the fence runs again when undici has the request's connection (a connection may have to be
   * opened first), and from there the request goes out in the same synchronous step.
   * Hence HTTP/1.1 (the same origin's http1-only pool of the shared agent) with the body handed
   * over whole: over HTTP/2, Node sends a stream's frames from a later turn of the event loop,
   * and fetch streams a body over later microtasks; a pause there would send, on resuming, a
   * request checked before it.
   */
  private async sendFenced(
    ctx: RequestContext,
    fence: () => void,
  ): Promise<{ status: number; text: string }> {
    let refused: unknown;
    const dispatcher = fencedDispatcher(
      (this.dispatcher as Dispatcher | undefined) ?? getGlobalDispatcher(),
      fence,
      (err) => {
        refused = err;
      },
    );
    const body = ctx.getBody();
    try {
      const res = await undiciRequest(ctx.getUrl(), {
        dispatcher,
        method: ctx.getHttpMethod() as Dispatcher.HttpMethod,
        headers: ctx.getHeaders(),
        body: typeof body === "string" ? body : undefined,
        signal: ctx.getSignal() as AbortSignal | undefined,
        // The agent keeps a separate http1-only pool for such requests (undici's Agent).
        allowH2: false,
      } as Parameters<typeof undiciRequest>[1]);
      return { status: res.statusCode, text: await res.body.text() };
    } catch (err) {
      if (refused !== undefined) throw new FenceRefusal(refused);
      throw err;
    }
  }

  /** Looks up plural and scope of a type (from the type itself when complete, else by discovery). */
  async resourceInfo(type: ResourceType): Promise<ResourceInfo> {
    const gv = splitApiVersion(type.apiVersion);
    const group = type.group ?? gv.group;
    const version = type.version ?? gv.version;
    if (type.plural && type.namespaced !== undefined) {
      return { group, version, plural: type.plural, namespaced: type.namespaced };
    }
    const found = (await this.discover(type.apiVersion)).get(type.kind);
    if (!found) {
      // A CRD may have been installed after we cached discovery: look once more.
      this.discovery.delete(type.apiVersion);
      const again = (await this.discover(type.apiVersion)).get(type.kind);
      if (!again) throw new ApiError(404, "NotFound", `unknown kind ${type.apiVersion} ${type.kind}`);
      return again;
    }
    return found;
  }

  /** Builds the URL path of a collection, an object, or an object's subresource. */
  async path(type: ResourceType, namespace?: string, name?: string, subresource?: string): Promise<string> {
    const info = await this.resourceInfo(type);
    const parts = [info.group ? `/apis/${info.group}/${info.version}` : `/api/${info.version}`];
    if (info.namespaced && namespace) parts.push("namespaces", encodeURIComponent(namespace));
    parts.push(info.plural);
    if (name) parts.push(encodeURIComponent(name));
    if (name && subresource) parts.push(subresource);
    return parts.join("/");
  }

  /**
   * Starts a watch; resolves to its abort handle once the request is sent. Events are split into
   * lines and parsed straight from the response's bytes, through undici's stream API, with an
   * inactivity limit of our own. (client-node's Watch hard-codes a 30 s limit in a private field,
   * which this transport had to overwrite; its fetch, web-stream and readline layers cost about
   * the same CPU per event as this: JSON.parse dominates — hack/bench/watch-decode.ts.)
   * `onDone` is called once: the server's clean close (no error), a failure or non-200 answer (an
   * error with `statusCode`), no data for `inactivityTimeoutMs` (default 30 s), or `abort()`.
   */
  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: string, obj: unknown) => void,
    onDone: (err: unknown) => void,
    inactivityTimeoutMs = 30_000,
    accept?: string,
  ): Promise<AbortController> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new Error("No currently active cluster");
    const url = new URL(cluster.server + path);
    url.searchParams.set("watch", "true");
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    const ctx = new RequestContext(url.toString(), HttpMethod.GET);
    await this.kc.applySecurityAuthentication(ctx);
    ctx.setHeaderParam("Accept", accept ?? "application/json");
    ctx.setHeaderParam("User-Agent", "cronscale");
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let finished = false;
    const finish = (err: unknown) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      controller.abort();
      onDone(err);
    };
    const arm = () => {
      clearTimeout(timer);
      // A DOMException named TimeoutError, as an aborted fetch reports it.
      timer = setTimeout(
        () =>
          finish(new DOMException(`watch ${path}: no data within ${inactivityTimeoutMs} ms`, "TimeoutError")),
        inactivityTimeoutMs,
      );
      timer.unref();
    };
    const line = (bytes: Buffer) => {
      if (bytes.length === 0 || finished) return;
      let event: { type?: string; object?: unknown };
      try {
        event = JSON.parse(bytes.toString("utf8"));
      } catch {
        return; // not an event (as client-node's Watch, skip it)
      }
      if (typeof event?.type === "string") onEvent(event.type, event.object);
    };
    try {
      arm();
      const res = await undiciRequest(url, {
        method: "GET",
        headers: ctx.getHeaders(),
        dispatcher: ctx.getDispatcher() as Dispatcher | undefined,
        signal: controller.signal,
      });
      if (res.statusCode !== 200) {
        const text = await res.body.text().catch(() => "");
        const err = new Error(`watch ${path}: ${res.statusCode} ${text.slice(0, 200)}`);
        (err as Error & { statusCode: number }).statusCode = res.statusCode;
        throw err;
      }
      arm();
      // Bytes of a line not ended yet (a line may span chunks, a character too).
      let pending: Buffer[] = [];
      res.body.on("data", (chunk: Buffer) => {
        arm();
        let start = 0;
        for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
          const part = chunk.subarray(start, nl);
          line(pending.length ? Buffer.concat([...pending, part]) : part);
          pending = [];
          start = nl + 1;
          if (finished) return;
        }
        if (start < chunk.length) pending.push(chunk.subarray(start));
      });
      res.body.on("end", () => {
        if (pending.length) line(Buffer.concat(pending));
        finish(null);
      });
      res.body.on("error", finish);
      res.body.on("close", () => finish(null));
    } catch (err) {
      finish(err);
    }
    return controller;
  }

  private discover(apiVersion: string): Promise<Map<string, ResourceInfo>> {
    let p = this.discovery.get(apiVersion);
    if (!p) {
      const { group, version } = splitApiVersion(apiVersion);
      const url = group ? `/apis/${group}/${version}` : `/api/${version}`;
      p = this.request<{ resources: { name: string; kind: string; namespaced: boolean }[] }>("GET", url).then(
        (list) => {
          const m = new Map<string, ResourceInfo>();
          for (const r of list.resources) {
            if (r.name.includes("/")) continue; // subresources
            m.set(r.kind, { group, version, plural: r.name, namespaced: r.namespaced });
          }
          return m;
        },
      );
      p.catch(() => this.discovery.delete(apiVersion));
      this.discovery.set(apiVersion, p);
    }
    return p;
  }
}
