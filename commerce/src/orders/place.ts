import { randomUUID } from "node:crypto";
import { type RawBuilder, sql, type Transaction } from "kysely";
import type { Config } from "../config.ts";
import type { DB } from "../db/database.ts";
import type { Database, ShippingAddress } from "../db/schema.ts";
import { invalidField, notFound, Problem } from "../http/problem.ts";
import type { Outbox } from "../webhooks/outbox.ts";
import { shippingOf, totals } from "./pricing.ts";
import type { OrderView } from "./read.ts";

// Placing an order, shared by every way in (the REST API, GraphQL through it, the store
// frontend): lines priced from the catalogue, tax and shipping from the settings, stock taken,
// the status history started, the confirmation mail and OrderCreated written in one transaction.
//
// Few round trips: one read (variants, store, customer), then in one transaction one statement
// (the caller's claim and the place_order function of migration 0008) that takes the stock with a
// conditional decrement (`available >= quantity`: a row another order holds is re-read when that
// order commits, so concurrent orders on the last units cannot oversell) and writes the order,
// lines, history and adjustments, then the outbox rows. The answer is the order as written,
// built in memory.

export interface OrderInput {
  customerId?: string;
  storeId: string;
  lines: { variantId?: string; sku?: string; quantity: number }[];
  shippingMethod?: string;
  /** Destination country for the shipping rate; defaults to the address's country. */
  shippingCountry?: string;
  shippingAddress?: ShippingAddress;
}

/**
 * A condition the order is placed under, written in the order's statement: a data-modifying
 * statement that returns a row when the order may be placed and none when not (then nothing is
 * written). The REST API claims the request's Idempotency-Key with its answer this way.
 */
export type Claim = (order: OrderView) => RawBuilder<unknown>;

/** The order event payload (OrderCreated, OrderUpdated). */
export const orderEventData = (o: {
  id: string;
  status: string;
  totalMinor: number;
  currency: string;
  customerId: string | null;
}) => ({
  id: o.id,
  status: o.status,
  totalMinor: o.totalMinor,
  currency: o.currency,
  customerId: o.customerId,
});

interface Found {
  store: boolean;
  customer: boolean;
  id: string | null;
  sku: string;
  title: string;
  priceMinor: number;
  currency: string;
  productId: string;
  productTitle: string;
  status: string;
}

interface Taken {
  variantId: string;
  available: number;
  lowStockThreshold: number;
  quantity: number;
}

/** PostgreSQL's deadlock and serialization failures: the transaction may simply be run again. */
const RETRYABLE = new Set(["40P01", "40001"]);
const ATTEMPTS = 3;

/**
 * Places an order and returns it as written; undefined when `claim` was refused (nothing
 * written). Bad input is a problem naming the field (`#/lines/0/sku`), missing stock a 409.
 */
