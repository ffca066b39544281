import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { z } from "zod";
import { productChanged } from "../cache/products.ts";
import { maxProducts } from "../config.ts";
import { DEFAULT_STORE } from "../db/seed.ts";
import type { Api, Ctx } from "../http/context.ts";
import { ifMatchVersion, setEtag, versionMismatch } from "../http/etag.ts";
import { keyset, page, pageOf, pageQuery } from "../http/pagination.ts";
import { invalidField, notFound, Problem } from "../http/problem.ts";
import { idParam, ifMatchHeader } from "./common.ts";
import { getProduct, productIn, productOut, productPatch, withVariants } from "./product-model.ts";

// Products with their variants (SKU, price in minor units and currency). Creating a product also
// creates each variant's inventory level in the default store. The plan's product limit is
// checked under a lock, so concurrent creations cannot overshoot it.

const tags = ["products"];

const listQuery = pageQuery(["createdAt", "updatedAt", "title"] as const).extend({
  status: z.enum(["active", "draft", "archived"]).optional(),
  q: z.string().max(200).optional().describe("Case-insensitive substring of the title."),
  sku: z.string().max(64).optional().describe("Only the product with a variant of this SKU."),
});
const SORT_COLUMNS = {
  createdAt: ["created_at", "timestamptz"],
  updatedAt: ["updated_at", "timestamptz"],
  title: ["title", "text"],
} as const;

