import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyReply } from "fastify";
import { GraphQLError, getNullableType, isListType } from "graphql";
import { getComplexity } from "graphql-query-complexity";
import mercurius, { type IResolvers, type MercuriusLoaders } from "mercurius";
import { covers } from "../auth/scopes.ts";
import type { DB } from "../db/database.ts";
import type { RateLimiter } from "../http/ratelimit.ts";
import type { Ctx } from "./context.ts";
import { SDL } from "./schema.ts";
import { WEBHOOK_SDL, webhookResolvers } from "./webhooks.ts";

// GraphQL at /graphql (mercurius) over the same model and auth as /api/v1. Top-level fields and
// mutations run the REST handlers in-process (fastify inject with the caller's credential), so
// validation, scopes, idempotency, events and errors have one implementation; nested relations
// (variant stock, an order's customer, a customer's orders) are batched with mercurius loaders.
// Each query has a cost (1 per field, lists and connections times their `first`, else 10), reported in
// extensions.cost, refused above MAX_COST and charged to the credential's rate limit.

export const MAX_COST = 1000;
export const MAX_DEPTH = 8;
const LIST_GUESS = 10;

export async function installGraphql(
  app: FastifyInstance,
  deps: { db: DB; limiter: RateLimiter; internalToken: string },
) {
  const { db, limiter } = deps;

  /** Runs a REST call as the GraphQL caller; a problem answer becomes a GraphQL error. */
  const rest = async (ctx: Ctx, method: "GET" | "POST", url: string, payload?: object) => {
    const r = await app.inject({
      method,
      url: `/api/v1${url}`,
      headers: {
        authorization: ctx.reply.request.headers.authorization ?? "",
        "x-internal-request": deps.internalToken,
        ...(payload ? { "content-type": "application/json" } : {}),
      },
      ...(payload ? { payload: JSON.stringify(payload) } : {}),
    });
    const body = r.body ? JSON.parse(r.body) : null;
    if (r.statusCode >= 400) {
      throw new GraphQLError(body?.detail ?? `HTTP ${r.statusCode}`, {
        extensions: { code: body?.type?.split("/").pop(), status: r.statusCode, problem: body },
      });
    }
    return body;
  };
  const need = (ctx: Ctx, scope: string) => {
    if (!covers(ctx.reply.request.principal?.scopes ?? [], scope)) {
      throw new GraphQLError(`this credential lacks the scope ${scope}`, {
        extensions: { code: "FORBIDDEN", requiredScope: scope },
      });
    }
  };
  const qs = (o: Record<string, unknown>) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== null) p.set(k, String(v));
    return p.toString();
  };
  const page = (first: number) => Math.min(Math.max(first, 1), 100);
  const conn = (r: { data: unknown[]; nextCursor: string | null }) => ({
    nodes: r.data,
    nextCursor: r.nextCursor,
  });
  const orNull = async <T>(p: Promise<T>) =>
    p.catch((e: GraphQLError) => (e.extensions?.status === 404 ? null : Promise.reject(e)));
  const webhooks = webhookResolvers({ rest, need, qs, page, conn, orNull }, db);

  const resolvers: IResolvers = {
    Query: {
      products: async (
        _: unknown,
        a: { first: number; after?: string; status?: string; q?: string },
        ctx: Ctx,
      ) =>
        conn(
          await rest(
            ctx,
            "GET",
            `/products?${qs({ limit: page(a.first), cursor: a.after, status: a.status, q: a.q })}`,
          ),
        ),
      product: (_: unknown, a: { id: string }, ctx: Ctx) =>
        orNull(rest(ctx, "GET", `/products/${encodeURIComponent(a.id)}`)),
      customers: async (_: unknown, a: { first: number; after?: string }, ctx: Ctx) =>
        conn(await rest(ctx, "GET", `/customers?${qs({ limit: page(a.first), cursor: a.after })}`)),
      customer: (_: unknown, a: { id: string }, ctx: Ctx) =>
        orNull(rest(ctx, "GET", `/customers/${encodeURIComponent(a.id)}`)),
      orders: async (_: unknown, a: { first: number; after?: string; status?: string }, ctx: Ctx) =>
        conn(
          await rest(
            ctx,
            "GET",
            `/orders?${qs({ limit: page(a.first), cursor: a.after, status: a.status })}`,
          ),
        ),
      order: (_: unknown, a: { id: string }, ctx: Ctx) =>
        orNull(rest(ctx, "GET", `/orders/${encodeURIComponent(a.id)}`)),
      analytics: (_: unknown, a: { from: string; to: string }, ctx: Ctx) =>
        rest(ctx, "GET", `/analytics?${qs(a)}`),
      ...webhooks.Query,
    },
    Mutation: {
      createProduct: (
        _: unknown,
        { input }: { input: { variants: Record<string, unknown>[] } & Record<string, unknown> },
        ctx: Ctx,
      ) =>
        rest(ctx, "POST", "/products", {
          ...input,
          variants: input.variants.map(({ available, lowStockThreshold, ...v }) => ({
            ...v,
            ...(available !== undefined || lowStockThreshold !== undefined
              ? { inventory: { available: available ?? 0, lowStockThreshold: lowStockThreshold ?? 0 } }
              : {}),
          })),
        }),
      createCustomer: (_: unknown, a: object, ctx: Ctx) => rest(ctx, "POST", "/customers", a),
      createOrder: (_: unknown, { input }: { input: object }, ctx: Ctx) =>
        rest(ctx, "POST", "/orders", input),
      transitionOrder: (_: unknown, { id, ...b }: { id: string }, ctx: Ctx) =>
        rest(ctx, "POST", `/orders/${encodeURIComponent(id)}/transitions`, b),
      adjustInventory: (_: unknown, { variantId, ...b }: { variantId: string }, ctx: Ctx) =>
        rest(ctx, "POST", `/inventory/${encodeURIComponent(variantId)}/adjustments`, b),
      ...webhooks.Mutation,
    },
  };

  type Q<T> = { obj: T; params: Record<string, unknown> }[];
  /** A row read here as the REST handlers write it: timestamps as RFC 3339 (GraphQL's String of a Date would be its epoch milliseconds). */
  const wire = <T extends object>(row: T) =>
    Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v]));
  const loaders: MercuriusLoaders = {
    Variant: {
      inventory: async (queries: Q<{ id: string }>, ctx: Ctx) => {
        need(ctx, "inventory:read");
        const rows = await db
          .selectFrom("inventoryLevels")
          .selectAll()
          .where("storeId", "=", "default")
          .where(
            "variantId",
            "in",
            queries.map((q) => q.obj.id),
          )
          .execute();
        return queries.map((q) => rows.find((r) => r.variantId === q.obj.id) ?? null);
      },
    },
    Order: {
      customer: async (queries: Q<{ customerId: string | null }>, ctx: Ctx) => {
        need(ctx, "customers:read");
        const ids = [...new Set(queries.flatMap((q) => (q.obj.customerId ? [q.obj.customerId] : [])))];
        const rows = ids.length
          ? await db.selectFrom("customers").selectAll().where("id", "in", ids).execute()
          : [];
        return queries.map((q) => {
          const r = rows.find((c) => c.id === q.obj.customerId);
          return r ? wire(r) : null;
        });
      },
    },
    Customer: {
      orders: async (queries: Q<{ id: string }>, ctx: Ctx) => {
        need(ctx, "orders:read");
        const ids = queries.map((q) => q.obj.id);
        const first = Math.min(Number(queries[0]?.params.first ?? 10), 100);
        // The newest `first` orders of every customer in one query (a window per customer).
        const rows = await db
          .selectFrom((eb) =>
            eb
              .selectFrom("orders")
              .selectAll()
              .select((e) =>
                e.fn
                  .agg<number>("row_number")
                  .over((o) => o.partitionBy("customerId").orderBy("createdAt", "desc"))
                  .as("rn"),
              )
              .where("customerId", "in", ids)
              .as("o"),
          )
          .selectAll()
          .where("rn", "<=", first)
          .execute();
        const lines = rows.length
          ? await db
              .selectFrom("orderLines")
              .selectAll()
              .where(
                "orderId",
                "in",
                rows.map((r) => r.id),
              )
              .orderBy("position")
              .execute()
          : [];
        return queries.map((q) =>
          rows
            .filter((r) => r.customerId === q.obj.id)
            .map((r) => ({ ...wire(r), lines: lines.filter((l) => l.orderId === r.id) })),
        );
      },
    },
  };

  await app.register(mercurius, {
    schema: [SDL, WEBHOOK_SDL],
    resolvers,
    loaders: { ...loaders, ...webhooks.loaders },
    queryDepth: MAX_DEPTH,
    graphiql: false,
    path: "/graphql",
  });

  app.graphql.addHook("preExecution", async (schema, document, context, variables) => {
    const ctx = context as unknown as Ctx & { cost?: number };
    const cost = getComplexity({
      schema,
      query: document,
      variables: (variables ?? {}) as Record<string, unknown>,
      estimators: [
        ({ field, args, childComplexity }) => {
          // A connection costs its page size times a node; its `nodes` list is that page.
          const connection = getNullableType(field.type).toString().endsWith("Connection");
          const list = !connection && field.name !== "nodes" && isListType(getNullableType(field.type));
          const n = typeof args.first === "number" ? Math.min(Math.max(args.first, 1), 100) : LIST_GUESS;
          return 1 + (connection || list ? childComplexity * n : childComplexity);
        },
      ],
    });
    ctx.cost = cost;
    if (cost > MAX_COST) {
      throw new GraphQLError(
        `query cost ${cost} exceeds the limit of ${MAX_COST}; ask for fewer items or fields`,
        {
          extensions: {
            code: "MAX_COST_EXCEEDED",
            cost: { requestedQueryCost: cost, maximumAvailable: MAX_COST },
          },
        },
      );
    }
    const principal = ctx.reply.request.principal;
    const over = principal ? await limiter.charge(ctx.reply as never, principal.id, cost) : undefined;
    if (over) {
      for (const [k, v] of Object.entries(over.headers)) (ctx.reply as unknown as FastifyReply).header(k, v);
      throw new mercurius.ErrorWithProps(over.message, { code: "RATE_LIMITED" }, 429);
    }
  });
  app.graphql.addHook("onResolution", async (execution, context) => {
    const cost = (context as unknown as { cost?: number }).cost;
    if (cost !== undefined) {
      execution.extensions = {
        ...execution.extensions,
        cost: { requestedQueryCost: cost, maximumCost: MAX_COST },
      };
    }
  });
}

export const newInternalToken = () => randomBytes(24).toString("base64url");
