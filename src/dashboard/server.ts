import fastifyCookie from "@fastify/cookie";
import fastifyFormbody from "@fastify/formbody";
import Fastify, { type FastifyBaseLogger } from "fastify";
import { ApiError } from "../runtime/errors.ts";
import { ASSETS } from "./assets.ts";
import { registerProxyAuth } from "./auth-proxy-routes.ts";
import type { Ctx, DashboardOptions, FastifyInstance, FastifyReply } from "./context.ts";
import { MetricsHistory } from "./platform-metrics.ts";
import { ROUTES } from "./routes.ts";
import { csrfMatches, SESSION_COOKIE, type Session, SessionStore, sameOrigin } from "./sessions.ts";
import { renderPage } from "./views/html.ts";
import { BASE, ErrorBody, Layout, SIGN_IN_PATH, TASKS_PATH } from "./views/layout.ts";

// The fastify app: security headers, sessions, CSRF and Origin checks, error pages; then every
// route of routes.ts with the context built here.

export type { DashboardOptions } from "./context.ts";

// Everything comes from this origin; no inline script or style, no framing, forms post here only.
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

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

  const setCookie = (reply: FastifyReply, s: Session) => {
    reply.setCookie(SESSION_COOKIE, s.id, {
      path: BASE,
      httpOnly: true,
      secure: true,
      sameSite: "strict",
    });
  };

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
    metrics: new MetricsHistory(),
    setSessionCookie: setCookie,
    safeNext: (v) =>
      typeof v === "string" && v.startsWith(`${BASE}/`) && !v.startsWith("//") ? v : TASKS_PATH,
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

  for (const register of ROUTES) register(app, ctx);
  return app;
}