export async function placeOrder(
  { db, config, outbox }: { db: DB; config: Config; outbox: Outbox },
  b: OrderInput,
  claim?: Claim,
): Promise<OrderView | undefined> {
  const currency = config.CONFIG_LOCALIZATION?.currency ?? "USD";
  const methods = config.CONFIG_SHIPPING_METHODS ?? [];
  const id = `ord_${randomUUID()}`;
  const address = b.shippingAddress;
  if (address && b.shippingCountry && b.shippingCountry !== address.country)
    throw invalidField(
      "#/shippingCountry",
      `${b.shippingCountry} is not the shipping address's country ${address.country}`,
    );
  const country = b.shippingCountry ?? address?.country;
  const byVariant = b.lines.flatMap((l) => (l.variantId ? [l.variantId] : []));
  const bySku = b.lines.flatMap((l) => (l.sku ? [l.sku] : []));
  // One row at least (store and customer), with every variant asked for.
  const { rows: found } = await sql<Found>`
    select s.ok as store, c.ok as customer, v.id, v.sku, v.title, v.price_minor, v.currency, v.product_id,
           v.product_title, v.status
      from (select exists (select 1 from stores where id = ${b.storeId}) as ok) s
      cross join (select ${b.customerId ?? null}::text is null
                      or exists (select 1 from customers where id = ${b.customerId ?? null}) as ok) c
      left join lateral (
        select v.id, v.sku, v.title, v.price_minor, v.currency, v.product_id, p.title as product_title, p.status
          from variants v join products p on p.id = v.product_id
         where v.id = any(${byVariant}::text[]) or v.sku = any(${bySku}::text[])) v on true`.execute(db);
  const head = found[0] as Found;
  if (!head.customer) throw invalidField("#/customerId", `customer ${b.customerId} does not exist`);
  if (!head.store) throw invalidField("#/storeId", `store ${b.storeId} does not exist`);
  const now = new Date();
  const lines = b.lines.map((l, i) => {
    const v = found.find((x) => x.id !== null && (l.variantId ? x.id === l.variantId : x.sku === l.sku));
    const field = l.variantId ? "variantId" : "sku";
    if (!v?.id) throw invalidField(`#/lines/${i}/${field}`, `no variant ${l.variantId ?? l.sku}`);
    if (v.status !== "active")
      throw invalidField(`#/lines/${i}/${field}`, `product of ${v.sku} is ${v.status}`);
    if (v.currency !== currency)
      throw invalidField(
        `#/lines/${i}/${field}`,
        `${v.sku} is priced in ${v.currency}, the store sells in ${currency}`,
      );
    return {
      id: `oln_${randomUUID()}`,
      orderId: id,
      position: i,
      variantId: v.id,
      productId: v.productId,
      sku: v.sku,
      title: v.productTitle === v.title ? v.title : `${v.productTitle} — ${v.title}`,
      quantity: l.quantity,
      unitPriceMinor: v.priceMinor,
      totalMinor: v.priceMinor * l.quantity,
    };
  });
  const subtotal = lines.reduce((s, l) => s + l.totalMinor, 0);
  const shipping = shippingOf(methods, b.shippingMethod, country, subtotal, currency);
  const order: OrderView = {
    id,
    storeId: b.storeId,
    customerId: b.customerId ?? null,
    status: "pending",
    currency,
    ...totals(config, subtotal, shipping),
    shippingMethod: b.shippingMethod ?? null,
    shippingAddress: address ?? null,
    trackingNumber: null,
    version: 1,
    createdAt: now,
    updatedAt: now,
    lines,
    history: [{ from: null, to: "pending", note: null, at: now }],
  };
  // Stock taken per variant (a variant on two lines is taken once, by their sum).
  const takes = new Map<string, number>();
  for (const l of lines) takes.set(l.variantId, (takes.get(l.variantId) ?? 0) + l.quantity);

  // place_order's arguments (db/migrations/0008_place_order.ts, locking order in 0010).
  const orderRow = { ...order, lines: undefined, history: undefined };
  const lineRows = lines.map((l) => ({
    id: l.id,
    position: l.position,
    variant_id: l.variantId,
    product_id: l.productId,
    sku: l.sku,
    title: l.title,
    quantity: l.quantity,
    unit_price_minor: l.unitPriceMinor,
    total_minor: l.totalMinor,
  }));
  const takeRows = [...takes].map(([v, quantity]) => ({ v, quantity }));

  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(async (trx) => {
        // The claim first: when it returns no row, place_order is not called and nothing is written.
        const { rows } = await sql<{ taken: Taken[] }>`
          with claim as (${claim ? claim(order) : sql`select 1`})
          select place_order(${JSON.stringify(orderRow)}::jsonb, ${JSON.stringify(lineRows)}::jsonb,
                             ${JSON.stringify(takeRows)}::jsonb) as taken
            from claim`.execute(trx);
        const r = rows[0];
        if (!r) return undefined;
        if (r.taken.length < takes.size) {
          const i = lines.findIndex((l) => !r.taken.some((t) => t.variantId === l.variantId));
          throw await stockProblem(trx, lines[i] as (typeof lines)[number], b.storeId, i);
        }
        for (const t of r.taken) {
          const before = t.available + t.quantity;
          if (t.lowStockThreshold > 0 && t.available <= t.lowStockThreshold && before > t.lowStockThreshold) {
            await outbox.emit(trx, "InventoryLow", {
              variantId: t.variantId,
              storeId: b.storeId,
              sku: lines.find((l) => l.variantId === t.variantId)?.sku,
              available: t.available,
              lowStockThreshold: t.lowStockThreshold,
            });
          }
        }
        await outbox.mail?.(trx, "OrderConfirmation", id);
        await outbox.emit(trx, "OrderCreated", {
          ...orderEventData(order),
          lines: lines.map((l) => ({ sku: l.sku, quantity: l.quantity, unitPriceMinor: l.unitPriceMinor })),
        });
        return order;
      });
    } catch (err) {
      if (attempt < ATTEMPTS && RETRYABLE.has((err as { code?: string }).code ?? "")) continue;
      throw err;
    }
  }
}

/** Why line `i`'s stock could not be taken: no level in the store (404), or too little (409). */
async function stockProblem(
  db: DB | Transaction<Database>,
  l: { variantId: string; sku: string },
  storeId: string,
  i: number,
): Promise<Problem> {
  const level = await db
    .selectFrom("inventoryLevels")
    .select("available")
    .where("variantId", "=", l.variantId)
    .where("storeId", "=", storeId)
    .executeTakeFirst();
  if (!level) return notFound("inventory level of variant", `${l.variantId} in store ${storeId}`);
  const pointer = `#/lines/${i}/quantity`;
  return new Problem(
    409,
    "insufficient-stock",
    "Insufficient stock",
    `lines/${i}/quantity: only ${level.available} of ${l.sku} available`,
    { errors: [{ pointer, in: "body", detail: `only ${level.available} available` }] },
  );
}
