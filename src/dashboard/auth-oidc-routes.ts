import { ApiError } from "../runtime/errors.ts";
import { OidcError, type OidcSignIn } from "./auth-oidc.ts";
import type { Ctx, FastifyInstance, FastifyRequest } from "./context.ts";
import type { Session } from "./sessions.ts";
import { SIGN_IN_PATH } from "./views/layout.ts";
import { OidcFailed, SignedIn } from "./views/signin.ts";

// The routes of OpenID Connect sign-in and the refresh of a signed-in viewer's ID token.
//
// The session cookie is SameSite=Strict, so the browser does not send it on the provider's
// redirect back to the callback (a cross-site navigation). The unfinished sign-in is therefore
// found through a second cookie, SameSite=Lax (sent on top-level GET navigations), scoped to the
// callback path, holding only a random transaction id; the state, nonce and PKCE verifier stay on
// the server. The callback answers with a page that moves on by itself (a same-site navigation,
// so the new Strict session cookie goes with it) rather than a redirect, which would still count
// as part of the cross-site chain and arrive without the cookie.

export const OIDC_START_PATH = `${SIGN_IN_PATH}/oidc`;
export const OIDC_CALLBACK_PATH = `${SIGN_IN_PATH}/oidc/callback`;
const TX_COOKIE = "cronscale_oidc";
/** Refresh the ID token when less than this is left of it. */
export const DEFAULT_REFRESH_BEFORE_MS = 60_000;

/**
 * Registers the start and callback routes and the refresh hook (after the session hook); nothing
 * when OpenID Connect is not configured.
 */
export function registerOidcRoutes(app: FastifyInstance, ctx: Ctx): void {
  const oidc = ctx.opts.oidc;
  if (!oidc) return;
  registerOidc(app, ctx, oidc);
}

function registerOidc(app: FastifyInstance, ctx: Ctx, oidc: OidcSignIn): void {
  const refreshBefore = ctx.opts.oidcRefreshBeforeMs ?? DEFAULT_REFRESH_BEFORE_MS;
  const txCookie = { path: OIDC_CALLBACK_PATH, httpOnly: true, secure: true, sameSite: "lax" as const };

  // Before any handler: a signed-in OIDC viewer whose ID token is about to expire gets a new one;
  // when the provider refuses (refresh token revoked, account gone) the session ends.
  app.addHook("preHandler", async (req, reply) => {
    const s = req.session;
    if (!s?.user || !s.oidc) return;
    if (s.oidc.expiresAt - ctx.now().getTime() > refreshBefore) return;
    if (await refreshSession(req, s)) return;
    ctx.sessions.destroy(s.id);
    req.session = undefined;
    if (req.method === "GET" && !req.headers["x-partial"]) {
      return reply.redirect(`${SIGN_IN_PATH}?ended=refresh&next=${encodeURIComponent(req.url)}`, 303);
    }
    return reply.code(401).type("text/plain").send("Your sign-in has ended. Sign in again.");
  });

  async function refreshSession(req: FastifyRequest, s: Session): Promise<boolean> {
    // One refresh per session at a time (a page and its event streams arrive together).
    s.refreshing ??= (async () => {
      const current = s.oidc;
      if (!current?.refreshToken) return false;
      try {
        const tokens = await oidc.refresh(current.refreshToken);
        s.oidc = tokens;
        s.api = ctx.opts.viewerApi(tokens.idToken);
        req.log.info({ user: s.user?.username }, "ID token refreshed");
        return true;
      } catch (err) {
        req.log.warn(
          { user: s.user?.username, err: (err as Error).message },
          "ID token refresh failed; signing out",
        );
        return false;
      }
    })().finally(() => {
      s.refreshing = undefined;
    });
    return s.refreshing;
  }

  app.post(OIDC_START_PATH, async (req, reply) => {
    const next = ctx.safeNext((req.body as Record<string, unknown>).next);
    try {
      const { transaction, url } = await oidc.start(next);
      reply.setCookie(TX_COOKIE, transaction, { ...txCookie, maxAge: 600 });
      return reply.redirect(url, 303);
    } catch (err) {
      req.log.warn({ err: (err as Error).message }, "identity provider unreachable");
      const message = `${oidc.settings.name} could not be reached to start the sign-in. Try again later.`;
      return ctx.page(reply, undefined, "Sign-in failed", OidcFailed({ message }), 502);
    }
  });

  app.get(OIDC_CALLBACK_PATH, async (req, reply) => {
    reply.clearCookie(TX_COOKIE, txCookie);
    const here = new URL(oidc.settings.redirectUrl);
    here.search = new URL(req.url, "http://callback").search;
    let tokens: Awaited<ReturnType<OidcSignIn["finish"]>>;
    try {
      tokens = await oidc.finish(req.cookies[TX_COOKIE], here);
    } catch (err) {
      const message = err instanceof OidcError ? err.message : "The sign-in could not be completed.";
      req.log.warn({ err: (err as Error).message }, "OIDC sign-in refused");
      return ctx.page(reply, undefined, "Sign-in failed", OidcFailed({ message }), 400);
    }
    const api = ctx.opts.viewerApi(tokens.idToken);
    try {
      const user = await api.whoAmI();
      const s = ctx.sessions.signIn(req.session, user, api);
      s.oidc = { idToken: tokens.idToken, refreshToken: tokens.refreshToken, expiresAt: tokens.expiresAt };
      ctx.setSessionCookie(reply, s);
      req.log.info({ user: user.username, issuer: oidc.settings.issuerUrl }, "signed in");
      return ctx.page(reply, s, "Signed in", SignedIn({ next: tokens.next }));
    } catch (err) {
      const status = err instanceof ApiError ? err.statusCode : 0;
      req.log.warn({ err: (err as Error).message, status }, "the API server refused the ID token");
      const message =
        status === 401
          ? `The API server does not accept ID tokens of ${oidc.settings.name}: it must trust this issuer with the audience "${oidc.settings.clientId}".`
          : "The API server could not be reached to check the sign-in.";
      return ctx.page(
        reply,
        undefined,
        "Sign-in failed",
        OidcFailed({ message }),
        status === 401 ? 401 : 502,
      );
    }
  });
}
