import cookie from "@fastify/cookie";
import csrf from "@fastify/csrf-protection";
import formbody from "@fastify/formbody";
import type { FastifyError, FastifyInstance } from "fastify";
import type { Authenticator } from "../auth/authenticate.ts";
import type { Config } from "../config.ts";
import type { DB } from "../db/database.ts";
import { allowList } from "./allowlist.ts";
import { AdminApi, ApiError } from "./api.ts";
import { type AdminCtx, pageCtx, requireSignedIn, sendPage } from "./context.ts";
import { adminDb } from "./db.ts";
import { adminLocaleOf } from "./locale.ts";
import { authRoutes } from "./routes-auth.ts";
import { catalogRoutes } from "./routes-catalog.ts";
import { manageRoutes } from "./routes-manage.ts";
import { orderRoutes } from "./routes-orders.ts";
import { SESSION_COOKIE, Sessions } from "./sessions.ts";
import { seedAdmin } from "./users.ts";
import { STYLESHEET } from "./views/assets.ts";
import { ErrorBody, Layout } from "./views/layout.ts";

// The admin interface under /admin (the admin host's `/` leads there): server-rendered pages that
// work without JavaScript. Order of defences on every request: the IP allow-list (403 before
// anything else), the host check, then the session; every POST carries a CSRF token
// (@fastify/csrf-protection, its secret in an HttpOnly SameSite=Strict cookie); the CSP allows no
// script at all and styles from this origin only.

export interface AdminDeps {
  db: DB;
  config: Config;
  auth: Authenticator;
  internalToken: string;
}

const CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

export async function adminRoutes(app: FastifyInstance, deps: AdminDeps): Promise<void> {
  const { config } = deps;
  const db = adminDb(deps.db);
  await seedAdmin(db, config.ADMIN_USERNAME, config.ADMIN_PASSWORD);
  const sessions = new Sessions(db);
  await sessions.sweep();
  const c: AdminCtx = {
    db,
    config,
    sessions,
    api: new AdminApi(app, deps.auth.internalCredential("admin"), deps.internalToken),
    storeName: config.CONFIG_STORE?.name ?? config.PLATFORM_INSTANCE,
    loc: adminLocaleOf(config),
  };
  const allowed = allowList(config.COMMERCE_ADMIN_ALLOWED_CIDRS);
  // The admin belongs to the admin host; on the store and API hosts it does not exist. Other
  // names (the pod address, a port-forward) are served, as for the API.
  const elsewhere = new Set(
    [config.hosts.platform, config.hosts.api].filter((h) => h && h !== config.hosts.admin),
  );

  // Encapsulated here; a parent that already parses forms or cookies (another part of the app
  // registering them globally) is reused rather than registered twice (which fastify refuses).
  if (!app.hasContentTypeParser("application/x-www-form-urlencoded")) await app.register(formbody);
  if (!app.hasReplyDecorator("setCookie")) await app.register(cookie);
  await app.register(csrf, {
    cookieKey: "__Host-admin_csrf",
    cookieOpts: { path: "/", httpOnly: true, secure: true, sameSite: "strict" },
    getToken: (req) => (req.body as Record<string, string> | undefined)?._csrf,
  });

  app.addHook("onRequest", async (req, reply) => {
    if (!allowed(req.ip)) {
      return reply
        .code(403)
        .type("text/plain; charset=utf-8")
        .send("403 Forbidden: this address may not use the admin interface\n");
    }
    if (elsewhere.has(req.hostname.replace(/:\d+$/, "").toLowerCase())) {
      return reply.code(404).type("text/plain; charset=utf-8").send("404 Not Found\n");
    }
  });
  app.addHook("onSend", async (req, reply) => {
    reply.header("content-security-policy", CSP);
    reply.header("x-content-type-options", "nosniff");
    reply.header("x-frame-options", "DENY");
    reply.header("referrer-policy", "no-referrer");
    if (!req.url.startsWith("/admin/assets/")) reply.header("cache-control", "no-store");
  });
  app.addHook("preHandler", async (req) => {
    req.adminSession = await sessions.get(req.cookies[SESSION_COOKIE]);
  });
  // A refused token is answered by the plugin (403, through the error handler below) and `done`
  // is then never called: a callback-style hook, so no promise is left pending.
  app.addHook("preHandler", (req, reply, done) => {
    if (req.method === "POST") app.csrfProtection(req, reply, done);
    else done();
  });
  app.setErrorHandler(async (err: FastifyError, req, reply) => {
    const status = err instanceof ApiError ? err.status : (err.statusCode ?? 500);
    if (status >= 500) req.log.error({ err }, "admin request failed");
    const { t } = c.loc;
    // Messages of the API's problems stay as the API words them (English, like its documentation).
    const message =
      err.code === "FST_CSRF_INVALID_TOKEN" || err.code === "FST_CSRF_MISSING_SECRET"
        ? t.staleForm
        : status >= 500
          ? t.requestFailed
          : err.message;
    const ctx = pageCtx(c, req, reply);
    const body = ErrorBody({ t, status, message });
    return sendPage(reply, Layout({ title: t.error, ctx, children: body }), status);
  });

  app.get("/admin/assets/:name", async (req, reply) => {
    if (req.url !== STYLESHEET.path) return reply.code(404).send("not found\n");
    return reply
      .type("text/css; charset=utf-8")
      .header("cache-control", "public, max-age=31536000, immutable")
      .send(STYLESHEET.body);
  });
  if (config.hosts.admin) {
    // The admin host's root (any port) leads to the admin; `/` of the other hosts is the store's.
    const host = new RegExp(`^${config.hosts.admin.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(:\\d+)?$`, "i");
    app.get("/", { constraints: { host } }, async (_req, reply) => reply.redirect("/admin/", 302));
  }
  app.get("/admin", async (_req, reply) => reply.redirect("/admin/", 302));
  authRoutes(app, c);
  await app.register(async (pages) => {
    pages.addHook("preHandler", requireSignedIn);
    catalogRoutes(pages, c);
    orderRoutes(pages, c);
    manageRoutes(pages, c);
  });
}
