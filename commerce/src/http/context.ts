import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import type { ProductCache } from "../cache/products.ts";
import type { Config } from "../config.ts";
import type { DB } from "../db/database.ts";
import type { ProductOut } from "../routes/product-model.ts";
import type { Outbox } from "../webhooks/outbox.ts";

// What every /api/v1 route module is given: the fastify instance typed for zod schemas and the
// service's shared parts. In a module of its own so route modules never import the file that
// registers them (routes/index.ts).

// biome-ignore lint/suspicious/noExplicitAny: the server generics are not what routes depend on
export type Api = FastifyInstance<any, any, any, any, ZodTypeProvider>;
export interface Ctx {
  db: DB;
  config: Config;
  outbox: Outbox;
  /** Product reads (GET /products/{id}), invalidated across replicas. */
  cache: ProductCache<ProductOut>;
  /** Issued API keys' cache: a key revoked here is dropped at once (others drop it on NOTIFY). */
  keys: { forgetKey(hash: string): void };
}
