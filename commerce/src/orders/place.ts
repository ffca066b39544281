import { randomUUID } from "node:crypto";
import type { Config } from "../config.ts";
import type { DB } from "../db/database.ts";
import type { ShippingAddress } from "../db/schema.ts";
import { invalidField } from "../http/problem.ts";
import { adjustLevel } from "../inventory/levels.ts";
import type { Outbox } from "../webhooks/outbox.ts";
import { shippingOf, totals } from "./pricing.ts";

// Placing an order, shared by every way in (the REST API, GraphQL through it, the store
// frontend): lines priced from the catalogue, tax and shipping from the settings, stock taken,
// the status history started, the confirmation mail and OrderCreated written in one transaction.

export interface OrderInput {
  customerId?: string;
  storeId: string;
  lines: { variantId?: string; sku?: string; quantity: number }[];
  shippingMethod?: string;
  /** Destination country for the shipping rate; defaults to the address's country. */
  shippingCountry?: string;
  shippingAddress?: ShippingAddress;
}

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

/** Places an order; returns its id. Bad input is a problem naming the field (`#/lines/0/sku`). */
export async function placeOrder(
  { db, config, outbox }: { db: DB; config: Config; outbox: Outbox },
  b: OrderInput,
): Promise<string> {
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
  await db.transaction().execute(async (trx) => {
    if (b.customerId) {
      const c = await trx
        .selectFrom("customers")
        .select("id")
        .where("id", "=", b.customerId)
        .executeTakeFirst();
      if (!c) throw invalidField("#/customerId", `customer ${b.customerId} does not exist`);
    }
    const store = await trx.selectFrom("stores").select("id").where("id", "=", b.storeId).executeTakeFirst();
    if (!store) throw invalidField("#/storeId", `store ${b.storeId} does not exist`);
    const byVariant = b.lines.flatMap((l) => (l.variantId ? [l.variantId] : []));
    const bySku = b.lines.flatMap((l) => (l.sku ? [l.sku] : []));
    const variants = await trx
      .selectFrom("variants")
      .innerJoin("products", "products.id", "variants.productId")
      .select([
        "variants.id",
        "variants.sku",
        "variants.title",
        "variants.priceMinor",
        "variants.currency",
        "variants.productId",
        "products.title as productTitle",
        "products.status",
      ])
      .where((eb) =>
        eb.or([eb("variants.id", "in", [...byVariant, ""]), eb("variants.sku", "in", [...bySku, ""])]),
      )
      .execute();
    const now = new Date();
    const lines = b.lines.map((l, i) => {
      const v = variants.find((x) => (l.variantId ? x.id === l.variantId : x.sku === l.sku));
      const field = l.variantId ? "variantId" : "sku";
      if (!v) throw invalidField(`#/lines/${i}/${field}`, `no variant ${l.variantId ?? l.sku}`);
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
    const t = totals(config, subtotal, shipping);
    const order = {
      id,
      storeId: b.storeId,
      customerId: b.customerId ?? null,
      status: "pending" as const,
      currency,
      ...t,
      shippingMethod: b.shippingMethod ?? null,
      shippingAddress: address ? JSON.stringify(address) : null,
      trackingNumber: null,
      createdAt: now,
      updatedAt: now,
    };
    await trx.insertInto("orders").values(order).execute();
    await trx.insertInto("orderLines").values(lines).execute();
    await trx
      .insertInto("orderStatusHistory")
      .values({ orderId: id, fromStatus: null, toStatus: "pending", note: null, at: now })
      .execute();
    // Stock rows locked in variant order: concurrent orders cannot deadlock on them.
    const byLock = [...lines.entries()].sort((a, b) => a[1].variantId.localeCompare(b[1].variantId));
    for (const [i, l] of byLock) {
      await adjustLevel(trx, outbox, {
        variantId: l.variantId,
        storeId: b.storeId,
        delta: -l.quantity,
        reason: `order ${id}`,
        pointer: `#/lines/${i}/quantity`,
      });
    }
    await outbox.mail?.(trx, "OrderConfirmation", id);
    await outbox.emit(trx, "OrderCreated", {
      ...orderEventData(order),
      lines: lines.map((l) => ({ sku: l.sku, quantity: l.quantity, unitPriceMinor: l.unitPriceMinor })),
    });
  });
  return id;
}
