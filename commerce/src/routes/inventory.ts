import { z } from "zod";
import { DEFAULT_STORE } from "../db/seed.ts";
import type { Api, Ctx } from "../http/context.ts";
import { ifMatchVersion, setEtag } from "../http/etag.ts";
import { pageOf, pageQuery } from "../http/pagination.ts";
import {
  adjustStock,
  getLevel,
  listAdjustments,
  listLevels,
  setLowStockThreshold,
} from "../inventory/levels.ts";
import { timestamp } from "./common.ts";

// The inventory resource (/inventory): levels per variant and store, their low-stock threshold and
// adjustments. The rules are inventory/levels.ts's.

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

export async function inventoryRoutes(api: Api, { db, outbox }: Ctx): Promise<void> {
  api.get(
    "/inventory",
    {
      config: { scope: "inventory:read" },
      schema: { tags, querystring: listQuery, response: { 200: pageOf(levelOut) } },
    },
    async (req) => listLevels(db, req.query),
  );

  api.get(
    "/inventory/:variantId",
    {
      config: { scope: "inventory:read" },
      schema: { tags, params: levelParams, querystring: storeQuery, response: { 200: levelOut } },
    },
    async (req, reply) => {
      const l = await getLevel(db, req.params.variantId, req.query.storeId);
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
      const l = await setLowStockThreshold(db, {
        variantId: req.params.variantId,
        storeId: req.query.storeId,
        threshold: req.body.lowStockThreshold,
        want: ifMatchVersion(req),
      });
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
      const level = await adjustStock(db, outbox, {
        ...req.body,
        variantId: req.params.variantId,
        storeId: req.query.storeId,
        pointer: "#/delta",
      });
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
    async (req) => ({ data: await listAdjustments(db, req.params.variantId, req.query.storeId) }),
  );
}
