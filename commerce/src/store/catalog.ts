import { sql } from "kysely";
import type { DB } from "../db/database.ts";
import { DEFAULT_STORE } from "../routes/products.ts";

// The catalogue as the store reads it: active products only. Search is PostgreSQL full-text
// search over title and description through the GIN index of migration 0004 (every word a
// prefix, all words required); the listing walks the partial index on (title, id) of active
// products. Neither reads the whole table, so pages stay fast at the plan's 50,000 products.

export const PAGE_SIZE = 24;

export interface ListedProduct {
  id: string;
  title: string;
  minPriceMinor: number;
  maxPriceMinor: number;
  available: number;
}

/** Words of a search as a prefix tsquery ("blue mu" → "blue:* & mu:*"), or undefined when empty. */
export function toTsQuery(q: string): string | undefined {
  const words = q
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .slice(0, 8);
  return words.length ? words.map((w) => `${w}:*`).join(" & ") : undefined;
}

const searchVector = sql`to_tsvector('simple', products.title || ' ' || coalesce(products.description, ''))`;

/** One page (1-based) of active products, by title; `more` when a next page exists. */
export async function listProducts(
  db: DB,
  q: string,
  page: number,
): Promise<{ products: ListedProduct[]; more: boolean }> {
  const tsq = toTsQuery(q);
  let query = db
    .selectFrom("products")
    .select(["id", "title"])
    .where("status", "=", "active")
    .orderBy("title")
    .orderBy("id")
    .limit(PAGE_SIZE + 1)
    .offset((page - 1) * PAGE_SIZE);
  if (tsq) query = query.where(sql<boolean>`${searchVector} @@ to_tsquery('simple', ${tsq})`);
  const rows = await query.execute();
  const more = rows.length > PAGE_SIZE;
  const page1 = rows.slice(0, PAGE_SIZE);
  if (!page1.length) return { products: [], more };
  const stats = await db
    .selectFrom("variants")
    .leftJoin("inventoryLevels", (j) =>
      j
        .onRef("inventoryLevels.variantId", "=", "variants.id")
        .on("inventoryLevels.storeId", "=", DEFAULT_STORE),
    )
    .select((eb) => [
      "variants.productId",
      eb.fn.min("variants.priceMinor").as("minPrice"),
      eb.fn.max("variants.priceMinor").as("maxPrice"),
      sql<number>`coalesce(sum(greatest(inventory_levels.available, 0)), 0)::int`.as("available"),
    ])
    .where(
      "variants.productId",
      "in",
      page1.map((p) => p.id),
    )
    .groupBy("variants.productId")
    .execute();
  const byId = new Map(stats.map((s) => [s.productId, s]));
  return {
    more,
    products: page1.map((p) => {
      const s = byId.get(p.id);
      return {
        id: p.id,
        title: p.title,
        minPriceMinor: Number(s?.minPrice ?? 0),
        maxPriceMinor: Number(s?.maxPrice ?? 0),
        available: s?.available ?? 0,
      };
    }),
  };
}

export interface ProductPage {
  id: string;
  title: string;
  description: string | null;
  variants: { id: string; sku: string; title: string; priceMinor: number; available: number }[];
}

/** An active product with its variants and their stock in the default store. */
export async function getProduct(db: DB, id: string): Promise<ProductPage | undefined> {
  const p = await db
    .selectFrom("products")
    .select(["id", "title", "description"])
    .where("id", "=", id)
    .where("status", "=", "active")
    .executeTakeFirst();
  if (!p) return undefined;
  const variants = await db
    .selectFrom("variants")
    .leftJoin("inventoryLevels", (j) =>
      j
        .onRef("inventoryLevels.variantId", "=", "variants.id")
        .on("inventoryLevels.storeId", "=", DEFAULT_STORE),
    )
    .select([
      "variants.id",
      "variants.sku",
      "variants.title",
      "variants.priceMinor",
      sql<number>`coalesce(inventory_levels.available, 0)`.as("available"),
    ])
    .where("variants.productId", "=", id)
    .orderBy("variants.position")
    .execute();
  return { ...p, variants };
}
