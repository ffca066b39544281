import { ApiError } from "../runtime/errors.ts";
import { ASSETS } from "./assets.ts";
import type { Ctx, FastifyInstance } from "./context.ts";
import { SESSION_COOKIE, type Session } from "./sessions.ts";
import { BASE, SIGN_IN_PATH, SIGN_OUT_PATH, TASKS_PATH } from "./views/layout.ts";
import { SignIn } from "./views/signin.ts";

/** The static assets, the entry redirects, the health check, token sign-in and sign-out. */
export function registerSessionRoutes(app: FastifyInstance, ctx: Ctx): void {
  const { opts, sessions } = ctx;
  const oidcName = opts.oidc?.settings.name;

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
      ctx.setSessionCookie(reply, s);
    }
    const query = req.query as Record<string, unknown>;
    const next = ctx.safeNext(query.next);
    const ended = typeof query.ended === "string" ? query.ended : undefined;
    return ctx.page(reply, undefined, "Sign in", SignIn({ session: s, next, oidcName, ended }));
  });

  app.post(SIGN_IN_PATH, async (req, reply) => {
    const body = req.body as Record<string, unknown>;
    const token = typeof body.token === "string" ? body.token.trim() : "";
    const old = req.session as Session;
    const next = ctx.safeNext(body.next);
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
      s.token = token;
      ctx.setSessionCookie(reply, s);
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
}
