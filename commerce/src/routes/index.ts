import type { Api, Ctx } from "../http/context.ts";
import { analyticsRoutes } from "./analytics.ts";
import { credentialRoutes } from "./credentials.ts";
import { customerRoutes } from "./customers.ts";
import { inventoryRoutes } from "./inventory.ts";
import { orderStatusRoutes } from "./order-status.ts";
import { orderRoutes } from "./orders.ts";
import { productRoutes } from "./products.ts";
import { webhookRoutes } from "./webhooks.ts";

// Every /api/v1 resource group (their shared context: http/context.ts).

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
