import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import type { PlatformPrices } from "../api/platform-prices.ts";
import type { ArchiveReader } from "./archive.ts";
import type { OidcSignIn } from "./auth-oidc.ts";
import type { ProxyAuthSettings, ProxyIdentity } from "./auth-proxy.ts";
import type { ViewerApi } from "./kube.ts";
import type { MetricsHistory } from "./platform-metrics.ts";
import type { Session, SessionStore } from "./sessions.ts";
import type { PlatformLists } from "./shared-read.ts";
import type { TaskCache } from "./task-cache.ts";
import type { VNode } from "./views/html.ts";

// What every route module gets: the dashboard's options and the request context. Route modules
// import their types from here and are listed in routes.ts; server.ts builds the context and
// registers that list, so no route module imports the file that registers it.

export type { FastifyInstance, FastifyReply, FastifyRequest };

declare module "fastify" {
  interface FastifyRequest {
    /** The session of the request's cookie, when live (server.ts's preHandler). */
    session?: Session;
  }
}

/** How the dashboard is put together (all I/O injected, so tests can run it in-process). */
export interface DashboardOptions {
  log: Logger;
  /** A client acting as the holder of `token` (the viewer). */
  viewerApi: (token: string) => ViewerApi;
  /** Namespaces offered when the viewer may not list namespaces (filtered by access reviews). */
  namespaces?: string[];
  sessions?: SessionStore;
  now?: () => Date;
  /**
   * The task lists shared by all viewers (task-cache.ts); shown to a viewer only after an access
   * review allows that viewer to list tasks in the namespace. Without it each list is the viewer's own LIST.
   */
  taskCache?: TaskCache;
  /**
   * The platforms, backups and restores lists shared by all viewers (shared-read.ts), shown to a
   * viewer only after an access review allows it; their live pages follow these lists. Without
   * it each list is the viewer's own LIST and each live page the viewer's own WATCH.
   */
  platformLists?: PlatformLists;
  /** OpenID Connect sign-in (auth-oidc.ts); without it only token sign-in is offered. */
  oidc?: OidcSignIn;
  /** Refresh an OIDC viewer's ID token when less than this is left of it (default 60 s). */
  oidcRefreshBeforeMs?: number;
  /** Serve HTTPS with this key and certificate chain (PEM). */
  tls?: { key: string | Buffer; cert: string | Buffer };
  /**
   * Trusted authenticating proxy (auth-proxy.ts; needs `tls`): viewers it names in headers over
   * a connection with its client certificate, and a client acting for such a viewer (the
   * dashboard's credentials with Impersonate-* headers).
   */
  proxyAuth?: { settings: ProxyAuthSettings; viewerApi: (id: ProxyIdentity) => ViewerApi };
  /**
   * The execution archive, read with the viewer's token through the operator's history endpoint
   * (archive.ts); without it a task's page shows only the runs kept as TaskExecutions.
   */
  archive?: ArchiveReader;
  /** The installation's platform prices (the deploy page's estimate); default the project's list prices. */
  prices?: PlatformPrices;
  /** How often the platform page's usage and performance refresh, in seconds (default 10). */
  usageRefreshSeconds?: number;
}

/** Request context every route handler gets. */
export interface Ctx {
  opts: DashboardOptions;
  sessions: SessionStore;
  now: () => Date;
  /** The platforms' last reads of their pods' counters (rates are differences between two reads). */
  metrics: MetricsHistory;
  page(
    reply: FastifyReply,
    session: Session | undefined,
    title: string,
    body: VNode,
    status?: number,
  ): FastifyReply;
  fail(reply: FastifyReply, session: Session, err: unknown): FastifyReply;
  /** Sets the session cookie (HttpOnly, Secure, SameSite=Strict, under /dashboard). */
  setSessionCookie(reply: FastifyReply, s: Session): void;
  /** A `next` parameter when it is a dashboard path, else the tasks page. */
  safeNext(v: unknown): string;
}

/** One module's routes, registered on the app with the context (the list is routes.ts). */
export type RouteModule = (app: FastifyInstance, ctx: Ctx) => void;
