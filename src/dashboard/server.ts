import fastifyCookie from "@fastify/cookie";
import fastifyFormbody from "@fastify/formbody";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from "fastify";
import type { Logger } from "pino";
import { ApiError } from "../runtime/errors.ts";
import { ASSETS } from "./assets.ts";
import type { OidcSignIn } from "./auth-oidc.ts";
import { registerOidcRoutes } from "./auth-oidc-routes.ts";
import type { ProxyAuthSettings, ProxyIdentity } from "./auth-proxy.ts";
import { registerProxyAuth } from "./auth-proxy-routes.ts";
import type { ViewerApi } from "./kube.ts";
import { registerBackupRoutes } from "./routes-backups.ts";
import { registerPlatformRoutes } from "./routes-platforms.ts";
import { registerTaskRoutes } from "./routes-tasks.ts";
import { csrfMatches, type Session, SessionStore, sameOrigin } from "./sessions.ts";
import type { PlatformLists } from "./shared-read.ts";
import type { TaskCache } from "./task-cache.ts";
import { renderPage, type VNode } from "./views/html.ts";
import { BASE, ErrorBody, Layout, SIGN_IN_PATH, SIGN_OUT_PATH, TASKS_PATH } from "./views/layout.ts";
import { SignIn } from "./views/signin.ts";

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
  /** How often the platform page's usage and performance refresh, in seconds (default 10). */
  usageRefreshSeconds?: number;
}

export const SESSION_COOKIE = "cronscale_session";

// Everything comes from this origin; no inline script or style, no framing, forms post here only.
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

declare module "fastify" {
  interface FastifyRequest {
    session?: Session;
  }
}

/** Request context every route handler gets. */
export interface Ctx {
  opts: DashboardOptions;
  sessions: SessionStore;
  now: () => Date;
  page(
    reply: FastifyReply,
    session: Session | undefined,
    title: string,
    body: VNode,
    status?: number,
  ): FastifyReply;
  fail(reply: FastifyReply, session: Session, err: unknown): FastifyReply;
}

