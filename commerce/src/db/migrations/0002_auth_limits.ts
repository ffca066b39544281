import { type Kysely, sql } from "kysely";

// Credentials (API keys, OAuth clients, token signing keys), idempotency records and the shared
// rate-limit counters.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table api_keys (
      id text primary key,
      name text not null,
      prefix text not null,
      hash text not null unique,
      scopes text[] not null,
      created_at timestamptz not null default now(),
      revoked_at timestamptz,
      last_used_at timestamptz
    );
    create table oauth_clients (
      id text primary key,
      name text not null,
      secret_hash text not null,
      scopes text[] not null,
      created_at timestamptz not null default now(),
      revoked_at timestamptz
    );
    create table signing_keys (
      kid text primary key,
      alg text not null,
      private_jwk jsonb not null,
      public_jwk jsonb not null,
      created_at timestamptz not null default now()
    );
    create table idempotency_keys (
      credential text not null,
      key text not null,
      request_hash text not null,
      status_code integer,
      response_body text,
      response_headers jsonb,
      created_at timestamptz not null default now(),
      primary key (credential, key)
    );
    create index idempotency_keys_created on idempotency_keys (created_at);
    create unlogged table rate_limit_counters (
      credential text not null,
      window_start timestamptz not null,
      count integer not null,
      primary key (credential, window_start)
    );
  `.execute(db);
}
