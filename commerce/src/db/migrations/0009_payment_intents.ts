import { type Kysely, sql } from "kysely";

// Payments that wait for a provider: the provider's reference (a Stripe PaymentIntent id), the
// idempotency key it was created with, a pending customer action (3-D Secure redirect), payment
// instructions (bank transfer), and the provider events already applied (Stripe retries events;
// each is applied once). Older pods keep working: they write only 'succeeded' and 'failed'.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table payments drop constraint if exists payments_status_check;
    alter table payments add constraint payments_status_check
      check (status in ('succeeded','failed','pending','requires_action','authorized','refunded'));
    alter table payments
      add column provider_ref text,
      add column idempotency_key text,
      add column next_action jsonb,
      add column instructions jsonb,
      add column updated_at timestamptz not null default now();
    create index payments_provider_ref on payments (provider_ref) where provider_ref is not null;
    create table payment_provider_events (
      id text primary key,
      gateway text not null,
      type text not null,
      received_at timestamptz not null default now()
    );
  `.execute(db);
}
