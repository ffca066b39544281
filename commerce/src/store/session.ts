import { createHash, randomBytes } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { DB } from "../db/database.ts";

// Store sessions: a random token in an HttpOnly, Secure, SameSite=Lax cookie; the row in
// PostgreSQL is keyed by the token's SHA-256, so every replica sees the same session and cart and
// a copy of the table opens no session. Signing in rotates the token (no session fixation) and
// keeps the cart; signing out deletes the row.

export const COOKIE = "store_sid";
const TTL_DAYS = 30;

export interface StoreSession {
  id: string;
  customerId: string | null;
  lastOrderId: string | null;
}

const hash = (token: string) => createHash("sha256").update(token).digest("hex");
const expiry = () => new Date(Date.now() + TTL_DAYS * 86_400_000);

function setCookie(reply: FastifyReply, token: string): void {
  reply.setCookie(COOKIE, token, {
    path: "/",
    httpOnly: true,
    secure: true,
    sameSite: "lax",
    maxAge: TTL_DAYS * 86_400,
  });
}

/** The request's session, when its cookie names a live one. */
export async function loadSession(db: DB, req: FastifyRequest): Promise<StoreSession | undefined> {
  const token = req.cookies[COOKIE];
  if (!token || token.length > 100) return undefined;
  return db
    .selectFrom("storeSessions")
    .select(["id", "customerId", "lastOrderId"])
    .where("id", "=", hash(token))
    .where("expiresAt", ">", new Date())
    .executeTakeFirst();
}

/** The request's session, created (with its cookie) when there is none. */
export async function ensureSession(db: DB, req: FastifyRequest, reply: FastifyReply): Promise<StoreSession> {
  const cur = await loadSession(db, req);
  if (cur) return cur;
  const token = randomBytes(32).toString("base64url");
  const row = { id: hash(token), customerId: null, lastOrderId: null };
  await db
    .insertInto("storeSessions")
    .values({ ...row, expiresAt: expiry() })
    .execute();
  // Expired sessions go when new ones come: the index on expires_at keeps this cheap.
  await db.deleteFrom("storeSessions").where("expiresAt", "<", new Date()).execute();
  setCookie(reply, token);
  return row;
}

/** Signs `customerId` in: a new token for the same row (the cart stays). */
export async function signIn(
  db: DB,
  req: FastifyRequest,
  reply: FastifyReply,
  customerId: string,
): Promise<StoreSession> {
  const cur = await ensureSession(db, req, reply);
  const token = randomBytes(32).toString("base64url");
  const row = await db
    .updateTable("storeSessions")
    .set({ id: hash(token), customerId, expiresAt: expiry() })
    .where("id", "=", cur.id)
    .returning(["id", "customerId", "lastOrderId"])
    .executeTakeFirstOrThrow();
  setCookie(reply, token);
  return row;
}

/** Ends the session (and its cart). */
export async function signOut(db: DB, session: StoreSession | undefined, reply: FastifyReply) {
  if (session) await db.deleteFrom("storeSessions").where("id", "=", session.id).execute();
  reply.clearCookie(COOKIE, { path: "/", httpOnly: true, secure: true, sameSite: "lax" });
}
