import { randomBytes, timingSafeEqual } from "node:crypto";
import type { OidcTokens } from "./auth-oidc.ts";
import type { UserInfo, ViewerApi } from "./kube.ts";

// Server-side sessions: the browser holds only a random id (HttpOnly cookie); the viewer's token
// stays in this process and never reaches a page. A session exists before sign-in too, so the
// sign-in form is CSRF-protected like every other form. Kept in memory: a restart signs everyone
// out, and replicas do not share sessions (the chart runs one, or a sticky Service).

/** Name of the cookie that holds the session id. */
export const SESSION_COOKIE = "cronscale_session";

/** One browser's session. */
export interface Session {
  id: string;
  csrf: string;
  createdAt: number;
  lastSeen: number;
  /** Set once signed in; the viewer's identity as the API server reported it. */
  user?: UserInfo;
  /** The viewer's client; holds the token. */
  api?: ViewerApi;
  /** Signed in with a token: that token (the bearer of `api`), sent also to the history endpoint. */
  token?: string;
  /** Signed in through OpenID Connect: the ID token (the bearer of `api`) and its refresh token. */
  oidc?: OidcTokens;
  /** The refresh of `oidc` under way, if any (one at a time). */
  refreshing?: Promise<boolean>;
  /** Made for a viewer of the trusted proxy: the key of that identity (auth-proxy.ts). */
  proxied?: string;
  /** One message shown on the next page (after a redirect). */
  flash?: string;
  /** Answers of access reviews, by question, with their time (a short cache). */
  access?: Map<string, { at: number; value: unknown }>;
}

/**
 * The viewer's client of a signed-in session. Only for routes behind the sign-in hook
 * (server.ts), which answers every request without one before a route runs.
 */
export function viewerApi(s: Session): ViewerApi {
  if (!s.api) throw new Error("viewerApi: the session is not signed in");
  return s.api;
}

/** How long sessions live. */
export interface SessionLimits {
  /** Signed-in session ends after this long without a request. */
  idleMs: number;
  /** Signed-in session ends this long after sign-in, used or not. */
  absoluteMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { idleMs: 30 * 60_000, absoluteMs: 8 * 3600_000 };

const newId = () => randomBytes(32).toString("base64url");

/** In-memory session table with idle and absolute expiry. */
export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  private readonly limits: SessionLimits;
  private readonly now: () => number;

  constructor(limits: SessionLimits = DEFAULT_SESSION_LIMITS, now: () => number = Date.now) {
    this.limits = limits;
    this.now = now;
  }

  /** The live session of `id`, touched; undefined when unknown or expired (then forgotten). */
  get(id: string | undefined): Session | undefined {
    if (!id) return undefined;
    const s = this.sessions.get(id);
    if (!s) return undefined;
    const t = this.now();
    const idle = s.user ? this.limits.idleMs : 15 * 60_000;
    if (t - s.lastSeen > idle || t - s.createdAt > this.limits.absoluteMs) {
      this.sessions.delete(id);
      return undefined;
    }
    s.lastSeen = t;
    return s;
  }

  /** A new anonymous session (sign-in form). */
  create(): Session {
    this.sweep();
    const t = this.now();
    const s: Session = { id: newId(), csrf: newId(), createdAt: t, lastSeen: t };
    this.sessions.set(s.id, s);
    return s;
  }

  /** Signs `old` in: a fresh id and CSRF token (no session fixation), the old id forgotten. */
  signIn(old: Session | undefined, user: UserInfo, api: ViewerApi): Session {
    if (old) this.sessions.delete(old.id);
    const s = this.create();
    s.user = user;
    s.api = api;
    return s;
  }

  /** Forgets a session (sign-out). */
  destroy(id: string): void {
    this.sessions.delete(id);
  }

  /** Number of live sessions (metrics, tests). */
  get size(): number {
    return this.sessions.size;
  }

  private sweep(): void {
    if (this.sessions.size < 1000) return;
    for (const id of [...this.sessions.keys()]) this.get(id);
  }
}

/** Constant-time comparison of a submitted CSRF token with the session's. */
export function csrfMatches(session: Session, submitted: unknown): boolean {
  if (typeof submitted !== "string" || submitted.length === 0) return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(submitted);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Whether a state-changing request comes from our own pages: the browser's Origin must name this
 * host. Browsers send Origin on every POST; a request without one is refused.
 */
export function sameOrigin(origin: string | undefined, host: string | undefined): boolean {
  if (!origin || !host || origin === "null") return false;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}
