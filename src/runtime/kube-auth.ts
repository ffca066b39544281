import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { RequestOptions } from "node:https";
import type { KubeConfig, User } from "@kubernetes/client-node";
import { HttpMethod, RequestContext } from "@kubernetes/client-node/dist/gen/http/http.js";
import { Agent, type Dispatcher, getGlobalDispatcher } from "undici";

// What every request to the API server needs, prepared once and refreshed only when due, as
// client-go's transport does: the connection pool (TLS from the kubeconfig) and the auth headers.
// KubeConfig stays the loader and the authenticator: its applyToHTTPSOptions gives the TLS
// material and the headers (token, basic auth, exec plugins, auth providers, and whatever a
// subclass adds, such as the dashboard's impersonation). Calling it per request, as client-node's
// applySecurityAuthentication does, re-reads the CA and key files and builds a new connection pool
// each time; here it runs at the first request and again only when the credentials may have
// changed:
// - a static token, basic auth, client certificates: never (until a 401 says otherwise);
// - a token file (an in-cluster ServiceAccount token rotates): re-read at most once a minute,
//   client-go's cached file token source;
// - an exec plugin or an auth provider (OIDC, cloud): until the expiry they state, else a short
//   TTL; client-node caches the exec credential itself until its expirationTimestamp.
// A 401 drops what is cached (client-node's exec credential too) so the next request prepares anew.

/** Request headers; a repeated header is an array (one header line per value). */
export type HeaderMap = Record<string, string | string[]>;

/** The pool and the headers one request is sent with. */
export interface Credentials {
  readonly dispatcher: Dispatcher;
  readonly headers: HeaderMap;
}

/** Options of {@link KubeAuth}; the defaults are client-go's. */
export interface KubeAuthOptions {
  /** Clock of the refresh deadlines (tests). */
  now?: () => number;
  /** How often a token file is read again (default 60 s). */
  tokenFileRefreshMs?: number;
  /** How long exec / auth-provider credentials that state no expiry are kept (default 10 s). */
  dynamicTtlMs?: number;
}

const TOKEN_FILE_REFRESH_MS = 60_000;
const DYNAMIC_TTL_MS = 10_000;

interface ExecCredential {
  status?: { expirationTimestamp?: string };
}

type Refresh = "static" | "tokenFile" | "dynamic";

function refreshOf(user: User | null): Refresh {
  if (!user) return "static";
  if (user.authProvider?.config?.tokenFile) return "tokenFile";
  if (user.exec || user.authProvider) return "dynamic";
  return "static";
}

/**
 * Connection pools shared by every transport with the same TLS identity (the dashboard makes one
 * per viewer), counted by the KubeAuths using them: when an exec plugin hands over a new client
 * certificate, the old identity's pool is closed once no KubeAuth uses it (its requests and
 * watches under way finish first), so rotations do not pile up pools.
 */
const agents = new Map<string, { agent: Agent; users: number }>();

function acquireAgent(key: string, connect: Record<string, unknown>): Agent {
  let entry = agents.get(key);
  if (!entry) {
    // keepAliveInitialDelay 30 s: TCP keep-alives before a cloud load balancer's idle timeout (as client-node and client-go).
    entry = {
      agent: new Agent({ connect: { ...connect, keepAlive: true, keepAliveInitialDelay: 30_000 } }),
      users: 0,
    };
    agents.set(key, entry);
  }
  entry.users++;
  return entry.agent;
}

function releaseAgent(key: string): void {
  const entry = agents.get(key);
  if (!entry || --entry.users > 0) return;
  agents.delete(key);
  entry.agent.close().catch(() => undefined);
}

/** How many shared connection pools are open (for tests). */
export function sharedAgentCount(): number {
  return agents.size;
}

function text(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return v.map((x) => (Buffer.isBuffer(x) ? x.toString() : String(x))).join("\n");
  return Buffer.isBuffer(v) ? v.toString() : String(v);
}

