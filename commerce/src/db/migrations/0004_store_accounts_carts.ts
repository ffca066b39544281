import { type Kysely, sql } from "kysely";

// The store frontend: customer passwords, browser sessions with their carts, and the catalogue
// indexes its pages read through (full-text search and the listing order of active products), so
// neither a search nor a page of the listing scans the products table.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table store_accounts (
      customer_id text primary key references customers(id) on delete cascade,
      password_hash text not null,
      created_at timestamptz not null default now()
    );
    create table store_sessions (
      id text primary key,
      customer_id text references customers(id) on delete cascade,
      last_order_id text references orders(id) on delete set null,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null
    );
    create index store_sessions_expires on store_sessions (expires_at);
    create table store_cart_lines (
      session_id text not null references store_sessions(id) on delete cascade on update cascade,
      variant_id text not null references variants(id) on delete cascade,
      quantity integer not null check (quantity > 0 and quantity <= 100),
      added_at timestamptz not null default now(),
      primary key (session_id, variant_id)
    );
    create index products_search on products
      using gin (to_tsvector('simple', title || ' ' || coalesce(description, '')));
    create index products_active_title on products (title, id) where status = 'active';
  `.execute(db);
}
