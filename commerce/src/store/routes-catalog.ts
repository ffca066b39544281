import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { decodeCursor, getProduct, listProducts } from "./catalog.ts";
import type { Store } from "./context.ts";
import { HomeBody, ListingBody, ProductBody } from "./views/catalog.ts";
import { ErrorBody } from "./views/layout.ts";

// Home, listing with search and pages, product page.

const listQuery = z.object({
  q: z.string().max(100).catch("").default(""),
  after: z.string().max(600).optional().catch(undefined),
  before: z.string().max(600).optional().catch(undefined),
});

export async function catalogRoutes(app: FastifyInstance, store: Store): Promise<void> {
  const { db, loc } = store;
  const { t } = loc;

  app.get("/", async (req, reply) => {
    const { products } = await listProducts(db, "");
    return store.page(req, reply, store.loc.store.name, (ctx) =>
      HomeBody({ ctx, featured: products.slice(0, 8) }),
    );
  });

  app.get("/products", async (req, reply) => {
    const { q, after, before } = listQuery.parse(req.query ?? {});
    const query = q.trim();
    const r = await listProducts(db, query, { after: decodeCursor(after), before: decodeCursor(before) });
    return store.page(
      req,
      reply,
      query ? t.searchTitle(query) : t.products,
      (ctx) => ListingBody({ ctx, q: query, ...r }),
      { q: query },
    );
  });

  app.get<{ Params: { id: string } }>("/products/:id", async (req, reply) => {
    const p = req.params.id.length <= 100 ? await getProduct(db, req.params.id) : undefined;
    if (!p) {
      return store.page(
        req,
        reply,
        t.notFound,
        () => ErrorBody({ loc, status: 404, message: t.productGone }),
        { status: 404 },
      );
    }
    const error = (req.query as { error?: string }).error === "stock" ? t.chooseInStock : undefined;
    return store.page(req, reply, p.title, (ctx) => ProductBody({ ctx, p, error }));
  });
}
