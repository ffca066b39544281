import { sql } from "kysely";
import { z } from "zod";
import type { Api, Ctx } from "../http/context.ts";
import { invalidField } from "../http/problem.ts";
import { SOLD } from "../orders/pricing.ts";

// Analytics computed in SQL over a date range (days in the store's timezone, both ends included).
// An order counts as a sale while it is paid, fulfilled, shipped or delivered (not pending,
// cancelled or refunded); revenue is its total (tax and shipping included) in the store currency.

const tags = ["analytics"];
const date = z.iso.date().describe("A day, YYYY-MM-DD, in the store's timezone.");
const query = z.object({ from: date, to: date, top: z.coerce.number().int().min(1).max(100).default(10) });
const out = z.object({
  from: z.string(),
  to: z.string(),
  timezone: z.string(),
  currency: z.string(),
  revenueMinor: z.number(),
  orders: z.number(),
  averageOrderValueMinor: z.number().describe("Revenue / orders, rounded; 0 without orders."),
  newCustomers: z.number(),
  byDay: z.array(z.object({ date: z.string(), revenueMinor: z.number(), orders: z.number() })),
  topProducts: z.array(
    z.object({ productId: z.string(), title: z.string(), quantity: z.number(), revenueMinor: z.number() }),
  ),
});

export async function analyticsRoutes(api: Api, { db, config }: Ctx): Promise<void> {
  const tz = config.CONFIG_LOCALIZATION?.timezone ?? "UTC";
  const currency = config.CONFIG_LOCALIZATION?.currency ?? "USD";

  api.get(
    "/analytics",
    { config: { scope: "analytics:read" }, schema: { tags, querystring: query, response: { 200: out } } },
    async (req) => {
      const { from, to, top } = req.query;
      const days = (Date.parse(to) - Date.parse(from)) / 86_400_000;
      if (days < 0) throw invalidField("#/to", "must not be before from");
      if (days > 366) throw invalidField("#/to", "the range is at most 366 days");
      // [start, end) as instants: midnight of `from` and of the day after `to`, in the store zone.
      const start = sql`(cast(${from} as date)::timestamp at time zone ${tz})`;
      const end = sql`((cast(${to} as date) + 1)::timestamp at time zone ${tz})`;
      const sold = (o: string) =>
        sql`${sql.ref(`${o}.status`)} in (${sql.join(SOLD)}) and ${sql.ref(`${o}.createdAt`)} >= ${start} and ${sql.ref(`${o}.createdAt`)} < ${end}`;

      const byDay = await sql<{ date: string; revenueMinor: number; orders: number }>`
        with d as (select generate_series(cast(${from} as date), cast(${to} as date), interval '1 day')::date as day),
        s as (select id, total_minor, (created_at at time zone ${tz})::date as day from orders where ${sold("orders")})
        select d.day::text as date, coalesce(sum(s.total_minor), 0)::bigint as "revenueMinor", count(s.id)::int as orders
        from d left join s on s.day = d.day group by d.day order by d.day`.execute(db);
      const topProducts = await sql<{
        productId: string;
        title: string;
        quantity: number;
        revenueMinor: number;
      }>`
        select l.product_id as "productId", coalesce(max(p.title), max(l.title)) as title,
               sum(l.quantity)::bigint as quantity, sum(l.total_minor)::bigint as "revenueMinor"
        from order_lines l join orders o on o.id = l.order_id left join products p on p.id = l.product_id
        where ${sold("o")}
        group by l.product_id order by "revenueMinor" desc, quantity desc, l.product_id limit ${top}`.execute(
        db,
      );
      const customers = await sql<{ n: number }>`
        select count(*)::int as n from customers where created_at >= ${start} and created_at < ${end}`.execute(
        db,
      );

      const revenueMinor = byDay.rows.reduce((s, d) => s + d.revenueMinor, 0);
      const orders = byDay.rows.reduce((s, d) => s + d.orders, 0);
      return {
        from,
        to,
        timezone: tz,
        currency,
        revenueMinor,
        orders,
        averageOrderValueMinor: orders ? Math.round(revenueMinor / orders) : 0,
        newCustomers: customers.rows[0]?.n ?? 0,
        byDay: byDay.rows,
        topProducts: topProducts.rows,
      };
    },
  );
}
