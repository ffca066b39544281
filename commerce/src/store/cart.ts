import { sql } from "kysely";
import type { DB } from "../db/database.ts";
import { DEFAULT_STORE } from "../db/seed.ts";

// A session's cart: variant and quantity rows in PostgreSQL (store_cart_lines). Prices and stock
// are read live each time, so the cart shows what the order will charge; the order itself takes
// the stock (orders/place.ts) and refuses what is no longer there.

export const MAX_QUANTITY = 100;

export interface CartLine {
  variantId: string;
  productId: string;
  title: string;
  variantTitle: string;
  sku: string;
  quantity: number;
  unitPriceMinor: number;
  available: number;
  active: boolean;
}

export async function cartLines(db: DB, sessionId: string): Promise<CartLine[]> {
  return db
    .selectFrom("storeCartLines as c")
    .innerJoin("variants as v", "v.id", "c.variantId")
    .innerJoin("products as p", "p.id", "v.productId")
    .leftJoin("inventoryLevels as i", (j) =>
      j.onRef("i.variantId", "=", "v.id").on("i.storeId", "=", DEFAULT_STORE),
    )
    .select([
      "v.id as variantId",
      "p.id as productId",
      "p.title",
      "v.title as variantTitle",
      "v.sku",
      "c.quantity",
      "v.priceMinor as unitPriceMinor",
      sql<number>`coalesce(i.available, 0)`.as("available"),
      sql<boolean>`p.status = 'active'`.as("active"),
    ])
    .where("c.sessionId", "=", sessionId)
    .orderBy("c.addedAt")
    .orderBy("v.id")
    .execute();
}

/** Number of items in a session's cart (for the header). */
export async function cartCount(db: DB, sessionId: string): Promise<number> {
  const r = await db
    .selectFrom("storeCartLines")
    .select(sql<number>`coalesce(sum(quantity), 0)::int`.as("n"))
    .where("sessionId", "=", sessionId)
    .executeTakeFirst();
  return r?.n ?? 0;
}

/** Adds `quantity` of an active variant (capped at MAX_QUANTITY); false when there is no such variant. */
export async function addToCart(db: DB, sessionId: string, variantId: string, quantity: number) {
  const v = await db
    .selectFrom("variants")
    .innerJoin("products", "products.id", "variants.productId")
    .select("variants.id")
    .where("variants.id", "=", variantId)
    .where("products.status", "=", "active")
    .executeTakeFirst();
  if (!v) return false;
  await db
    .insertInto("storeCartLines")
    .values({ sessionId, variantId, quantity: Math.min(quantity, MAX_QUANTITY), addedAt: new Date() })
    .onConflict((oc) =>
      oc.columns(["sessionId", "variantId"]).doUpdateSet({
        quantity: sql`least(store_cart_lines.quantity + excluded.quantity, ${MAX_QUANTITY})`,
      }),
    )
    .execute();
  return true;
}

/** Sets a line's quantity; 0 removes it. */
export async function setQuantity(db: DB, sessionId: string, variantId: string, quantity: number) {
  const q = db
    .deleteFrom("storeCartLines")
    .where("sessionId", "=", sessionId)
    .where("variantId", "=", variantId);
  if (quantity <= 0) return q.execute();
  return db
    .updateTable("storeCartLines")
    .set({ quantity: Math.min(quantity, MAX_QUANTITY) })
    .where("sessionId", "=", sessionId)
    .where("variantId", "=", variantId)
    .execute();
}

export async function clearCart(db: DB, sessionId: string): Promise<void> {
  await db.deleteFrom("storeCartLines").where("sessionId", "=", sessionId).execute();
}
