import type { FastifyReply } from "fastify";
import { z } from "zod";
import { GRANTABLE } from "../auth/scopes.ts";
import { sameSecret, sha256 } from "../auth/secrets.ts";
import type { TokenService } from "../auth/tokens.ts";
import type { DB } from "../db/database.ts";
import type { Api } from "../http/context.ts";

// OAuth 2.0 client credentials grant (RFC 6749 §4.4) at POST /oauth/token, client authentication
// by HTTP Basic (client_secret_basic) or in the form body (client_secret_post); the JWKS of the
// access tokens at /.well-known/jwks.json. Errors use the RFC 6749 §5.2 shape, not problem+json:
// OAuth client libraries parse that.

const tokenForm = z.object({
  grant_type: z.string().optional(),
  scope: z.string().max(1000).optional(),
  client_id: z.string().max(200).optional(),
  client_secret: z.string().max(200).optional(),
});

function oauthError(reply: FastifyReply, status: number, error: string, description: string, basic = false) {
  if (status === 401)
    reply.header("www-authenticate", basic ? 'Basic realm="oauth"' : 'Bearer realm="oauth"');
  return reply
    .code(status)
    .header("cache-control", "no-store")
    .send({ error, error_description: description });
}

export async function oauthRoutes(app: Api, deps: { db: DB; tokens: TokenService }): Promise<void> {
  // application/x-www-form-urlencoded (RFC 6749 requires it); URLSearchParams is the parser.
  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  app.post("/oauth/token", async (req, reply) => {
    const form = tokenForm.safeParse(req.body ?? {});
    if (!form.success)
      return oauthError(reply, 400, "invalid_request", form.error.issues[0]?.message ?? "bad form");
    const f = form.data;
    let clientId = f.client_id;
    let secret = f.client_secret;
    const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? "");
    if (basic?.[1]) {
      if (secret !== undefined) {
        return oauthError(reply, 400, "invalid_request", "use one client authentication method, not two");
      }
      const decoded = Buffer.from(basic[1], "base64").toString();
      const i = decoded.indexOf(":");
      if (i < 0) return oauthError(reply, 401, "invalid_client", "malformed Basic credentials", true);
      // RFC 6749 §2.3.1: both parts are form-urlencoded before Basic encoding.
      clientId = decodeURIComponent(decoded.slice(0, i).replace(/\+/g, " "));
      secret = decodeURIComponent(decoded.slice(i + 1).replace(/\+/g, " "));
    }
    if (f.grant_type !== "client_credentials") {
      return oauthError(
        reply,
        400,
        "unsupported_grant_type",
        "only grant_type=client_credentials is supported",
      );
    }
    if (!clientId || !secret)
      return oauthError(reply, 401, "invalid_client", "client authentication required", !!basic);
    const client = await deps.db
      .selectFrom("oauthClients")
      .selectAll()
      .where("id", "=", clientId)
      .where("revokedAt", "is", null)
      .executeTakeFirst();
    if (!client || !sameSecret(sha256(secret), client.secretHash)) {
      return oauthError(reply, 401, "invalid_client", "unknown client or wrong secret", !!basic);
    }
    const asked = f.scope ? f.scope.split(" ").filter(Boolean) : client.scopes;
    const extra = asked.filter((s) => !client.scopes.includes(s));
    if (extra.length)
      return oauthError(reply, 400, "invalid_scope", `not granted to this client: ${extra.join(" ")}`);
    const { token, expiresIn } = await deps.tokens.issue({ clientId: client.id, scopes: asked });
    return reply
      .header("cache-control", "no-store")
      .send({ access_token: token, token_type: "Bearer", expires_in: expiresIn, scope: asked.join(" ") });
  });

  app.get("/.well-known/jwks.json", async (_req, reply) =>
    reply.header("cache-control", "public, max-age=300").send(deps.tokens.publicKeys()),
  );
}

/** Scopes a client may be given. */
export const grantableScopes = z.array(z.enum(GRANTABLE)).min(1).max(GRANTABLE.length);
