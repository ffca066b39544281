import { randomUUID } from "node:crypto";
import {
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JSONWebKeySet,
  type JWK,
  jwtVerify,
  SignJWT,
} from "jose";
import { sql } from "kysely";
import type { DB } from "../db/database.ts";

// JWT access tokens (RFC 9068 shape: typ at+jwt, iss, sub, aud, client_id, scope, jti, iat, exp),
// signed with ES256. The key pair lives in the database so every replica signs with the same key
// and verifies the others' tokens; the public half is published at /.well-known/jwks.json.

export const ALG = "ES256";
/** Access token lifetime (RFC 9068 tokens are short-lived; at most one hour here). */
export const TOKEN_TTL_SECONDS = 3600;

export interface AccessClaims {
  clientId: string;
  scopes: string[];
}

export class TokenService {
  private signing?: { kid: string; key: Awaited<ReturnType<typeof importJWK>> };
  private jwks: JSONWebKeySet = { keys: [] };
  private verifySet = createLocalJWKSet(this.jwks);
  private lastReload = 0;
  private readonly db: DB;
  readonly issuer: string;

  constructor(db: DB, issuer: string) {
    this.db = db;
    this.issuer = issuer;
  }

  /** Loads the keys, creating the first one if there is none (once across replicas). */
  async init(): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      // One creator even when replicas start together: the lock is held until commit.
      await sql`select pg_advisory_xact_lock(hashtext('commerce.signing_keys'))`.execute(trx);
      const any = await trx.selectFrom("signingKeys").select("kid").limit(1).executeTakeFirst();
      if (any) return;
      const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true });
      const kid = randomUUID();
      const pub = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: "sig" };
      const priv = { ...(await exportJWK(privateKey)), kid, alg: ALG };
      await trx
        .insertInto("signingKeys")
        .values({ kid, alg: ALG, privateJwk: priv, publicJwk: pub })
        .execute();
    });
    await this.reload();
  }

  private async reload(): Promise<void> {
    const rows = await this.db.selectFrom("signingKeys").selectAll().orderBy("createdAt", "desc").execute();
    const newest = rows[0];
    if (!newest) throw new Error("no signing key");
    this.signing = { kid: newest.kid, key: await importJWK(newest.privateJwk as JWK, ALG) };
    this.jwks = { keys: rows.map((r) => r.publicJwk as JWK) };
    this.verifySet = createLocalJWKSet(this.jwks);
    this.lastReload = Date.now();
  }

  publicKeys(): JSONWebKeySet {
    return this.jwks;
  }

  async issue(claims: AccessClaims): Promise<{ token: string; expiresIn: number }> {
    if (!this.signing) throw new Error("TokenService not initialised");
    const token = await new SignJWT({ client_id: claims.clientId, scope: claims.scopes.join(" ") })
      .setProtectedHeader({ alg: ALG, kid: this.signing.kid, typ: "at+jwt" })
      .setIssuer(this.issuer)
      .setAudience(this.issuer)
      .setSubject(claims.clientId)
      .setIssuedAt()
      .setExpirationTime(`${TOKEN_TTL_SECONDS}s`)
      .setJti(randomUUID())
      .sign(this.signing.key);
    return { token, expiresIn: TOKEN_TTL_SECONDS };
  }

  /** Verifies a token of this issuer; throws (with a reason) on anything else. */
  async verify(token: string): Promise<AccessClaims> {
    const opts = { issuer: this.issuer, audience: this.issuer, typ: "at+jwt", algorithms: [ALG] };
    let result: Awaited<ReturnType<typeof jwtVerify>>;
    try {
      result = await jwtVerify(token, this.verifySet, opts);
    } catch (err) {
      // A key added by another replica since our last load: reload once (at most every 10 s).
      if (
        (err as { code?: string }).code !== "ERR_JWKS_NO_MATCHING_KEY" ||
        Date.now() - this.lastReload < 10_000
      ) {
        throw err;
      }
      await this.reload();
      result = await jwtVerify(token, this.verifySet, opts);
    }
    const p = result.payload;
    if (typeof p.client_id !== "string" || typeof p.scope !== "string")
      throw new Error("missing client_id or scope");
    return { clientId: p.client_id, scopes: p.scope.split(" ").filter(Boolean) };
  }
}
