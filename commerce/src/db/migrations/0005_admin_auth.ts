import { type Kysely, sql } from "kysely";

// The admin interface: its users (argon2 password hash, TOTP secret, recovery codes stored as
// SHA-256 of random codes), server-side sessions (only a SHA-256 of the cookie's id is stored),
// failed sign-in attempts (rate limiting), and a trigram index for the product search of the
// admin's list (an ILIKE '%…%' on the title uses it instead of scanning every product).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table admin_users (
      id text primary key,
      username text not null unique,
      password_hash text not null,
      must_change_password boolean not null default true,
      totp_secret text,
      totp_last_step bigint,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create table admin_recovery_codes (
      user_id text not null references admin_users (id) on delete cascade,
      hash text not null,
      used_at timestamptz,
      primary key (user_id, hash)
    );
    create table admin_sessions (
      id_hash text primary key,
      user_id text not null references admin_users (id) on delete cascade,
      stage text not null,
      pending_totp_secret text,
      created_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now()
    );
    create index admin_sessions_user on admin_sessions (user_id);
    create table admin_login_failures (
      id bigint generated always as identity primary key,
      ip text not null,
      username text not null,
      at timestamptz not null default now()
    );
    create index admin_login_failures_ip on admin_login_failures (ip, at);
    create index admin_login_failures_user on admin_login_failures (username, at);
    create extension if not exists pg_trgm;
    create index if not exists products_title_trgm on products using gin (title gin_trgm_ops);
  `.execute(db);
}
