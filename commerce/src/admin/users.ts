import { randomBytes, randomUUID } from "node:crypto";
import { hash, verify } from "@node-rs/argon2";
import { sql } from "kysely";
import { Secret, TOTP } from "otpauth";
import { sha256 } from "../auth/secrets.ts";
import type { AdminDB } from "./db.ts";

// Admin accounts: the password (argon2id, @node-rs/argon2 defaults), TOTP (RFC 6238, 30 s, 6
// digits, SHA-1: what every authenticator app reads from an otpauth:// URI), recovery codes, and
// the failed-attempt log that rate-limits sign-in.

/** Failed attempts per client address within WINDOW before sign-in is refused (429). */
export const MAX_FAILURES_PER_IP = 10;
/** Failed attempts per username within WINDOW (higher: one address must not lock the admin out). */
export const MAX_FAILURES_PER_USER = 50;
export const FAILURE_WINDOW_SECONDS = 15 * 60;
export const MIN_PASSWORD_LENGTH = 12;
export const RECOVERY_CODES = 10;

/**
 * Creates the initial admin from ADMIN_USERNAME/ADMIN_PASSWORD once (the first start); later
 * changes of those settings do not touch an existing account. Replicas starting together insert
 * at most one row (the username is unique).
 */
export async function seedAdmin(db: AdminDB, username?: string, password?: string): Promise<void> {
  if (!username || !password) return;
  const exists = await db.selectFrom("adminUsers").select("id").limit(1).executeTakeFirst();
  if (exists) return;
  await db
    .insertInto("adminUsers")
    .values({ id: `adm_${randomUUID()}`, username, passwordHash: await hash(password) })
    .onConflict((oc) => oc.column("username").doNothing())
    .execute();
}

export const hashPassword = (password: string) => hash(password);

/** The user with this username and password, or undefined (the same time either way). */
export async function checkPassword(db: AdminDB, username: string, password: string) {
  const user = await db
    .selectFrom("adminUsers")
    .selectAll()
    .where("username", "=", username)
    .executeTakeFirst();
  // An unknown name still costs one argon2 verification, so timing does not tell names apart.
  const ok = await verify(user?.passwordHash ?? DUMMY_HASH, password).catch(() => false);
  return user && ok ? user : undefined;
}
const DUMMY_HASH = await hash(randomBytes(16).toString("hex"));

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

export function totpFor(secret: string, username: string, issuer: string): TOTP {
  return new TOTP({
    issuer,
    label: username,
    algorithm: "SHA1",
    digits: 6,
    period: 30,
    secret: Secret.fromBase32(secret),
  });
}

/** The time step a code matches (±1 step of clock drift), or undefined. */
export function matchTotp(secret: string, code: string): number | undefined {
  const token = code.replace(/\s/g, "");
  if (!/^\d{6}$/.test(token)) return undefined;
  const totp = totpFor(secret, "", "");
  const delta = totp.validate({ token, window: 1 });
  if (delta === null) return undefined;
  return Math.floor(Date.now() / 1000 / 30) + delta;
}

/**
 * Accepts a TOTP code of an enrolled user once: a step at or before the last accepted one is
 * refused (a code seen over a shoulder cannot be replayed within its 30 s).
 */
export async function useTotp(db: AdminDB, userId: string, code: string): Promise<boolean> {
  const user = await db
    .selectFrom("adminUsers")
    .select(["totpSecret"])
    .where("id", "=", userId)
    .executeTakeFirst();
  if (!user?.totpSecret) return false;
  const step = matchTotp(user.totpSecret, code);
  if (step === undefined) return false;
  const r = await db
    .updateTable("adminUsers")
    .set({ totpLastStep: step })
    .where("id", "=", userId)
    .where((eb) => eb.or([eb("totpLastStep", "is", null), eb("totpLastStep", "<", step)]))
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

const CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
const normalizeCode = (c: string) => c.toUpperCase().replace(/[^A-Z0-9]/g, "");

/**
 * Ten recovery codes of 16 characters (80 random bits each, grouped by four). Random codes of
 * that size are stored as SHA-256, like API keys: a slow hash is for low-entropy secrets.
 */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => {
    const bytes = randomBytes(16);
    const chars = [...bytes].map((b) => CODE_ALPHABET[b % 32]).join("");
    return chars.match(/.{4}/g)!.join("-");
  });
}

/** Completes TOTP enrolment: the secret, the step just used, new recovery codes (hashed). */
export async function enrolTotp(
  db: AdminDB,
  userId: string,
  secret: string,
  step: number,
  codes: string[],
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable("adminUsers")
      .set({ totpSecret: secret, totpLastStep: step, updatedAt: sql<Date>`now()` })
      .where("id", "=", userId)
      .execute();
    await trx.deleteFrom("adminRecoveryCodes").where("userId", "=", userId).execute();
    await trx
      .insertInto("adminRecoveryCodes")
      .values(codes.map((c) => ({ userId, hash: sha256(normalizeCode(c)), usedAt: null })))
      .execute();
  });
}

/** Uses a recovery code: true once per code. */
export async function useRecoveryCode(db: AdminDB, userId: string, code: string): Promise<boolean> {
  const r = await db
    .updateTable("adminRecoveryCodes")
    .set({ usedAt: sql<Date>`now()` })
    .where("userId", "=", userId)
    .where("hash", "=", sha256(normalizeCode(code)))
    .where("usedAt", "is", null)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

export async function setPassword(db: AdminDB, userId: string, password: string): Promise<void> {
  await db
    .updateTable("adminUsers")
    .set({ passwordHash: await hash(password), mustChangePassword: false, updatedAt: sql<Date>`now()` })
    .where("id", "=", userId)
    .execute();
}

export async function recordFailure(db: AdminDB, ip: string, username: string): Promise<void> {
  await db.insertInto("adminLoginFailures").values({ ip, username }).execute();
}

/** Whether this address or username has failed too often lately (sign-in then refused). */
export async function tooManyFailures(db: AdminDB, ip: string, username: string): Promise<boolean> {
  const since = sql<Date>`now() - make_interval(secs => ${FAILURE_WINDOW_SECONDS})`;
  const r = await db
    .selectFrom("adminLoginFailures")
    .select([
      sql<number>`count(*) filter (where ip = ${ip})`.as("byIp"),
      sql<number>`count(*) filter (where username = ${username})`.as("byUser"),
    ])
    .where("at", ">", since)
    .where((eb) => eb.or([eb("ip", "=", ip), eb("username", "=", username)]))
    .executeTakeFirstOrThrow();
  return Number(r.byIp) >= MAX_FAILURES_PER_IP || Number(r.byUser) >= MAX_FAILURES_PER_USER;
}
