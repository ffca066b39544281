import { type Kysely, sql } from "kysely";

// The shipping address of an order (name, street lines, city, region, postal code, country), as
// the checkout or the API gives it: one jsonb value written once when the order is placed and
// only ever read whole. Nullable, so older pods (which do not write it) keep working during a
// rolling upgrade, and orders placed before it stay valid.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table orders add column shipping_address jsonb`.execute(db);
}
