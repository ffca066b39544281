import type { FastifyReply, FastifyRequest } from "fastify";
import { sql } from "kysely";
import client from "prom-client";
import { NotifiedCache } from "../cache/notified.ts";
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

/** The channel migration 0007's trigger notifies with a key's hash when it is revoked or changed. */
export const API_KEY_CHANNEL = "commerce_api_key_changed";
const LAST_USED_FLUSH_MS = 60_000;

export class Authenticator {
  private readonly db: DB;
  private readonly tokens: TokenService;
  private readonly operatorKey: string | undefined;
  /** In-process credentials (never sent over the network): the admin interface's API calls. */
  private readonly internal = new Map<string, Principal>();
  /**
   * Issued API keys by hash, per replica: a revocation (or any change of the row) notifies every
   * replica at commit and they drop the key; while not listening every request reads the table.
   */
  private readonly keys: NotifiedCache<{ id: string; scopes: string[] } | undefined>;
  /** Keys used since the last flush of their last-used time. */
  private readonly used = new Set<string>();
  private flusher?: NodeJS.Timeout;

  constructor(
    db: DB,
    tokens: TokenService,
    operatorKey: string | undefined,
    opts: { databaseUrl: string; registry?: client.Registry },
  ) {
    this.db = db;
    this.tokens = tokens;
    this.operatorKey = operatorKey;
    this.keys = new NotifiedCache(opts.databaseUrl, API_KEY_CHANNEL, {
      maxEntries: 10_000,
      requests: opts.registry
        ? new client.Counter({
            name: "commerce_api_key_cache_requests_total",
            help: "API key lookups by cache result (hit, miss, bypass while not listening).",
            labelNames: ["result"] as const,
            registers: [opts.registry],
          })
        : undefined,
    });
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
    const hash = sha256(credential);
    let first = false;
    const key = await this.keys.get(hash, async () => {
      first = true;
      return this.db
        .selectFrom("apiKeys")
        .select(["id", "scopes"])
        .where("hash", "=", hash)
        .where("revokedAt", "is", null)
        .executeTakeFirst();
    });
    if (!key) throw unauthorized("unknown or revoked API key", "invalid_token");
    // Last-used time at minute precision: written at once when a replica first meets the key, then
    // at most once a minute by the flush below (one write for every key used meanwhile).
    if (first) await this.markUsed([key.id]);
    else this.used.add(key.id);
    return { id: `key:${key.id}`, kind: "api-key", scopes: key.scopes };
  }

  /** Drops a key this replica revoked or changed (other replicas drop it on the notification). */
  forgetKey(hash: string): void {
    this.keys.forget(hash);
  }

  private async markUsed(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db
      .updateTable("apiKeys")
      .set({ lastUsedAt: sql<Date>`now()` })
      .where("id", "in", ids)
      .where((eb) =>
        eb.or([eb("lastUsedAt", "is", null), eb("lastUsedAt", "<", sql<Date>`now() - interval '1 minute'`)]),
      )
      .execute();
  }

  /** Listens for key changes and starts the periodic last-used flush. */
  async start(): Promise<void> {
    await this.keys.start();
    this.flusher = setInterval(() => void this.flush().catch(() => {}), LAST_USED_FLUSH_MS).unref();
  }

  /** Writes the last-used time of the keys used since the last flush. */
  async flush(): Promise<void> {
    const ids = [...this.used];
    this.used.clear();
    await this.markUsed(ids);
  }

  async stop(): Promise<void> {
    clearInterval(this.flusher);
    await this.keys.stop();
    await this.flush().catch(() => {});
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