/** The expiry (ms) a JWT bearer token states, if it is one. */
function jwtExpiry(authorization: string | undefined): number | undefined {
  const parts = authorization?.replace(/^Bearer /, "").split(".");
  if (parts?.length !== 3) return undefined;
  try {
    const exp = JSON.parse(Buffer.from(parts[1] ?? "", "base64url").toString()).exp;
    return typeof exp === "number" ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** client-node's exec authenticator of `kc` (its credential cache), when it is the one in use. */
function execAuthenticator(kc: KubeConfig): { tokenCache: Record<string, unknown> } | undefined {
  // Not part of client-node's typed surface: read loosely, and do without it if its shape changes.
  const list = (kc as unknown as { authenticators?: unknown[] }).authenticators ?? [];
  return list.find(
    (a): a is { tokenCache: Record<string, unknown> } =>
      typeof a === "object" && a !== null && typeof (a as { tokenCache?: unknown }).tokenCache === "object",
  );
}

/** The credentials of the current context of a kubeconfig, cached as described above. */
export class KubeAuth {
  private readonly kc: KubeConfig;
  private readonly now: () => number;
  private readonly tokenFileRefreshMs: number;
  private readonly dynamicTtlMs: number;
  private readonly refresh: Refresh;
  private current: Credentials | undefined;
  private expiresAt = 0;
  private pending: Promise<Credentials> | undefined;
  /** The proxy dispatcher and the client identity (certificate and key) it was made with. */
  private proxy: { identity: string; dispatcher: Dispatcher } | undefined;
  /** The shared pool this KubeAuth uses (no proxy): its key and pool. */
  private pool: { key: string; agent: Agent } | undefined;

  constructor(kc: KubeConfig, opts: KubeAuthOptions = {}) {
    this.kc = kc;
    this.now = opts.now ?? Date.now;
    this.tokenFileRefreshMs = opts.tokenFileRefreshMs ?? TOKEN_FILE_REFRESH_MS;
    this.dynamicTtlMs = opts.dynamicTtlMs ?? DYNAMIC_TTL_MS;
    this.refresh = refreshOf(kc.getCurrentUser());
  }

  /** Whether a 401 may be cured by preparing the credentials again (they come from a file, a plugin or a provider). */
  get refreshable(): boolean {
    return this.refresh !== "static";
  }

  /** The credentials while they are fresh, without waiting; undefined: call {@link get}. */
  cached(): Credentials | undefined {
    return this.current && this.now() < this.expiresAt ? this.current : undefined;
  }

  /** The credentials, prepared (once for concurrent callers) when none are fresh. */
  get(): Promise<Credentials> {
    const fresh = this.cached();
    if (fresh) return Promise.resolve(fresh);
    if (!this.pending) {
      this.pending = this.prepare().finally(() => {
        this.pending = undefined;
      });
    }
    return this.pending;
  }

  /** After a 401 answered to `used`: drop them (unless already replaced), so the next request prepares anew. */
  invalidate(used: Credentials): void {
    if (this.current !== used) return;
    this.current = undefined;
    const user = this.kc.getCurrentUser();
    const exec = this.refresh === "dynamic" && user ? execAuthenticator(this.kc) : undefined;
    if (exec && user) exec.tokenCache[user.name] = null;
  }

  private async prepare(): Promise<Credentials> {
    const startedAt = this.now();
    const opts: RequestOptions = {};
    await this.kc.applyToHTTPSOptions(opts);
    const headers: HeaderMap = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      if (v !== undefined) headers[k] = Array.isArray(v) ? v.map(String) : String(v);
    }
    if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString("base64")}`;
    const user = this.kc.getCurrentUser();
    const tokenFile = user?.authProvider?.config?.tokenFile as string | undefined;
    if (this.refresh === "tokenFile" && tokenFile) {
      // Read here, not through client-node's file authenticator, whose own minute-long cache
      // could hand back the previous token right at our refresh.
      headers.Authorization = `Bearer ${(await readFile(tokenFile, "utf8")).trim()}`;
    }
    const creds = { dispatcher: await this.dispatcherFor(opts), headers };
    this.current = creds;
    this.expiresAt = this.expiry(startedAt, user, text(headers.Authorization));
    return creds;
  }

  private expiry(startedAt: number, user: User | null, authorization: string | undefined): number {
    if (this.refresh === "static") return Number.POSITIVE_INFINITY;
    if (this.refresh === "tokenFile") return startedAt + this.tokenFileRefreshMs;
    const stated: (number | undefined)[] = [jwtExpiry(authorization)];
    const cfg = user?.authProvider?.config ?? {};
    if (cfg.expiry) stated.push(Date.parse(String(cfg.expiry)));
    if (cfg["expires-on"]) stated.push(Number(cfg["expires-on"]) * 1000);
    const cred = user
      ? (execAuthenticator(this.kc)?.tokenCache[user.name] as ExecCredential | null | undefined)
      : undefined;
    if (cred?.status?.expirationTimestamp) stated.push(Date.parse(cred.status.expirationTimestamp));
    const known = stated.filter((t): t is number => t !== undefined && Number.isFinite(t));
    if (!known.length) return startedAt + this.dynamicTtlMs;
    // Deadlines stated in wall-clock time, kept on our clock's scale; one already past (a clock
    // skew) is retried after a second rather than before every request.
    return startedAt + Math.max(Math.min(...known) - Date.now(), 1_000);
  }

  private async dispatcherFor(opts: RequestOptions): Promise<Dispatcher> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new Error("No currently active cluster");
    if (cluster.proxyUrl) {
      // HTTP and SOCKS proxies: client-node's own dispatcher, made again only when the client
      // certificate changes (an exec plugin hands over a new one after a 401 or its expiry).
      const identity = createHash("sha256")
        .update(JSON.stringify([text(opts.cert), text(opts.key)]))
        .digest("hex");
      if (this.proxy?.identity !== identity) {
        const ctx = new RequestContext(cluster.server, HttpMethod.GET);
        await this.kc.applySecurityAuthentication(ctx);
        const old = this.proxy?.dispatcher;
        this.proxy = {
          identity,
          dispatcher: (ctx.getDispatcher() as Dispatcher | undefined) ?? getGlobalDispatcher(),
        };
        // Requests and watches under way finish on the old connections; none start there.
        if (old && old !== getGlobalDispatcher()) old.close().catch(() => undefined);
      }
      return this.proxy.dispatcher;
    }
    const connect: Record<string, unknown> = {};
    for (const k of ["ca", "cert", "key", "pfx", "passphrase", "servername", "rejectUnauthorized"] as const) {
      const v = opts[k];
      if (v !== undefined) connect[k] = v;
    }
    const key = createHash("sha256").update(JSON.stringify(connect)).digest("hex");
    if (this.pool?.key !== key) {
      const old = this.pool;
      this.pool = { key, agent: acquireAgent(key, connect) };
      if (old) releaseAgent(old.key);
    }
    return this.pool.agent;
  }
}