export async function productRoutes(api: Api, { db, config, cache }: Ctx): Promise<void> {
  const limit = maxProducts(config);
  const defaultCurrency = config.CONFIG_LOCALIZATION?.currency ?? "USD";

  api.get(
    "/products",
    {
      config: { scope: "products:read" },
      schema: { tags, querystring: listQuery, response: { 200: pageOf(productOut) } },
    },
    async (req) => {
      const q = req.query;
      const [column, type] = SORT_COLUMNS[q.sort.replace(/^-/, "") as keyof typeof SORT_COLUMNS];
      const ks = keyset(`products.${column}`, "products.id", type, q.sort, q.cursor);
      let query = db.selectFrom("products").selectAll("products").select(ks.cursorValue.as("cursorValue"));
      if (ks.where) query = query.where(ks.where);
      if (q.status) query = query.where("products.status", "=", q.status);
      if (q.q) query = query.where("products.title", "ilike", `%${q.q.replace(/[\\%_]/g, "\\$&")}%`);
      if (q.sku) {
        const sku = q.sku;
        query = query.where((eb) =>
          eb.exists(
            eb
              .selectFrom("variants")
              .select("id")
              .whereRef("variants.productId", "=", "products.id")
              .where("sku", "=", sku),
          ),
        );
      }
      const rows = await query
        .orderBy(ks.orderBy)
        .limit(q.limit + 1)
        .execute();
      const p = page(rows, q.limit, q.sort);
      return { data: await withVariants(db, p.rows), nextCursor: p.nextCursor };
    },
  );

  api.get(
    "/products/:id",
    { config: { scope: "products:read" }, schema: { tags, params: idParam, response: { 200: productOut } } },
    async (req, reply) => {
      const p = await cache.get(req.params.id, () => getProduct(db, req.params.id));
      setEtag(reply, p.version);
      return p;
    },
  );

  api.post(
    "/products",
    { config: { scope: "products:write" }, schema: { tags, body: productIn, response: { 201: productOut } } },
    async (req, reply) => {
      const body = req.body;
      const skus = new Set<string>();
      body.variants.forEach((v, i) => {
        if (skus.has(v.sku)) throw invalidField(`#/variants/${i}/sku`, `SKU ${v.sku} appears twice`);
        skus.add(v.sku);
      });
      const id = `prod_${randomUUID()}`;
      await db.transaction().execute(async (trx) => {
        if (limit !== undefined) {
          // Serialises creations only while a limit applies; counting is then exact.
          await sql`select pg_advisory_xact_lock(hashtext('commerce.products.limit'))`.execute(trx);
          const { n } = await trx
            .selectFrom("products")
            .select((eb) => eb.fn.countAll<number>().as("n"))
            .executeTakeFirstOrThrow();
          if (Number(n) >= limit) {
            throw new Problem(
              403,
              "plan-limit",
              "Plan limit reached",
              `the ${config.PLATFORM_PLAN} plan allows ${limit.toLocaleString("en-US")} products; delete some or upgrade the plan`,
              { limit, plan: config.PLATFORM_PLAN },
            );
          }
        }
        const taken = await trx
          .selectFrom("variants")
          .select("sku")
          .where("sku", "in", [...skus])
          .execute();
        if (taken.length) {
          const i = body.variants.findIndex((v) => v.sku === taken[0]!.sku);
          throw new Problem(
            409,
            "conflict",
            "Conflict",
            `variants/${i}/sku: SKU ${taken[0]!.sku} already exists`,
            {
              errors: [{ pointer: `#/variants/${i}/sku`, in: "body", detail: "already exists" }],
            },
          );
        }
        const now = new Date();
        await trx
          .insertInto("products")
          .values({
            id,
            title: body.title,
            description: body.description ?? null,
            status: body.status,
            createdAt: now,
            updatedAt: now,
          })
          .execute();
        const variants = body.variants.map((v, position) => ({
          id: `var_${randomUUID()}`,
          productId: id,
          sku: v.sku,
          title: v.title,
          priceMinor: v.priceMinor,
          currency: v.currency ?? defaultCurrency,
          position,
        }));
        await trx.insertInto("variants").values(variants).execute();
        await trx
          .insertInto("inventoryLevels")
          .values(
            variants.map((v, i) => {
              const inv = body.variants[i]!.inventory;
              const available = inv?.available ?? 0;
              const threshold = inv?.lowStockThreshold ?? 0;
              return {
                variantId: v.id,
                storeId: DEFAULT_STORE,
                available,
                lowStockThreshold: threshold,
                low: available <= threshold && threshold > 0,
              };
            }),
          )
          .execute();
      });
      const p = await getProduct(db, id);
      setEtag(reply, p.version);
      return reply.code(201).header("location", `/api/v1/products/${id}`).send(p);
    },
  );

  api.patch(
    "/products/:id",
    {
      config: { scope: "products:write" },
      schema: {
        tags,
        params: idParam,
        headers: ifMatchHeader,
        body: productPatch,
        response: { 200: productOut },
      },
    },
    async (req, reply) => {
      const want = ifMatchVersion(req);
      const { id } = req.params;
      const { variants, ...fields } = req.body;
      await db.transaction().execute(async (trx) => {
        const cur = await trx
          .selectFrom("products")
          .select("version")
          .where("id", "=", id)
          .forUpdate()
          .executeTakeFirst();
        if (!cur) throw notFound("product", id);
        if (want !== undefined && want !== cur.version) throw versionMismatch(cur.version);
        for (const [i, v] of (variants ?? []).entries()) {
          const { id: vid, ...vf } = v;
          if (!Object.keys(vf).length) continue;
          const r = await trx
            .updateTable("variants")
            .set(vf)
            .where("id", "=", vid)
            .where("productId", "=", id)
            .executeTakeFirst();
          if (!r.numUpdatedRows)
            throw invalidField(`#/variants/${i}/id`, `variant ${vid} is not a variant of this product`);
        }
        await trx
          .updateTable("products")
          .set({ ...fields, version: sql`version + 1`, updatedAt: new Date() })
          .where("id", "=", id)
          .execute();
        await productChanged(trx, id);
      });
      const p = await getProduct(db, id);
      setEtag(reply, p.version);
      return p;
    },
  );

  api.delete(
    "/products/:id",
    { config: { scope: "products:write" }, schema: { tags, params: idParam, headers: ifMatchHeader } },
    async (req, reply) => {
      const want = ifMatchVersion(req);
      await db.transaction().execute(async (trx) => {
        const cur = await trx
          .selectFrom("products")
          .select("version")
          .where("id", "=", req.params.id)
          .forUpdate()
          .executeTakeFirst();
        if (!cur) throw notFound("product", req.params.id);
        if (want !== undefined && want !== cur.version) throw versionMismatch(cur.version);
        await trx.deleteFrom("products").where("id", "=", req.params.id).execute();
        await productChanged(trx, req.params.id);
      });
      return reply.code(204).send();
    },
  );
}
