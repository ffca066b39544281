import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import type { ProductCache } from "../cache/products.ts";
import type { Config } from "../config.ts";
import type { DB } from "../db/database.ts";
import type { Outbox } from "../webhooks/outbox.ts";
import { analyticsRoutes } from "./analytics.ts";
import { credentialRoutes } from "./credentials.ts";
import { customerRoutes } from "./customers.ts";
import { inventoryRoutes } from "./inventory.ts";
import { orderStatusRoutes } from "./order-status.ts";
import { orderRoutes } from "./orders.ts";
import type { ProductOut } from "./product-model.ts";
import { productRoutes } from "./products.ts";
import { webhookRoutes } from "./webhooks.ts";

// Every /api/v1 resource group.

// biome-ignore lint/suspicious/noExplicitAny: the server generics are not what routes depend on
export type Api = FastifyInstance<any, any, any, any, ZodTypeProvider>;
export interface Ctx {
  db: DB;
  config: Config;
  outbox: Outbox;
  /** Product reads (GET /products/{id}), invalidated across replicas. */
  cache: ProductCache<ProductOut>;
}

export async function apiRoutes(api: Api, ctx: Ctx): Promise<void> {
  await credentialRoutes(api, ctx);
  await productRoutes(api, ctx);
  await inventoryRoutes(api, ctx);
  await customerRoutes(api, ctx);
  await orderRoutes(api, ctx);
  await orderStatusRoutes(api, ctx);
  await analyticsRoutes(api, ctx);
  await webhookRoutes(api, ctx);
}
