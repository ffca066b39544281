import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiError } from "./api.ts";
import { type AdminCtx, type Form, field, pageCtx, sendPage } from "./context.ts";
import {
  type Customer,
  CustomersPage,
  type Level,
  type Product,
  ProductPage,
  ProductsPage,
} from "./views/catalog.ts";
import { type Analytics, type LowStock, OverviewPage } from "./views/overview.ts";

// Overview, products with their stock, customers: every read and change goes through the API.

type Page<T> = { data: T[]; nextCursor: string | null };
type Q = { q?: string; cursor?: string; ok?: string };

/** A day (YYYY-MM-DD) in a timezone. */
const dayIn = (d: Date, timeZone: string) => new Intl.DateTimeFormat("en-CA", { timeZone }).format(d);

/** "12.50" → 1250 minor units; undefined when not a price. */
export function parsePrice(s: string): number | undefined {
  const m = /^(\d{1,10})(?:[.,](\d{1,2}))?$/.exec(s.trim());
  if (!m) return undefined;
  return Number(m[1]) * 100 + Number((m[2] ?? "0").padEnd(2, "0"));
}

export function catalogRoutes(app: FastifyInstance, c: AdminCtx): void {
  const tz = c.config.CONFIG_LOCALIZATION?.timezone ?? "UTC";
  const tp = c.loc.t.products;

  app.get("/admin/", async (req, reply) => {
    const now = Date.now();
    const [a, low] = await Promise.all([
      c.api.get<Analytics>("/analytics", {
        from: dayIn(new Date(now - 29 * 86_400_000), tz),
        to: dayIn(new Date(now), tz),
        top: 5,
      }),
      c.api.get<Page<LowStock>>("/inventory", { lowStock: "true", limit: 20, sort: "available" }),
    ]);
    return sendPage(reply, OverviewPage({ ctx: pageCtx(c, req, reply), a, low: low.data }));
  });

  const listProducts = async (req: FastifyRequest, error?: string) => {
    const q = req.query as Q;
    const r = await c.api.get<Page<Product>>("/products", {
      q: q.q,
      cursor: q.cursor,
      limit: 25,
      sort: "title",
    });
    return { products: r.data, next: r.nextCursor, q: q.q ?? "", cursor: q.cursor ?? "", error };
  };
  app.get("/admin/products", async (req, reply) =>
    sendPage(reply, ProductsPage({ ctx: pageCtx(c, req, reply), ...(await listProducts(req)) })),
  );
  app.post("/admin/products", async (req: FastifyRequest<{ Body: Form }>, reply) => {
    const b = req.body;
    const priceMinor = parsePrice(field(b, "price"));
    try {
      if (priceMinor === undefined) throw new ApiError(422, { detail: tp.badPrice });
      const created = await c.api.call<Product>("POST", "/products", {
        title: field(b, "title"),
        status: field(b, "status") || "active",
        variants: [
          {
            sku: field(b, "sku"),
            title: field(b, "title"),
            priceMinor,
            inventory: {
              available: Number(field(b, "stock") || 0),
              lowStockThreshold: Number(field(b, "lowStockThreshold") || 0),
            },
          },
        ],
      });
      return reply.redirect(`/admin/products/${created.id}?ok=created`, 303);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      const page = ProductsPage({ ctx: pageCtx(c, req, reply), ...(await listProducts(req, err.message)) });
      return sendPage(reply, page, 422);
    }
  });

  const productPage = async (req: FastifyRequest, id: string, msg: { error?: string; ok?: string } = {}) => {
    const product = await c.api.call<Product>("GET", `/products/${encodeURIComponent(id)}`);
    const levels = new Map<string, Level>();
    await Promise.all(
      product.variants.map(async (v) => {
        try {
          levels.set(v.id, await c.api.call<Level>("GET", `/inventory/${encodeURIComponent(v.id)}`));
        } catch (err) {
          if (!(err instanceof ApiError) || err.status !== 404) throw err;
        }
      }),
    );
    const ok =
      msg.ok ??
      ({ created: tp.created, saved: tp.saved, stock: tp.stockAdjusted } as Record<string, string>)[
        (req.query as Q).ok ?? ""
      ];
    return { product, levels, error: msg.error, ok };
  };
  app.get("/admin/products/:id", async (req: FastifyRequest<{ Params: { id: string } }>, reply) =>
    sendPage(reply, ProductPage({ ctx: pageCtx(c, req, reply), ...(await productPage(req, req.params.id)) })),
  );
  app.post(
    "/admin/products/:id",
    async (req: FastifyRequest<{ Params: { id: string }; Body: Form }>, reply) => {
      const { id } = req.params;
      try {
        await c.api.call("PATCH", `/products/${encodeURIComponent(id)}`, {
          title: field(req.body, "title"),
          description: field(req.body, "description") || null,
          status: field(req.body, "status"),
        });
        return reply.redirect(`/admin/products/${id}?ok=saved`, 303);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500 || err.status === 404) throw err;
        return sendPage(
          reply,
          ProductPage({
            ctx: pageCtx(c, req, reply),
            ...(await productPage(req, id, { error: err.message })),
          }),
          422,
        );
      }
    },
  );
  app.post(
    "/admin/products/:id/stock",
    async (req: FastifyRequest<{ Params: { id: string }; Body: Form }>, reply) => {
      const { id } = req.params;
      try {
        await c.api.call(
          "POST",
          `/inventory/${encodeURIComponent(field(req.body, "variantId"))}/adjustments`,
          {
            delta: Number(field(req.body, "delta")),
            reason: field(req.body, "reason"),
          },
        );
        return reply.redirect(`/admin/products/${id}?ok=stock`, 303);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500) throw err;
        return sendPage(
          reply,
          ProductPage({
            ctx: pageCtx(c, req, reply),
            ...(await productPage(req, id, { error: err.message })),
          }),
          422,
        );
      }
    },
  );

  app.get("/admin/customers", async (req, reply) => {
    const q = req.query as Q;
    const r = await c.api.get<Page<Customer>>("/customers", { q: q.q, cursor: q.cursor, limit: 25 });
    const page = CustomersPage({
      ctx: pageCtx(c, req, reply),
      customers: r.data,
      q: q.q ?? "",
      cursor: q.cursor ?? "",
      next: r.nextCursor,
    });
    return sendPage(reply, page);
  });
}
