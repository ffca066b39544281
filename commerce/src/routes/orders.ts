import { z } from "zod";
import { ORDER_STATUSES } from "../db/schema.ts";
import { DEFAULT_STORE } from "../db/seed.ts";
import type { Api, Ctx } from "../http/context.ts";
import { etagOf, setEtag } from "../http/etag.ts";
import { type Idempotency, idempotencyClaim, replayStored, type StoredAnswer } from "../http/idempotency.ts";
import { pageOf, pageQuery } from "../http/pagination.ts";
import { shippingAddressSchema } from "../orders/address.ts";
import { placeOrder } from "../orders/place.ts";
import { getOrder, listOrders, ORDER_SORTS, type OrderView } from "../orders/read.ts";
import { currencyCode, idParam, timestamp } from "./common.ts";

// The orders resource: placing one (orders/place.ts: lines priced from the catalogue, tax from the
// localization settings, shipping from the configured methods, stock taken in the same
// transaction, status history from `pending`) and reading them (orders/read.ts). Status changes
// and payments: order-status.ts.

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
const listQuery = pageQuery(ORDER_SORTS).extend({
  status: z.enum(ORDER_STATUSES).optional(),
  customerId: z.string().max(100).optional(),
  createdFrom: z.iso.datetime({ offset: true }).optional().describe("Created at or after (RFC 3339)."),
  createdTo: z.iso.datetime({ offset: true }).optional().describe("Created before (RFC 3339)."),
});

export async function orderRoutes(api: Api, { db, config, outbox }: Ctx): Promise<void> {
  api.get(
    "/orders",
    {
      config: { scope: "orders:read" },
      schema: { tags, querystring: listQuery, response: { 200: pageOf(orderOut) } },
    },
    async (req) => listOrders(db, req.query),
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
    {
      config: { scope: "orders:write", idempotencyInHandler: true },
      schema: { tags, body: orderIn, response: { 201: orderOut } },
    },
    async (req, reply) => {
      // The answer is the order as placed; with an Idempotency-Key it is stored in the order's
      // own transaction (the key's claim), so placing costs one commit.
      let answer: StoredAnswer | undefined;
      const answerOf = (o: OrderView): StoredAnswer => {
        answer = {
          status: 201,
          headers: {
            "content-type": "application/json; charset=utf-8",
            etag: etagOf(o.version),
            location: `/api/v1/orders/${o.id}`,
          },
          body: JSON.stringify(z.encode(orderOut, o)),
        };
        return answer;
      };
      const idem = req.idempotency;
      const o = await placeOrder(
        { db, config, outbox },
        req.body,
        idem && ((o) => idempotencyClaim(idem, answerOf(o))),
      );
      if (!o) return replayStored(db, idem as Idempotency, reply);
      if (idem) idem.stored = true;
      const a = answer ?? answerOf(o);
      // Sent as serialized (a string is not serialized again), so the stored answer is this one.
      return reply
        .code(201)
        .headers(a.headers)
        .send(a.body as never);
    },
  );
}
