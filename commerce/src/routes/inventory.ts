import { randomUUID } from "node:crypto";
import { sql, type Transaction } from "kysely";
import { z } from "zod";
import type { Database } from "../db/schema.ts";
import { ifMatchVersion, setEtag, versionMismatch } from "../http/etag.ts";
import { keyset, page, pageOf, pageQuery } from "../http/pagination.ts";
import { notFound, Problem } from "../http/problem.ts";
import type { Outbox } from "../webhooks/outbox.ts";
import { timestamp } from "./common.ts";
import type { Api, Ctx } from "./index.ts";
import { DEFAULT_STORE } from "./products.ts";

// Inventory levels per variant and store, with a low-stock threshold, and the adjustments that
// change them. InventoryLow is emitted once per crossing: when a level goes from above its
// threshold to at or below it (the `low` flag remembers which side it is on).

const tags = ["inventory"];
const levelOut = z.object({
  variantId: z.string(),
  storeId: z.string(),
  sku: z.string(),
  available: z.number(),
  lowStockThreshold: z.number(),
  low: z.boolean(),
  version: z.number(),
  updatedAt: timestamp,
});
const levelParams = z.object({ variantId: z.string().max(100) });
const storeQuery = z.object({ storeId: z.string().max(100).default(DEFAULT_STORE) });
const listQuery = pageQuery(["sku", "available"] as const).extend({
  storeId: z.string().max(100).default(DEFAULT_STORE),
  lowStock: z.enum(["true", "false"]).optional().describe("Only levels at or below their threshold."),
});
const adjustmentIn = z.object({
  delta: z
    .number()
    .int()
    .min(-1_000_000_000)
    .max(1_000_000_000)
    .refine((d) => d !== 0, "must not be 0"),
  reason: z.string().min(1).max(200),
});
const adjustmentOut = z.object({
  id: z.string(),
  variantId: z.string(),
  storeId: z.string(),
  delta: z.number(),
  reason: z.string(),
  createdAt: timestamp,
});

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

export async function inventoryRoutes(api: Api, { db, outbox }: Ctx): Promise<void> {
  const getLevel = async (variantId: string, storeId: string) => {
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
  };

  api.get(
    "/inventory",
    {
      config: { scope: "inventory:read" },
      schema: { tags, querystring: listQuery, response: { 200: pageOf(levelOut) } },
    },
    async (req) => {
      const q = req.query;
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
    },
  );

  api.get(
    "/inventory/:variantId",
    {
      config: { scope: "inventory:read" },
      schema: { tags, params: levelParams, querystring: storeQuery, response: { 200: levelOut } },
    },
    async (req, reply) => {
      const l = await getLevel(req.params.variantId, req.query.storeId);
      setEtag(reply, l.version);
      return l;
    },
  );

  api.patch(
    "/inventory/:variantId",
    {
      config: { scope: "inventory:write" },
      schema: {
        tags,
        params: levelParams,
        querystring: storeQuery,
        body: z.object({ lowStockThreshold: z.number().int().min(0).max(1_000_000_000) }),
        response: { 200: levelOut },
      },
    },
    async (req, reply) => {
      const want = ifMatchVersion(req);
      const { variantId } = req.params;
      const { storeId } = req.query;
      await db.transaction().execute(async (trx) => {
        const cur = await trx
          .selectFrom("inventoryLevels")
          .select(["version", "available"])
          .where("variantId", "=", variantId)
          .where("storeId", "=", storeId)
          .forUpdate()
          .executeTakeFirst();
        if (!cur) throw notFound("inventory level of variant", `${variantId} in store ${storeId}`);
        if (want !== undefined && want !== cur.version) throw versionMismatch(cur.version);
        const t = req.body.lowStockThreshold;
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
      const l = await getLevel(variantId, storeId);
      setEtag(reply, l.version);
      return l;
    },
  );

  api.post(
    "/inventory/:variantId/adjustments",
    {
      config: { scope: "inventory:write" },
      schema: {
        tags,
        params: levelParams,
        querystring: storeQuery,
        body: adjustmentIn,
        response: { 201: levelOut },
      },
    },
    async (req, reply) => {
      const level = await db.transaction().execute((trx) =>
        adjustLevel(trx, outbox, {
          ...req.body,
          variantId: req.params.variantId,
          storeId: req.query.storeId,
          pointer: "#/delta",
        }),
      );
      setEtag(reply, level.version);
      return reply.code(201).send(level);
    },
  );

  api.get(
    "/inventory/:variantId/adjustments",
    {
      config: { scope: "inventory:read" },
      schema: {
        tags,
        params: levelParams,
        querystring: storeQuery,
        response: { 200: z.object({ data: z.array(adjustmentOut) }) },
      },
    },
    async (req) => {
      await getLevel(req.params.variantId, req.query.storeId);
      const data = await db
        .selectFrom("inventoryAdjustments")
        .selectAll()
        .where("variantId", "=", req.params.variantId)
        .where("storeId", "=", req.query.storeId)
        .orderBy("createdAt", "desc")
        .limit(200)
        .execute();
      return { data };
    },
  );
}
