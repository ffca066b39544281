import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../runtime/errors.ts";
import { identityKey, type ProxyAuthSettings, type ProxyIdentity, takeProxyIdentity } from "./auth-proxy.ts";
import type { ViewerApi } from "./kube.ts";
import type { Session, SessionStore } from "./sessions.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The viewer the trusted proxy named on this request (only with proxyAuth). */
    proxyIdentity?: ProxyIdentity;
  }
}

/**
 * The authenticating proxy's part of every request (auth-proxy.ts): its identity headers are
 * read (only when its certificate is there) and removed before anything else runs; `session`
 * then gives the proxy's viewer their session, made on the first page they open.
 */
export function registerProxyAuth(
  app: FastifyInstance,
  proxy: { settings: ProxyAuthSettings; viewerApi: (id: ProxyIdentity) => ViewerApi },
  sessions: SessionStore,
  setCookie: (reply: FastifyReply, s: Session) => unknown,
): { session(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> } {
  app.addHook("onRequest", async (req) => {
    const { identity, refused } = takeProxyIdentity(req.raw, proxy.settings);
    if (refused)
      req.log.warn({ path: req.url, refused }, "identity headers ignored: not from the authenticating proxy");
    req.proxyIdentity = identity;
  });

  // The API server's SelfSubjectReview, made with impersonation, names the viewer (and refuses
  // when the dashboard may not impersonate).
  async function signIn(req: FastifyRequest, reply: FastifyReply, who: ProxyIdentity, key: string) {
    const api = proxy.viewerApi(who);
    try {
      const user = await api.whoAmI();
      const s = sessions.signIn(undefined, user, api);
      s.proxied = key;
      req.session = s;
      setCookie(reply, s);
      req.log.info(
        { user: user.username, groups: user.groups },
        "signed in through the authenticating proxy",
      );
      return undefined;
    } catch (err) {
      const status = err instanceof ApiError ? err.statusCode : 0;
      req.log.warn({ err, user: who.username }, "acting for the proxy's viewer refused");
      const message =
        status === 403
          ? `The API server does not let the dashboard act for ${who.username} (impersonate).`
          : "The API server could not be reached.";
      return reply
        .code(status === 403 ? 403 : 502)
        .type("text/plain")
        .send(message);
    }
  }

  return {
    async session(req, reply) {
      const who = req.proxyIdentity;
      const key = who && identityKey(who);
      // A proxy viewer's session is good only for the same identity through the proxy; the
      // proxy's viewer never uses a session made for someone else.
      if (req.session && (req.session.proxied || key) && req.session.proxied !== key) req.session = undefined;
      // The first page a proxy viewer asks for signs them in; a post still needs the session's
      // CSRF token, so a post without that session is refused after this.
      if (who && key && !req.session && req.method !== "POST") return signIn(req, reply, who, key);
      return undefined;
    },
  };
}
