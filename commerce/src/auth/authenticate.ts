import type { FastifyReply, FastifyRequest } from "fastify";
import { sql } from "kysely";
import type { DB } from "../db/database.ts";
import { Problem } from "../http/problem.ts";
import { covers } from "./scopes.ts";
import { randomToken, sameSecret, sha256 } from "./secrets.ts";
import type { TokenService } from "./tokens.ts";

// Bearer authentication of the API: the operator's key (env API_KEY, all scopes), issued API keys
// (hashed in the database, scoped, revocable) and JWT access tokens from POST /oauth/token.

export interface Principal {
  /** Stable id of the credential: rate limits and idempotency keys are per credential. */
  id: string;
  kind: "operator-key" | "api-key" | "oauth-client" | "admin";
  scopes: string[];
}

declare module "fastify" {
  interface FastifyRequest {
    principal?: Principal;
  }
  interface FastifyContextConfig {
    /** The scope a route needs (checked after authentication). */
    scope?: string;
  }
}

const unauthorized = (detail: string, error?: string) =>
  new Problem(
    401,
    "unauthorized",
    "Unauthorized",
    detail,
    {},
    {
      "www-authenticate": error
        ? `Bearer realm="api", error="${error}", error_description="${detail.replace(/"/g, "'")}"`
        : 'Bearer realm="api"',
    },
  );

export class Authenticator {
  private readonly db: DB;
  private readonly tokens: TokenService;
  private readonly operatorKey: string | undefined;
  /** In-process credentials (never sent over the network): the admin interface's API calls. */
  private readonly internal = new Map<string, Principal>();

  constructor(db: DB, tokens: TokenService, operatorKey: string | undefined) {
    this.db = db;
    this.tokens = tokens;
    this.operatorKey = operatorKey;
  }

  /**
   * A random credential with every scope that only this process knows, for requests it makes to
   * itself (fastify inject): the admin interface calls the API's handlers as principal `id`.
   */
  internalCredential(id: string): string {
    const credential = `csk_internal_${randomToken(40)}`;
    this.internal.set(sha256(credential), { id, kind: "admin", scopes: ["*"] });
    return credential;
  }

  async principalOf(header: string | undefined): Promise<Principal> {
    const m = header ? /^Bearer +([\x21-\x7e]+)\s*$/i.exec(header) : null;
    if (!m?.[1]) throw unauthorized("an Authorization: Bearer credential is required");
    const credential = m[1];
    const internal = this.internal.get(sha256(credential));
    if (internal) return internal;
    if (credential.split(".").length === 3) {
      try {
        const claims = await this.tokens.verify(credential);
        // A revoked client's tokens stop working at once, not at their expiry.
        const client = await this.db
          .selectFrom("oauthClients")
          .select("id")
          .where("id", "=", claims.clientId)
          .where("revokedAt", "is", null)
          .executeTakeFirst();
        if (!client) throw new Error("client revoked");
        return { id: `client:${claims.clientId}`, kind: "oauth-client", scopes: claims.scopes };
      } catch (err) {
        throw unauthorized(`invalid access token: ${(err as Error).message}`, "invalid_token");
      }
    }
    if (this.operatorKey && sameSecret(credential, this.operatorKey)) {
      return { id: "key:operator", kind: "operator-key", scopes: ["*"] };
    }
    const key = await this.db
      .selectFrom("apiKeys")
      .select(["id", "scopes"])
      .where("hash", "=", sha256(credential))
      .where("revokedAt", "is", null)
      .executeTakeFirst();
    if (!key) throw unauthorized("unknown or revoked API key", "invalid_token");
    // Last-used time at minute precision: one write per key and minute, not per request.
    await this.db
      .updateTable("apiKeys")
      .set({ lastUsedAt: sql<Date>`now()` })
      .where("id", "=", key.id)
      .where((eb) =>
        eb.or([eb("lastUsedAt", "is", null), eb("lastUsedAt", "<", sql<Date>`now() - interval '1 minute'`)]),
      )
      .execute();
    return { id: `key:${key.id}`, kind: "api-key", scopes: key.scopes };
  }

  /** onRequest hook: who is calling. */
  hook = async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    req.principal = await this.principalOf(req.headers.authorization);
  };
}

/** onRequest hook after authentication: the route's scope (403 before any validation). */
export async function requireScope(req: FastifyRequest, _reply: FastifyReply): Promise<void> {
  const needed = req.routeOptions.config.scope;
  if (needed && !covers(req.principal?.scopes ?? [], needed)) {
    throw new Problem(
      403,
      "insufficient-scope",
      "Forbidden",
      `this credential lacks the scope ${needed}`,
      { requiredScope: needed },
      { "www-authenticate": `Bearer realm="api", error="insufficient_scope", scope="${needed}"` },
    );
  }
}