/** Builds the dashboard's HTTP server (not listening yet). */
export async function createDashboard(opts: DashboardOptions): Promise<FastifyInstance> {
  const sessions = opts.sessions ?? new SessionStore();
  const now = opts.now ?? (() => new Date());
  if (opts.proxyAuth && !opts.tls)
    throw new Error("proxyAuth needs tls: the proxy authenticates with a client certificate");
  // With proxyAuth the listener asks every client for a certificate of the proxy's CA but does
  // not require one: viewers who come directly sign in like anywhere else.
  const https = opts.tls && {
    ...opts.tls,
    ...(opts.proxyAuth && {
      ca: opts.proxyAuth.settings.clientCaPem,
      requestCert: true,
      rejectUnauthorized: false,
    }),
  };
  const app = Fastify({
    loggerInstance: opts.log as unknown as FastifyBaseLogger,
    trustProxy: false,
    bodyLimit: 256 * 1024,
    ...(https && { https }),
  }) as unknown as FastifyInstance;
  await app.register(fastifyCookie);
  await app.register(fastifyFormbody);

  const setCookie = (reply: FastifyReply, s: Session) =>
    reply.setCookie(SESSION_COOKIE, s.id, {
      path: BASE,
      httpOnly: true,
      secure: true,
      sameSite: "strict",
    });

  app.addHook("onSend", async (req, reply, payload) => {
    // The OIDC sign-in form's POST is answered by a redirect to the provider, which form-action governs too.
    const formTo = opts.oidc?.formActionOrigins().join(" ");
    reply.header(
      "Content-Security-Policy",
      formTo ? CSP.replace("form-action 'self'", `form-action 'self' ${formTo}`) : CSP,
    );
    reply.header("X-Content-Type-Options", "nosniff");
    // Not no-referrer: under it browsers send `Origin: null` on form posts, defeating the check.
    reply.header("Referrer-Policy", "same-origin");
    reply.header("X-Frame-Options", "DENY");
    reply.header("Cross-Origin-Opener-Policy", "same-origin");
    if (!ASSETS[req.url]) reply.header("Cache-Control", "no-store");
    return payload;
  });

  // The authenticating proxy: its identity headers are taken off every request first (onRequest).
  const proxy = opts.proxyAuth && registerProxyAuth(app, opts.proxyAuth, sessions, setCookie);

  // Who is asking: the session of the cookie, if it is live. Pages other than sign-in and the
  // assets need a signed-in session; every POST needs our Origin and the session's CSRF token.
  app.addHook("preHandler", async (req, reply) => {
    const path = req.url.split("?")[0] ?? "";
    if (ASSETS[path] || !path.startsWith(BASE)) return;
    req.session = sessions.get(req.cookies[SESSION_COOKIE]);
    if (proxy) {
      const refused = await proxy.session(req, reply);
      if (refused) return refused;
    }
    if (req.method === "POST") {
      const body = (req.body ?? {}) as Record<string, unknown>;
      if (
        !sameOrigin(req.headers.origin, req.headers.host) ||
        !req.session ||
        !csrfMatches(req.session, body._csrf)
      ) {
        req.log.warn(
          { path, user: req.session?.user?.username },
          "state change refused: origin or CSRF token",
        );
        return reply
          .code(403)
          .type("text/plain")
          .send("Refused: missing or wrong CSRF token or Origin. Reload the page and try again.");
      }
    }
    if (path === SIGN_IN_PATH || path.startsWith(`${SIGN_IN_PATH}/`)) return;
    if (!req.session?.user) {
      if (req.method === "GET" && !req.headers["x-partial"]) {
        return reply.redirect(`${SIGN_IN_PATH}?next=${encodeURIComponent(req.url)}`, 303);
      }
      return reply.code(401).type("text/plain").send("Sign in first.");
    }
  });

  const ctx: Ctx = {
    opts,
    sessions,
    now,
    page(reply, session, title, body, status = 200) {
      return reply
        .code(status)
        .type("text/html; charset=utf-8")
        .send(renderPage(Layout({ title, session, children: body })));
    },
    fail(reply, session, err) {
      if (err instanceof ApiError) {
        if (err.statusCode === 401) {
          sessions.destroy(session.id);
          return reply.redirect(SIGN_IN_PATH, 303);
        }
        const status = [403, 404, 409, 422].includes(err.statusCode) ? err.statusCode : 502;
        const message = (err.body as { message?: string } | undefined)?.message ?? err.message;
        return ctx.page(reply, session, "Error", ErrorBody({ status, message }), status);
      }
      reply.log.error({ err }, "dashboard request failed");
      return ctx.page(
        reply,
        session,
        "Error",
        ErrorBody({ status: 500, message: "Internal error; see the dashboard's log." }),
        500,
      );
    },
  };

  const safeNext = (v: unknown) =>
    typeof v === "string" && v.startsWith(`${BASE}/`) && !v.startsWith("//") ? v : TASKS_PATH;
  const oidcName = opts.oidc?.settings.name;
  if (opts.oidc) {
    registerOidcRoutes(app, ctx, {
      oidc: opts.oidc,
      setSessionCookie: setCookie,
      safeNext,
      refreshBeforeMs: opts.oidcRefreshBeforeMs,
    });
  }

  app.get("/dashboard/assets/*", async (req, reply) => {
    const a = ASSETS[req.url];
    if (!a) return reply.code(404).send();
    return reply.type(a.type).header("Cache-Control", "public, max-age=31536000, immutable").send(a.body);
  });
  app.get("/", async (_req, reply) => reply.redirect(TASKS_PATH, 303));
  app.get(BASE, async (_req, reply) => reply.redirect(TASKS_PATH, 303));
  app.get("/healthz", async () => "ok");

  app.get(SIGN_IN_PATH, async (req, reply) => {
    let s = req.session;
    if (s?.user) return reply.redirect(TASKS_PATH, 303);
    if (!s) {
      s = sessions.create();
      setCookie(reply, s);
    }
    const query = req.query as Record<string, unknown>;
    const next = safeNext(query.next);
    const ended = typeof query.ended === "string" ? query.ended : undefined;
    return ctx.page(reply, undefined, "Sign in", SignIn({ session: s, next, oidcName, ended }));
  });

  app.post(SIGN_IN_PATH, async (req, reply) => {
    const body = req.body as Record<string, unknown>;
    const token = typeof body.token === "string" ? body.token.trim() : "";
    const old = req.session as Session;
    const next = safeNext(body.next);
    if (!token)
      return ctx.page(
        reply,
        undefined,
        "Sign in",
        SignIn({ session: old, next, oidcName, error: "Enter a token." }),
        400,
      );
    const api = opts.viewerApi(token);
    try {
      const user = await api.whoAmI();
      const s = sessions.signIn(old, user, api);
      setCookie(reply, s);
      req.log.info({ user: user.username }, "signed in");
      return reply.redirect(next, 303);
    } catch (err) {
      const status = err instanceof ApiError ? err.statusCode : 0;
      if (status !== 401 && status !== 403) req.log.warn({ err }, "sign-in check failed");
      const error =
        status === 401 || status === 403
          ? "The API server did not accept this token."
          : "The API server could not be reached to check the token.";
      return ctx.page(reply, undefined, "Sign in", SignIn({ session: old, next, oidcName, error }), 401);
    }
  });

  app.post(SIGN_OUT_PATH, async (req, reply) => {
    const s = req.session;
    if (s) sessions.destroy(s.id);
    reply.clearCookie(SESSION_COOKIE, { path: BASE, httpOnly: true, secure: true, sameSite: "strict" });
    // Signed in through the OpenID provider: its session is ended too (RP-initiated logout), so
    // the next sign-in asks for the provider's login again instead of passing straight through.
    const idToken = s?.oidc?.idToken;
    const endAt = idToken && (await opts.oidc?.endSessionUrl(idToken));
    req.log.info({ user: s?.user?.username, atProvider: Boolean(endAt) }, "signed out");
    return reply.redirect(endAt || SIGN_IN_PATH, 303);
  });

  registerTaskRoutes(app, ctx);
  registerPlatformRoutes(app, ctx);
  registerBackupRoutes(app, ctx);
  return app;
}
