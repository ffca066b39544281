import { type Kysely, sql } from "kysely";

// The commerce model: stores, products and variants, inventory, customers, orders. Forward-only:
// a later change is a new migration, and each one keeps the previous app version working (rolling
// upgrades run old and new pods against one schema).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table stores (
      id text primary key,
      name text not null,
      currency char(3) not null,
      created_at timestamptz not null default now()
    );
    create table products (
      id text primary key,
      title text not null,
      description text,
      status text not null check (status in ('active','draft','archived')),
      version integer not null default 1,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index products_created on products (created_at, id);
    create index products_title on products (title, id);
    create table variants (
      id text primary key,
      product_id text not null references products(id) on delete cascade,
      sku text not null unique,
      title text not null,
      price_minor bigint not null check (price_minor >= 0),
      currency char(3) not null,
      position integer not null
    );
    create index variants_product on variants (product_id, position);
    create table inventory_levels (
      variant_id text not null references variants(id) on delete cascade,
      store_id text not null references stores(id),
      available integer not null,
      low_stock_threshold integer not null default 0 check (low_stock_threshold >= 0),
      low boolean not null default false,
      version integer not null default 1,
      updated_at timestamptz not null default now(),
      primary key (variant_id, store_id)
    );
    create table inventory_adjustments (
      id text primary key,
      variant_id text not null,
      store_id text not null,
      delta integer not null,
      reason text not null,
      created_at timestamptz not null default now(),
      foreign key (variant_id, store_id) references inventory_levels(variant_id, store_id) on delete cascade
    );
    create index inventory_adjustments_level on inventory_adjustments (variant_id, store_id, created_at);
    create table customers (
      id text primary key,
      email text not null,
      name text not null,
      version integer not null default 1,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index customers_email on customers (lower(email));
    create index customers_created on customers (created_at, id);
    create table orders (
      id text primary key,
      store_id text not null references stores(id),
      customer_id text references customers(id),
      status text not null check (status in ('pending','paid','fulfilled','shipped','delivered','cancelled','refunded')),
      currency char(3) not null,
      subtotal_minor bigint not null,
      tax_minor bigint not null,
      shipping_minor bigint not null,
      total_minor bigint not null,
      shipping_method text,
      tracking_number text,
      version integer not null default 1,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index orders_created on orders (created_at, id);
    create index orders_status on orders (status, created_at, id);
    create index orders_customer on orders (customer_id, created_at, id);
    create table order_lines (
      id text primary key,
      order_id text not null references orders(id) on delete cascade,
      position integer not null,
      variant_id text not null,
      product_id text not null,
      sku text not null,
      title text not null,
      quantity integer not null check (quantity > 0),
      unit_price_minor bigint not null,
      total_minor bigint not null
    );
    create index order_lines_order on order_lines (order_id);
    create index order_lines_product on order_lines (product_id);
    create table order_status_history (
      id bigserial primary key,
      order_id text not null references orders(id) on delete cascade,
      from_status text,
      to_status text not null,
      note text,
      at timestamptz not null default now()
    );
    create index order_status_history_order on order_status_history (order_id, id);
  `.execute(db);
}
