import type { FastifyInstance, FastifyRequest } from "fastify";
import { ORDER_STATUSES, type OrderStatus } from "../db/schema.ts";
import { TRANSITIONS } from "../orders/pricing.ts";
import { ApiError } from "./api.ts";
import { type AdminCtx, type Form, field, pageCtx, sendPage } from "./context.ts";
import { type Order, OrderPage, type OrderPayment, OrdersPage } from "./views/orders.ts";

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
    const { data: payments } = await c.api.call<{ data: OrderPayment[] }>(
      "GET",
      `/orders/${encodeURIComponent(id)}/payments`,
    );
    const q = (req.query as Q).ok;
    const t = c.loc.t.orders;
    const ok = q === "status" ? t.statusChanged : q === "payment" ? t.paymentRecorded : undefined;
    return { order, payments, next: TRANSITIONS[order.status as OrderStatus] ?? [], error, ok };
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
  // Bank transfers marked received and manual captures, through the API (payment.received and
  // the order's change come from there).
  app.post(
    "/admin/orders/:id/payments/:paymentId/:action",
    async (req: FastifyRequest<{ Params: { id: string; paymentId: string; action: string } }>, reply) => {
      const { id, paymentId, action } = req.params;
      if (action !== "received" && action !== "capture") return reply.callNotFound();
      try {
        await c.api.call(
          "POST",
          `/orders/${encodeURIComponent(id)}/payments/${encodeURIComponent(paymentId)}/${action}`,
        );
        return reply.redirect(`/admin/orders/${encodeURIComponent(id)}?ok=payment`, 303);
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
