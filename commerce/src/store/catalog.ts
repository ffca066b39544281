import { sql } from "kysely";
import type { DB } from "../db/database.ts";
import { DEFAULT_STORE } from "../db/seed.ts";

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

/** A position in the listing: the (title, id) of a product. */
export type Cursor = [title: string, id: string];

export const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString("base64url");
export function decodeCursor(s: string | undefined): Cursor | undefined {
  if (!s || s.length > 600) return undefined;
  try {
    const v = JSON.parse(Buffer.from(s, "base64url").toString()) as unknown;
    return Array.isArray(v) && v.length === 2 && typeof v[0] === "string" && typeof v[1] === "string"
      ? [v[0], v[1]]
      : undefined;
  } catch {
    return undefined;
  }
}

export interface Listing {
  products: ListedProduct[];
  /** Cursors of the previous and next pages, when there are such pages. */
  prev?: Cursor;
  next?: Cursor;
}

/**
 * A page of active products by title, after or before a cursor (keyset paging: every page, the
 * 2,000th as the first, is an index range read, never an offset walked through).
 */
export async function listProducts(
  db: DB,
  q: string,
  at: { after?: Cursor; before?: Cursor } = {},
): Promise<Listing> {
  const tsq = toTsQuery(q);
  const backwards = !at.after && !!at.before;
  const dir = backwards ? "desc" : "asc";
  let query = db
    .selectFrom("products")
    .select(["id", "title"])
    .where("status", "=", "active")
    .orderBy("title", dir)
    .orderBy("id", dir)
    .limit(PAGE_SIZE + 1);
  if (at.after) query = query.where(sql<boolean>`(title, id) > (${at.after[0]}, ${at.after[1]})`);
  else if (at.before) query = query.where(sql<boolean>`(title, id) < (${at.before[0]}, ${at.before[1]})`);
  if (tsq) query = query.where(sql<boolean>`${searchVector} @@ to_tsquery('simple', ${tsq})`);
  const rows = await query.execute();
  const more = rows.length > PAGE_SIZE;
  const page1 = rows.slice(0, PAGE_SIZE);
  if (backwards) page1.reverse();
  const first = page1[0];
  const last = page1[page1.length - 1];
  const prev = first && (backwards ? more : !!at.after) ? ([first.title, first.id] as Cursor) : undefined;
  const next = last && (backwards ? true : more) ? ([last.title, last.id] as Cursor) : undefined;
  if (!page1.length) return { products: [] };
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
    prev,
    next,
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
