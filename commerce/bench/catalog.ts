import Fastify from "fastify";
import pg from "pg";

// The catalog the API benchmarks read (2,000 products with one variant and stock each) and the
// bare fastify + pg handler they compare GET /api/v1/products with.

/** Inserts the benchmark's products, variants and stock. */
export async function seedCatalog(pool: pg.Pool, stock = 1_000_000_000): Promise<void> {
  await pool.query(`
    insert into products (id, title, status, created_at, updated_at)
      select 'prod_' || g, 'Product ' || g, 'active', now() - g * interval '1 second', now() from generate_series(1, 2000) g;
    insert into variants (id, product_id, sku, title, price_minor, currency, position)
      select 'var_' || g, 'prod_' || g, 'SKU-' || g, 'Default', 1000 + g, 'USD', 0 from generate_series(1, 2000) g;
    insert into inventory_levels (variant_id, store_id, available, low_stock_threshold)
      select 'var_' || g, 'default', ${stock}, 0 from generate_series(1, 2000) g;
    analyze;`);
}

/**
 * The bare baseline, listening on loopback: the same page query and variants query as
 * GET /api/v1/products?limit=50, JSON out, no auth, limits or validation. Its URL is `url`.
 */
export async function bareProducts(dbUrl: string, poolSize: number) {
  const bare = Fastify({ logger: false });
  const pool = new pg.Pool({ connectionString: dbUrl, max: poolSize });
  bare.get("/products", async () => {
    const page = await pool.query(
      "select *, created_at::text as cursor_value from products order by created_at desc, id desc limit 51",
    );
    const ids = page.rows.slice(0, 50).map((r) => r.id);
    const variants = await pool.query("select * from variants where product_id = any($1) order by position", [
      ids,
    ]);
    return {
      data: page.rows
        .slice(0, 50)
        .map((p) => ({ ...p, variants: variants.rows.filter((v) => v.product_id === p.id) })),
    };
  });
  await bare.listen({ port: 0, host: "127.0.0.1" });
  return {
    url: `http://127.0.0.1:${(bare.server.address() as { port: number }).port}/products`,
    close: async () => {
      await bare.close();
      await pool.end();
    },
  };
}
