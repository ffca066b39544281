import type { Selectable } from "kysely";
import type { DB } from "../db/database.ts";
import type { OrderLinesTable, OrderStatus, OrdersTable } from "../db/schema.ts";
import { keyset, page } from "../http/pagination.ts";
import { notFound } from "../http/problem.ts";

// Reading orders as the API, GraphQL and the store show them: the order with its lines and its
// status history.

/** An order with its lines and status history. */
export type OrderView = Selectable<OrdersTable> & {
  lines: Selectable<OrderLinesTable>[];
  history: { from: OrderStatus | null; to: OrderStatus; note: string | null; at: Date }[];
};

/** Orders with lines and history, in the order of `ids` (three queries for any number of orders). */
export async function loadOrders(db: DB, ids: string[]): Promise<OrderView[]> {
  if (!ids.length) return [];
  const [orders, lines, history] = await Promise.all([
    db.selectFrom("orders").selectAll().where("id", "in", ids).execute(),
    db.selectFrom("orderLines").selectAll().where("orderId", "in", ids).orderBy("position").execute(),
    db.selectFrom("orderStatusHistory").selectAll().where("orderId", "in", ids).orderBy("id").execute(),
  ]);
  const byId = new Map(
    orders.map((o) => [o.id, { ...o, lines: [] as OrderView["lines"], history: [] as OrderView["history"] }]),
  );
  for (const l of lines) byId.get(l.orderId)?.lines.push(l);
  for (const h of history)
    byId.get(h.orderId)?.history.push({ from: h.fromStatus, to: h.toStatus, note: h.note, at: h.at });
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** One order (404 when there is none). */
export async function getOrder(db: DB, id: string): Promise<OrderView> {
  const [o] = await loadOrders(db, [id]);
  if (!o) throw notFound("order", id);
  return o;
}

/** A page of orders, newest or largest first or last, filtered (keyset paging). */
export async function listOrders(
  db: DB,
  q: {
    sort: string;
    cursor?: string;
    limit: number;
    status?: OrderStatus;
    customerId?: string;
    createdFrom?: string;
    createdTo?: string;
  },
) {
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
}

/** The orders' sort keys. */
export const ORDER_SORTS = ["createdAt", "totalMinor"] as const;
const SORT = { createdAt: ["createdAt", "timestamptz"], totalMinor: ["totalMinor", "int8"] } as const;
