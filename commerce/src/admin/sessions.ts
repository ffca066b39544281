import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { sha256 } from "../auth/secrets.ts";
import type { AdminDB, Stage } from "./db.ts";

// Server-side sessions in PostgreSQL: the cookie holds only a random 256-bit id, the table only
// its SHA-256 (a leaked table gives no usable cookie). Sessions end after IDLE without a request
// and ABSOLUTE after creation, whichever comes first; signing in issues a new id (rotation), so a
// cookie planted before sign-in never becomes a signed-in session.

export const SESSION_COOKIE = "__Host-admin_session";
export const IDLE_SECONDS = 30 * 60;
export const ABSOLUTE_SECONDS = 12 * 60 * 60;

export interface Session {
  id: string;
  userId: string;
  username: string;
  stage: Stage;
  pendingTotpSecret: string | null;
  mustChangePassword: boolean;
  totpEnrolled: boolean;
}

export const cookieOptions = {
  path: "/",
  httpOnly: true,
  secure: true,
  sameSite: "strict" as const,
  maxAge: ABSOLUTE_SECONDS,
};

export class Sessions {
  private readonly db: AdminDB;
  constructor(db: AdminDB) {
    this.db = db;
  }

  /** A new session (any previous one of this browser is ended by the caller); returns its id. */
  async create(userId: string, stage: Stage): Promise<string> {
    const id = randomBytes(32).toString("base64url");
    await this.db
      .insertInto("adminSessions")
      .values({ idHash: sha256(id), userId, stage })
      .execute();
    return id;
  }

  /** The live session of this id, its idle clock restarted; undefined when unknown or expired. */
  async get(id: string | undefined): Promise<Session | undefined> {
    if (!id) return undefined;
    const row = await this.db
      .updateTable("adminSessions")
      .set({ lastSeenAt: sql<Date>`now()` })
      .where("idHash", "=", sha256(id))
      .where("lastSeenAt", ">", sql<Date>`now() - make_interval(secs => ${IDLE_SECONDS})`)
      .where("createdAt", ">", sql<Date>`now() - make_interval(secs => ${ABSOLUTE_SECONDS})`)
      .returning(["userId", "stage", "pendingTotpSecret"])
      .executeTakeFirst();
    if (!row) return undefined;
    const user = await this.db
      .selectFrom("adminUsers")
      .select(["username", "mustChangePassword", "totpSecret"])
      .where("id", "=", row.userId)
      .executeTakeFirst();
    if (!user) return undefined;
    return {
      id,
      userId: row.userId,
      username: user.username,
      stage: row.stage,
      pendingTotpSecret: row.pendingTotpSecret,
      mustChangePassword: user.mustChangePassword,
      totpEnrolled: user.totpSecret !== null,
    };
  }

  /** Replaces the session by a new one at `stage` (a new id: rotation); returns the new id. */
  async rotate(old: Session, stage: Stage): Promise<string> {
    await this.destroy(old.id);
    return this.create(old.userId, stage);
  }

  async setPendingTotp(id: string, secret: string): Promise<void> {
    await this.db
      .updateTable("adminSessions")
      .set({ pendingTotpSecret: secret })
      .where("idHash", "=", sha256(id))
      .execute();
  }

  async destroy(id: string): Promise<void> {
    await this.db.deleteFrom("adminSessions").where("idHash", "=", sha256(id)).execute();
  }

  /** Ends every other session of a user (after a password change). */
  async destroyOthers(userId: string, keep: string): Promise<void> {
    await this.db
      .deleteFrom("adminSessions")
      .where("userId", "=", userId)
      .where("idHash", "<>", sha256(keep))
      .execute();
  }

  /** Drops expired sessions and old failed attempts (at start and at each sign-in; expired ones are refused either way). */
  async sweep(): Promise<void> {
    await this.db
      .deleteFrom("adminLoginFailures")
      .where("at", "<", sql<Date>`now() - interval '1 day'`)
      .execute();
    await this.db
      .deleteFrom("adminSessions")
      .where((eb) =>
        eb.or([
          eb("lastSeenAt", "<", sql<Date>`now() - make_interval(secs => ${IDLE_SECONDS})`),
          eb("createdAt", "<", sql<Date>`now() - make_interval(secs => ${ABSOLUTE_SECONDS})`),
        ]),
      )
      .execute();
  }
}
