import type { KubeConfig } from "@kubernetes/client-node";
import { request as undiciRequest } from "undici";
import { ApiError, RetryableError } from "./errors.ts";
import { FenceRefusal, fencedDispatcher } from "./fence.ts";
import { type Credentials, type HeaderMap, KubeAuth, type KubeAuthOptions } from "./kube-auth.ts";
import { type ResourceType, splitApiVersion } from "./types.ts";
import { watchStream } from "./watch-stream.ts";

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
  /** Refresh intervals and clock of the credentials cache (kube-auth.ts). */
  auth?: KubeAuthOptions;
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

const USER_AGENT = "cronscale";

/** One request as it goes out (its credentials are added per attempt). */
interface Outgoing {
  method: Method;
  path: string;
  url: string;
  headers: HeaderMap;
  body: string | undefined;
  signal: AbortSignal | undefined;
  fence: (() => void) | undefined;
  /** Answer with the body's text rather than its JSON (e.g. pods/log). */
  text: boolean;
}

/**
 * Raw JSON access to the API server over one pooled undici dispatcher, with the kubeconfig's
 * credentials prepared once and refreshed only when due (kube-auth.ts).
 *
 * Why not client-node's KubernetesObjectApi: its typed (de)serializer turns timestamps of built-in
 * kinds into Date objects and drops fields it does not know, which breaks "compare desired with
 * live" and would silently lose fields; it cannot address the status subresource; and each of its
 * requests re-runs the kubeconfig's authentication (files read again, a new connection pool) and
 * goes through fetch's web streams. So KubeConfig stays the loader and authenticator, and requests
 * go through undici's request API with plain JSON.
 */
export class KubeTransport {
  private readonly kc: KubeConfig;
  private readonly auth: KubeAuth;
  private readonly server: string;
  private readonly discovery = new Map<string, Promise<Map<string, ResourceInfo>>>();
  private readonly requestTimeoutMs: number;

  private constructor(kc: KubeConfig, opts: TransportOptions) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("No active cluster!");
    this.kc = kc;
    this.server = cluster.server.replace(/\/+$/, "");
    this.auth = new KubeAuth(kc, opts.auth);
    this.requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  }

  /** Creates a transport for the current context of `kc`. */
  static create(kc: KubeConfig, opts: TransportOptions = {}): KubeTransport {
    return new KubeTransport(kc, opts);
  }

  /** The kubeconfig this transport authenticates with. */
  get kubeConfig(): KubeConfig {
    return this.kc;
  }

  /** Sends one request and returns the parsed JSON body; non-2xx answers throw ApiError. */
  request<T = unknown>(method: Method, path: string, opts: RequestOptions = {}): Promise<T> {
    return this.call<T>(method, path, opts, false);
  }

  /** Sends one request and returns its body as text (pods/log); non-2xx answers throw ApiError. */
  text(method: Method, path: string, opts: RequestOptions = {}): Promise<string> {
    return this.call<string>(method, path, opts, true);
  }

  private async call<T>(method: Method, path: string, opts: RequestOptions, text: boolean): Promise<T> {
    let url = this.server + path;
    if (opts.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(opts.query)) if (v !== undefined) q.append(k, String(v));
      if (q.size) url += `?${q}`;
    }
    const headers: HeaderMap = { Accept: opts.accept ?? "application/json", "User-Agent": USER_AGENT };
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers["Content-Type"] = opts.contentType ?? "application/json";
      body = JSON.stringify(opts.body);
    }
    // One timer per request, cleared as soon as the answer is read (AbortSignal.timeout would keep
    // a timer alive for the full period after every request).
    const timeoutMs = opts.timeoutMs ?? this.requestTimeoutMs;
    const timer = timeoutMs > 0 ? new AbortController() : undefined;
    const timeout = timer ? setTimeout(() => timer.abort(), timeoutMs) : undefined;
    const signals = [opts.signal, timer?.signal].filter((x): x is AbortSignal => x !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    try {
      return await this.send<T>({ method, path, url, headers, body, signal, fence: opts.fence, text });
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

  private async send<T>(req: Outgoing): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const creds = this.auth.cached() ?? (await this.auth.get());
      // After the transport's last await: the lease may have lapsed while the credentials were made.
      req.fence?.();
      let status: number;
      let text: string;
      try {
        ({ status, text } = await this.exchange(req, creds));
      } catch (err) {
        if (err instanceof FenceRefusal) throw err.reason;
        // The reason (ECONNREFUSED, a reset, ...) is in the error's code, or in its cause's.
        const cause = (err as { cause?: { message?: string; code?: string } }).cause;
        const code = (err as { code?: unknown }).code;
        const why =
          cause?.code ?? cause?.message ?? (typeof code === "string" ? code : (err as Error).message);
        throw new Error(`${req.method} ${req.path}: ${why}`, { cause: err });
      }
      if (status === 401 && this.auth.refreshable) {
        // Credentials from a file, a plugin or a provider may have rotated: prepare them anew and
        // try once more (a 401 means the request was not processed).
        this.auth.invalidate(creds);
        if (attempt === 1) continue;
      }
      if (req.text && status >= 200 && status <= 299) return text as T;
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
          `${req.method} ${req.path}: ${status} ${st?.message ?? text.slice(0, 200)}`,
          parsed,
        );
      }
      return parsed as T;
    }
  }

  /**
   * One request and its whole answer, through undici's request API on the shared pool, over
   * HTTP/1.1 (the origin's http1-only pool of the same agent; watches, long-lived, share one
   * HTTP/2 connection instead). A fenced request is checked again when undici has its connection
   * (a connection may have to be opened first), and from there it goes out in the same synchronous
   * step, with the body handed over whole: over HTTP/2, Node sends a stream's frames from a later
   * turn of the event loop; a pause there would send, on resuming, a request checked before it.
   * HTTP/1.1 is also the cheaper of the two for short requests: about 25% less client CPU per
   * apply than Node's HTTP/2 (hack/bench/transport.ts), at one connection per request in flight.
   */
  private async exchange(req: Outgoing, creds: Credentials): Promise<{ status: number; text: string }> {
    let refused: unknown;
    const dispatcher = req.fence
      ? fencedDispatcher(creds.dispatcher, req.fence, (err) => {
          refused = err;
        })
      : creds.dispatcher;
    try {
      const res = await undiciRequest(req.url, {
        dispatcher,
        method: req.method,
        headers: { ...creds.headers, ...req.headers },
        body: req.body,
        signal: req.signal,
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
   * Starts a watch (watch-stream.ts) on the shared pool with the cached credentials; resolves to
   * its abort handle once the answer's head is in. `onDone` is called once: the server's clean
   * close (no error), a failure or non-200 answer (an error with `statusCode`; a 401 also drops the
   * cached credentials), no data for `inactivityTimeoutMs` (default 30 s), or `abort()`.
   */
  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: string, obj: unknown) => void,
    onDone: (err: unknown) => void,
    inactivityTimeoutMs = 30_000,
    accept?: string,
  ): Promise<AbortController> {
    const q = new URLSearchParams({ watch: "true" });
    for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
    const creds = this.auth.cached() ?? (await this.auth.get());
    const headers = { ...creds.headers, Accept: accept ?? "application/json", "User-Agent": USER_AGENT };
    const done = (err: unknown) => {
      if ((err as { statusCode?: number } | null)?.statusCode === 401) this.auth.invalidate(creds);
      onDone(err);
    };
    return watchStream(
      `${this.server}${path}?${q}`,
      path,
      headers,
      creds.dispatcher,
      onEvent,
      done,
      inactivityTimeoutMs,
    );
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
