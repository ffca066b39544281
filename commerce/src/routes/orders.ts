import { z } from "zod";
import type { DB } from "../db/database.ts";
import { ORDER_STATUSES } from "../db/schema.ts";
import { setEtag } from "../http/etag.ts";
import { keyset, page, pageOf, pageQuery } from "../http/pagination.ts";
import { notFound } from "../http/problem.ts";
import { shippingAddressSchema } from "../orders/address.ts";
import { placeOrder } from "../orders/place.ts";
import { currencyCode, idParam, timestamp } from "./common.ts";
import type { Api, Ctx } from "./index.ts";
import { DEFAULT_STORE } from "./products.ts";

// Orders (placing one: orders/place.ts): lines priced from the catalogue, tax from the localization settings, shipping from the
// configured methods, stock taken in the same transaction, status history from `pending`. Status
// changes and payments: order-status.ts.

const tags = ["orders"];
const orderIn = z.object({
  customerId: z.string().max(100).optional(),
  storeId: z.string().max(100).default(DEFAULT_STORE),
  lines: z
    .array(
      z
        .object({
          variantId: z.string().max(100).optional(),
          sku: z.string().max(64).optional(),
          quantity: z.number().int().min(1).max(10_000),
        })
        .refine(
          (l) => (l.variantId === undefined) !== (l.sku === undefined),
          "give exactly one of variantId or sku",
        ),
    )
    .min(1)
    .max(100),
  shippingMethod: z.string().max(63).optional().describe("Name of a configured shipping method."),
  shippingCountry: z
    .string()
    .regex(/^[A-Z]{2}$/)
    .optional()
    .describe(
      "ISO 3166-1 alpha-2 destination; defaults to shippingAddress.country (must match it when both are given).",
    ),
  shippingAddress: shippingAddressSchema.optional(),
});
const lineOut = z.object({
  id: z.string(),
  variantId: z.string(),
  productId: z.string(),
  sku: z.string(),
  title: z.string(),
  quantity: z.number(),
  unitPriceMinor: z.number(),
  totalMinor: z.number(),
});
export const orderOut = z.object({
  id: z.string(),
  storeId: z.string(),
  customerId: z.string().nullable(),
  status: z.enum(ORDER_STATUSES),
  currency: currencyCode,
  subtotalMinor: z.number(),
  taxMinor: z.number(),
  shippingMinor: z.number(),
  totalMinor: z.number(),
  shippingMethod: z.string().nullable(),
  shippingAddress: z
    .object({
      name: z.string(),
      line1: z.string(),
      line2: z.string().optional(),
      city: z.string(),
      region: z.string().optional(),
      postalCode: z.string(),
      country: z.string(),
    })
    .nullable()
    .describe("Where the order ships to (null when none was given)."),
  trackingNumber: z.string().nullable(),
  version: z.number(),
  createdAt: timestamp,
  updatedAt: timestamp,
  lines: z.array(lineOut),
  history: z.array(
    z.object({
      from: z.enum(ORDER_STATUSES).nullable(),
      to: z.enum(ORDER_STATUSES),
      note: z.string().nullable(),
      at: timestamp,
    }),
  ),
});
type OrderOut = z.output<typeof orderOut>;
const listQuery = pageQuery(["createdAt", "totalMinor"] as const).extend({
  status: z.enum(ORDER_STATUSES).optional(),
  customerId: z.string().max(100).optional(),
  createdFrom: z.iso.datetime({ offset: true }).optional().describe("Created at or after (RFC 3339)."),
  createdTo: z.iso.datetime({ offset: true }).optional().describe("Created before (RFC 3339)."),
});
const SORT = { createdAt: ["createdAt", "timestamptz"], totalMinor: ["totalMinor", "int8"] } as const;

/** Orders with lines and history (two queries for any number of orders). */
export async function loadOrders(db: DB, ids: string[]): Promise<OrderOut[]> {
  if (!ids.length) return [];
  const [orders, lines, history] = await Promise.all([
    db.selectFrom("orders").selectAll().where("id", "in", ids).execute(),
    db.selectFrom("orderLines").selectAll().where("orderId", "in", ids).orderBy("position").execute(),
    db.selectFrom("orderStatusHistory").selectAll().where("orderId", "in", ids).orderBy("id").execute(),
  ]);
  const byId = new Map(
    orders.map((o) => [o.id, { ...o, lines: [] as OrderOut["lines"], history: [] as OrderOut["history"] }]),
  );
  for (const l of lines) byId.get(l.orderId)?.lines.push(l);
  for (const h of history)
    byId.get(h.orderId)?.history.push({ from: h.fromStatus, to: h.toStatus, note: h.note, at: h.at });
  return ids.flatMap((id) => byId.get(id) ?? []);
}

export async function getOrder(db: DB, id: string): Promise<OrderOut> {
  const [o] = await loadOrders(db, [id]);
  if (!o) throw notFound("order", id);
  return o;
}

export async function orderRoutes(api: Api, { db, config, outbox }: Ctx): Promise<void> {
  api.get(
    "/orders",
    {
      config: { scope: "orders:read" },
      schema: { tags, querystring: listQuery, response: { 200: pageOf(orderOut) } },
    },
    async (req) => {
      const q = req.query;
      const [column, type] = SORT[q.sort.replace(/^-/, "") as keyof typeof SORT];
      const ks = keyset(`orders.${column}`, "orders.id", type, q.sort, q.cursor);
      let query = db.selectFrom("orders").select(["id", ks.cursorValue.as("cursorValue")]);
      if (ks.where) query = query.where(ks.where);
      if (q.status) query = query.where("status", "=", q.status);
      if (q.customerId) query = query.where("customerId", "=", q.customerId);
      if (q.createdFrom) query = query.where("createdAt", ">=", new Date(q.createdFrom));
      if (q.createdTo) query = query.where("createdAt", "<", new Date(q.createdTo));
      const rows = await query
        .orderBy(ks.orderBy)
        .limit(q.limit + 1)
        .execute();
      const p = page(rows, q.limit, q.sort);
      return {
        data: await loadOrders(
          db,
          p.rows.map((r) => r.id),
        ),
        nextCursor: p.nextCursor,
      };
    },
  );

  api.get(
    "/orders/:id",
    { config: { scope: "orders:read" }, schema: { tags, params: idParam, response: { 200: orderOut } } },
    async (req, reply) => {
      const o = await getOrder(db, req.params.id);
      setEtag(reply, o.version);
      return o;
    },
  );

  api.post(
    "/orders",
    { config: { scope: "orders:write" }, schema: { tags, body: orderIn, response: { 201: orderOut } } },
    async (req, reply) => {
      const id = await placeOrder({ db, config, outbox }, req.body);
      const o = await getOrder(db, id);
      setEtag(reply, o.version);
      return reply.code(201).header("location", `/api/v1/orders/${id}`).send(o);
    },
  );
}
