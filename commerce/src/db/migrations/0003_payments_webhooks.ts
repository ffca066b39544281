import { type Kysely, sql } from "kysely";

// Payments recorded against the configured gateways, and the webhook outbox: an event row and
// one delivery row per subscribed webhook, written in the transaction of the change that caused
// them, plus every delivery attempt (the delivery log).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table payments (
      id text primary key,
      order_id text not null references orders(id) on delete cascade,
      gateway text not null,
      provider text not null,
      mode text not null,
      amount_minor bigint not null,
      currency char(3) not null,
      status text not null check (status in ('succeeded','failed')),
      failure_reason text,
      created_at timestamptz not null default now()
    );
    create index payments_order on payments (order_id, created_at);
    create table webhook_events (
      id text primary key,
      type text not null,
      payload jsonb not null,
      created_at timestamptz not null default now()
    );
    create table webhook_deliveries (
      id text primary key,
      event_id text not null references webhook_events(id) on delete cascade,
      webhook text not null,
      url text not null,
      status text not null check (status in ('pending','succeeded','failed','cancelled')),
      attempts integer not null default 0,
      next_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index webhook_deliveries_status on webhook_deliveries (status, next_attempt_at);
    create index webhook_deliveries_created on webhook_deliveries (created_at, id);
    create table webhook_attempts (
      id bigserial primary key,
      delivery_id text not null references webhook_deliveries(id) on delete cascade,
      attempt integer not null,
      at timestamptz not null default now(),
      status_code integer,
      error text,
      duration_ms integer not null
    );
    create index webhook_attempts_delivery on webhook_attempts (delivery_id, attempt);
    create table webhook_endpoints (
      name text primary key,
      disabled_at timestamptz,
      disabled_reason text
    );
  `.execute(db);
}
