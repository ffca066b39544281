import type { Generated, Kysely } from "kysely";
import type { DB } from "../db/database.ts";
import type { Database } from "../db/schema.ts";

// The admin's tables (migration 0005_admin_auth), typed on top of the service's database.

export type AdminTables = {
  adminUsers: {
    id: string;
    username: string;
    passwordHash: string;
    mustChangePassword: Generated<boolean>;
    totpSecret: string | null;
    totpLastStep: number | null;
    createdAt: Generated<Date>;
    updatedAt: Generated<Date>;
  };
  adminRecoveryCodes: { userId: string; hash: string; usedAt: Date | null };
  adminSessions: {
    idHash: string;
    userId: string;
    stage: Stage;
    pendingTotpSecret: string | null;
    createdAt: Generated<Date>;
    lastSeenAt: Generated<Date>;
  };
  adminLoginFailures: { id: Generated<number>; ip: string; username: string; at: Generated<Date> };
};

/**
 * Where a session is in the sign-in: `mfa` (password right, second factor due), `setup` (initial
 * password to change and TOTP to enrol), `full` (signed in).
 */
export type Stage = "mfa" | "setup" | "full";

export type AdminDB = Kysely<Database & AdminTables>;
export const adminDb = (db: DB): AdminDB => db.withTables<AdminTables>();
