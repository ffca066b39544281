import { controlledBy } from "../../runtime/owners.ts";
import type { ReconcileContext } from "../../runtime/types.ts";
import { readChild } from "./children.ts";
import { nameOf, type PlatformInputs } from "./desired/common.ts";
import { edgeMode, middlewareNames, TRAEFIK_API_VERSION } from "./desired/edge.ts";

/**
 * Deletes this platform's edge Middlewares once its Ingress is no longer served by Traefik (its
 * class changed): they would otherwise linger until the platform is deleted. Only asked when the
 * Middleware CRD exists.
 */
export async function pruneMiddlewares(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  inp: PlatformInputs,
): Promise<void> {
  if (!inp.features.edge?.traefikMiddleware || edgeMode(inp).kind === "traefik") return;
  const ns = inp.platform.metadata.namespace ?? "";
  for (const name of Object.values(middlewareNames(nameOf(inp)))) {
    const l = await readChild(ctx, cached, TRAEFIK_API_VERSION, "Middleware", ns, name);
    if (!l || !controlledBy(l, inp.platform.metadata.uid)) continue;
    await ctx.client.delete(TRAEFIK_API_VERSION, "Middleware", ns, name);
    ctx.log.info({ platform: nameOf(inp), kind: "Middleware", name }, "deleted child");
  }
}
