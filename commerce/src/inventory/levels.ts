import { randomUUID } from "node:crypto";
import { sql, type Transaction } from "kysely";
import type { DB } from "../db/database.ts";
import type { Database } from "../db/schema.ts";
import { versionMismatch } from "../http/etag.ts";
import { keyset, page } from "../http/pagination.ts";
import { notFound, Problem } from "../http/problem.ts";
import type { Outbox } from "../webhooks/outbox.ts";

// Inventory levels per variant and store, with a low-stock threshold, and the adjustments that
// change them. InventoryLow is emitted once per crossing: when a level goes from above its
// threshold to at or below it (the `low` flag remembers which side it is on).

/** A level with its variant's SKU. */
export async function getLevel(db: DB, variantId: string, storeId: string) {
  const l = await db
    .selectFrom("inventoryLevels")
    .innerJoin("variants", "variants.id", "inventoryLevels.variantId")
    .selectAll("inventoryLevels")
    .select("variants.sku")
    .where("variantId", "=", variantId)
    .where("storeId", "=", storeId)
    .executeTakeFirst();
  if (!l) throw notFound("inventory level of variant", `${variantId} in store ${storeId}`);
  return l;
}

/** A page of a store's levels by SKU or by available count (keyset paging). */
export async function listLevels(
  db: DB,
  q: { storeId: string; sort: string; cursor?: string; limit: number; lowStock?: "true" | "false" },
) {
  const [column, type] =
    q.sort.replace(/^-/, "") === "sku" ? ["variants.sku", "text"] : ["inventoryLevels.available", "int4"];
  // The tie-breaker is the variant id: one level per variant and store.
  const ks = keyset(column, "variants.id", type, q.sort, q.cursor);
  let query = db
    .selectFrom("inventoryLevels")
    .innerJoin("variants", "variants.id", "inventoryLevels.variantId")
    .selectAll("inventoryLevels")
    .select(["variants.sku", "variants.id", ks.cursorValue.as("cursorValue")])
    .where("storeId", "=", q.storeId);
  if (ks.where) query = query.where(ks.where);
  if (q.lowStock) query = query.where("low", "=", q.lowStock === "true");
  const rows = await query
    .orderBy(ks.orderBy)
    .limit(q.limit + 1)
    .execute();
  const p = page(rows, q.limit, q.sort);
  return { data: p.rows.map(({ id: _id, ...l }) => l), nextCursor: p.nextCursor };
}

/** Sets a level's low-stock threshold (at version `want` when given) and returns the level. */
export async function setLowStockThreshold(
  db: DB,
  a: { variantId: string; storeId: string; threshold: number; want?: number },
) {
  const { variantId, storeId, threshold: t } = a;
  await db.transaction().execute(async (trx) => {
    const cur = await trx
      .selectFrom("inventoryLevels")
      .select(["version", "available"])
      .where("variantId", "=", variantId)
      .where("storeId", "=", storeId)
      .forUpdate()
      .executeTakeFirst();
    if (!cur) throw notFound("inventory level of variant", `${variantId} in store ${storeId}`);
    if (a.want !== undefined && a.want !== cur.version) throw versionMismatch(cur.version);
    await trx
      .updateTable("inventoryLevels")
      .set({
        lowStockThreshold: t,
        low: t > 0 && cur.available <= t,
        version: sql`version + 1`,
        updatedAt: new Date(),
      })
      .where("variantId", "=", variantId)
      .where("storeId", "=", storeId)
      .execute();
  });
  return getLevel(db, variantId, storeId);
}

/**
 * Changes a level by `delta` inside `trx`; refuses to go below zero (naming `pointer`), records
 * the adjustment, and emits InventoryLow on a downward crossing of the threshold.
 */
export async function adjustLevel(
  trx: Transaction<Database>,
  outbox: Outbox,
  a: { variantId: string; storeId: string; delta: number; reason: string; pointer: string },
) {
  const cur = await trx
    .selectFrom("inventoryLevels")
    .innerJoin("variants", "variants.id", "inventoryLevels.variantId")
    .select(["available", "lowStockThreshold", "low", "variants.sku"])
    .where("variantId", "=", a.variantId)
    .where("storeId", "=", a.storeId)
    .forUpdate()
    .executeTakeFirst();
  if (!cur) throw notFound("inventory level of variant", `${a.variantId} in store ${a.storeId}`);
  const available = cur.available + a.delta;
  if (available < 0) {
    throw new Problem(
      409,
      "insufficient-stock",
      "Insufficient stock",
      `${a.pointer.replace(/^#\//, "")}: only ${cur.available} of ${cur.sku} available`,
      {
        errors: [{ pointer: a.pointer, in: "body", detail: `only ${cur.available} available` }],
      },
    );
  }
  const low = cur.lowStockThreshold > 0 && available <= cur.lowStockThreshold;
  const level = await trx
    .updateTable("inventoryLevels")
    .set({ available, low, version: sql`version + 1`, updatedAt: new Date() })
    .where("variantId", "=", a.variantId)
    .where("storeId", "=", a.storeId)
    .returningAll()
    .executeTakeFirstOrThrow();
  await trx
    .insertInto("inventoryAdjustments")
    .values({
      id: `adj_${randomUUID()}`,
      variantId: a.variantId,
      storeId: a.storeId,
      delta: a.delta,
      reason: a.reason,
    })
    .execute();
  if (low && !cur.low) {
    await outbox.emit(trx, "InventoryLow", {
      variantId: a.variantId,
      storeId: a.storeId,
      sku: cur.sku,
      available,
      lowStockThreshold: cur.lowStockThreshold,
    });
  }
  return { ...level, sku: cur.sku };
}

/** adjustLevel in a transaction of its own. */
export function adjustStock(db: DB, outbox: Outbox, a: Parameters<typeof adjustLevel>[2]) {
  return db.transaction().execute((trx) => adjustLevel(trx, outbox, a));
}

/** The newest 200 adjustments of a level (404 when there is no such level). */
export async function listAdjustments(db: DB, variantId: string, storeId: string) {
  await getLevel(db, variantId, storeId);
  return db
    .selectFrom("inventoryAdjustments")
    .selectAll()
    .where("variantId", "=", variantId)
    .where("storeId", "=", storeId)
    .orderBy("createdAt", "desc")
    .limit(200)
    .execute();
}
