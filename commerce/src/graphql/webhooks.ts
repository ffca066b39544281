import type { MercuriusLoaders } from "mercurius";
import type { DB } from "../db/database.ts";
import type { Ctx } from "./context.ts";

// The webhook delivery log over GraphQL: the list and one delivery run the REST handlers
// (`GET /webhook-deliveries…`, scope webhooks:read), the replay runs `POST …/{id}/replay`
// (webhooks:write; a new delivery of the same event, so the same webhook-id), and every
// delivery's attempts come from one query per response (a loader), not one per delivery.

/** What the resolvers need from the GraphQL installation (see index.ts). */
export interface Helpers {
  rest: (ctx: Ctx, method: "GET" | "POST", url: string, payload?: object) => Promise<unknown>;
  need: (ctx: Ctx, scope: string) => void;
  qs: (o: Record<string, unknown>) => string;
  page: (first: number) => number;
  conn: (r: { data: unknown[]; nextCursor: string | null }) => {
    nodes: unknown[];
    nextCursor: string | null;
  };
  orNull: <T>(p: Promise<T>) => Promise<T | null>;
}

export const WEBHOOK_SDL = /* GraphQL */ `
  "One attempt to deliver: the receiver's status code, or the error when there was no answer."
  type WebhookAttempt {
    attempt: Int!
    at: String!
    statusCode: Int
    error: String
    durationMs: Int!
  }
  "A delivery of one event to one endpoint; a replay is a new delivery of the same event."
  type WebhookDelivery {
    id: ID!
    "The webhook-id header: the same on every attempt and replay."
    eventId: ID!
    type: String!
    webhook: String!
    url: String!
    "pending, succeeded, failed or cancelled"
    status: String!
    attempts: Int!
    nextAttemptAt: String
    lastStatusCode: Int
    lastError: String
    createdAt: String!
    updatedAt: String!
    "Every attempt, oldest first (batched: one query for all deliveries of a response)."
    attemptLog: [WebhookAttempt!]!
  }
  type WebhookDeliveryConnection {
    nodes: [WebhookDelivery!]!
    nextCursor: String
  }
  type WebhookEndpoint {
    name: String!
    url: String!
    events: [String!]!
    "When it was disabled (a 410 Gone answer); null while enabled."
    disabledAt: String
    disabledReason: String
  }
  extend type Query {
    "The delivery log, newest first; filters as GET /api/v1/webhook-deliveries."
    webhookDeliveries(
      first: Int = 20
      after: String
      status: String
      webhook: String
      type: String
    ): WebhookDeliveryConnection!
    webhookDelivery(id: ID!): WebhookDelivery
    webhookEndpoints: [WebhookEndpoint!]!
  }
  extend type Mutation {
    "Delivers the event again to the same endpoint, with the same webhook-id (not while pending)."
    replayWebhookDelivery(id: ID!): WebhookDelivery!
    "Turns an endpoint disabled by a 410 back on."
    enableWebhookEndpoint(name: String!): WebhookEndpoint!
  }
`;

type Attempt = {
  attempt: number;
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
};
type Q<T> = { obj: T; params: Record<string, unknown> }[];

export function webhookResolvers(h: Helpers, db: DB) {
  const enc = encodeURIComponent;
  const endpoints = async (ctx: Ctx) =>
    ((await h.rest(ctx, "GET", "/webhook-endpoints")) as { data: { name: string }[] }).data;
  const Query = {
    webhookDeliveries: async (
      _: unknown,
      a: { first: number; after?: string; status?: string; webhook?: string; type?: string },
      ctx: Ctx,
    ) =>
      h.conn(
        (await h.rest(
          ctx,
          "GET",
          `/webhook-deliveries?${h.qs({ limit: h.page(a.first), cursor: a.after, status: a.status, webhook: a.webhook, type: a.type })}`,
        )) as { data: unknown[]; nextCursor: string | null },
      ),
    webhookDelivery: (_: unknown, a: { id: string }, ctx: Ctx) =>
      h.orNull(h.rest(ctx, "GET", `/webhook-deliveries/${enc(a.id)}`)),
    webhookEndpoints: (_: unknown, _a: unknown, ctx: Ctx) => endpoints(ctx),
  };
  const Mutation = {
    replayWebhookDelivery: (_: unknown, a: { id: string }, ctx: Ctx) =>
      h.rest(ctx, "POST", `/webhook-deliveries/${enc(a.id)}/replay`),
    enableWebhookEndpoint: async (_: unknown, a: { name: string }, ctx: Ctx) => {
      await h.rest(ctx, "POST", `/webhook-endpoints/${enc(a.name)}/enable`);
      return (await endpoints(ctx)).find((e) => e.name === a.name);
    },
  };
  const loaders: MercuriusLoaders = {
    WebhookDelivery: {
      attemptLog: async (queries: Q<{ id: string; attemptLog?: Attempt[] }>, ctx: Ctx) => {
        h.need(ctx, "webhooks:read");
        // `webhookDelivery(id)` already carries its log from the REST handler; the rest in one query.
        const ids = [...new Set(queries.filter((q) => !q.obj.attemptLog).map((q) => q.obj.id))];
        const rows = ids.length
          ? await db
              .selectFrom("webhookAttempts")
              .select(["deliveryId", "attempt", "at", "statusCode", "error", "durationMs"])
              .where("deliveryId", "in", ids)
              .orderBy("deliveryId")
              .orderBy("attempt")
              .execute()
          : [];
        return queries.map(
          (q) =>
            q.obj.attemptLog ??
            rows
              .filter((r) => r.deliveryId === q.obj.id)
              .map(({ deliveryId: _d, at, ...r }) => ({ ...r, at: new Date(at).toISOString() })),
        );
      },
    },
  };
  return { Query, Mutation, loaders };
}
