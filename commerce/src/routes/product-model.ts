import { z } from "zod";
import type { DB } from "../db/database.ts";
import type { Product, Variant } from "../db/schema.ts";
import { notFound } from "../http/problem.ts";
import { currencyCode, minorUnits, timestamp } from "./common.ts";

// Product and variant schemas, and reading products with their variants.

export const variantIn = z.object({
  sku: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "letters, digits, '.', '_' and '-' only"),
  title: z.string().min(1).max(200),
  priceMinor: minorUnits,
  currency: currencyCode.optional().describe("Defaults to the store currency."),
  inventory: z
    .object({
      available: z.number().int().min(0).max(1_000_000_000).default(0),
      lowStockThreshold: z.number().int().min(0).max(1_000_000_000).default(0),
    })
    .optional()
    .describe("Initial stock in the default store."),
});
export const productIn = z.object({
  title: z.string().min(1).max(200),
  description: z.string().max(10_000).optional(),
  status: z.enum(["active", "draft", "archived"]).default("active"),
  variants: z.array(variantIn).min(1).max(100),
});
export const productPatch = z.object({
  title: z.string().min(1).max(200).optional(),
  description: z.string().max(10_000).nullable().optional(),
  status: z.enum(["active", "draft", "archived"]).optional(),
  variants: z
    .array(
      z.object({
        id: z.string(),
        title: z.string().min(1).max(200).optional(),
        priceMinor: minorUnits.optional(),
      }),
    )
    .max(100)
    .optional()
    .describe("Changes to existing variants, by id."),
});
export const variantOut = z.object({
  id: z.string(),
  sku: z.string(),
  title: z.string(),
  priceMinor: z.number(),
  currency: z.string(),
});
export const productOut = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  status: z.enum(["active", "draft", "archived"]),
  version: z.number(),
  createdAt: timestamp,
  updatedAt: timestamp,
  variants: z.array(variantOut),
});
export type ProductOut = z.output<typeof productOut>;

/** Products with their variants (one query for all variants: no N+1). */
export async function withVariants(db: DB, products: Product[]): Promise<ProductOut[]> {
  if (!products.length) return [];
  const variants = await db
    .selectFrom("variants")
    .selectAll()
    .where(
      "productId",
      "in",
      products.map((p) => p.id),
    )
    .orderBy("position")
    .execute();
  const by = new Map<string, Variant[]>();
  for (const v of variants) by.set(v.productId, [...(by.get(v.productId) ?? []), v]);
  return products.map((p) => ({ ...p, variants: by.get(p.id) ?? [] }));
}

export async function getProduct(db: DB, id: string): Promise<ProductOut> {
  const p = await db.selectFrom("products").selectAll().where("id", "=", id).executeTakeFirst();
  if (!p) throw notFound("product", id);
  const [out] = await withVariants(db, [p]);
  return out!;
}
