import type { FastifyInstance, FastifyRequest } from "fastify";
import { ORDER_STATUSES, type OrderStatus } from "../db/schema.ts";
import { TRANSITIONS } from "../orders/pricing.ts";
import { ApiError } from "./api.ts";
import { type AdminCtx, type Form, field, pageCtx, sendPage } from "./context.ts";
import { type Order, OrderPage, OrdersPage } from "./views/orders.ts";

// Orders: list, detail, status changes and refunds, through the API's transitions (which keep the
// history, emit OrderUpdated and return stock on cancellation).

type Q = { status?: string; customerId?: string; cursor?: string; ok?: string };

export function orderRoutes(app: FastifyInstance, c: AdminCtx): void {
  app.get("/admin/orders", async (req, reply) => {
    const q = req.query as Q;
    const status = ORDER_STATUSES.includes(q.status as OrderStatus) ? (q.status as string) : "";
    const r = await c.api.get<{ data: Order[]; nextCursor: string | null }>("/orders", {
      status,
      customerId: q.customerId,
      cursor: q.cursor,
      limit: 25,
      sort: "-createdAt",
    });
    const page = OrdersPage({
      ctx: pageCtx(c, req, reply),
      orders: r.data,
      statuses: ORDER_STATUSES,
      status,
      customerId: q.customerId ?? "",
      cursor: q.cursor ?? "",
      next: r.nextCursor,
    });
    return sendPage(reply, page);
  });

  const orderPage = async (req: FastifyRequest, id: string, error?: string) => {
    const order = await c.api.call<Order>("GET", `/orders/${encodeURIComponent(id)}`);
    const ok = (req.query as Q).ok === "status" ? c.loc.t.orders.statusChanged : undefined;
    return { order, next: TRANSITIONS[order.status as OrderStatus] ?? [], error, ok };
  };
  app.get("/admin/orders/:id", async (req: FastifyRequest<{ Params: { id: string } }>, reply) =>
    sendPage(reply, OrderPage({ ctx: pageCtx(c, req, reply), ...(await orderPage(req, req.params.id)) })),
  );
  app.post(
    "/admin/orders/:id/status",
    async (req: FastifyRequest<{ Params: { id: string }; Body: Form }>, reply) => {
      const { id } = req.params;
      try {
        await c.api.call("POST", `/orders/${encodeURIComponent(id)}/transitions`, {
          to: field(req.body, "to"),
          ...(field(req.body, "note") ? { note: field(req.body, "note") } : {}),
          ...(field(req.body, "trackingNumber") ? { trackingNumber: field(req.body, "trackingNumber") } : {}),
        });
        return reply.redirect(`/admin/orders/${id}?ok=status`, 303);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500 || err.status === 404) throw err;
        return sendPage(
          reply,
          OrderPage({ ctx: pageCtx(c, req, reply), ...(await orderPage(req, id, err.message)) }),
          422,
        );
      }
    },
  );
}
