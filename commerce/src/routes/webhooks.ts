import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { Api, Ctx } from "../http/context.ts";
import { keyset, page, pageOf, pageQuery } from "../http/pagination.ts";
import { notFound, Problem } from "../http/problem.ts";
import { idParam, timestamp } from "./common.ts";

// The webhook delivery log (every delivery and its attempts), manual replay, and the endpoints'
// state (an endpoint that answered 410 Gone is disabled until enabled again here).

const tags = ["webhooks"];
const STATUSES = ["pending", "succeeded", "failed", "cancelled"] as const;
const deliveryOut = z.object({
  id: z.string(),
  eventId: z.string().describe("The webhook-id header: the same on every attempt and replay."),
  type: z.string(),
  webhook: z.string(),
  url: z.string(),
  status: z.enum(STATUSES),
  attempts: z.number(),
  nextAttemptAt: timestamp.nullable(),
  lastStatusCode: z.number().nullable(),
  lastError: z.string().nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
});
const attemptOut = z.object({
  attempt: z.number(),
  at: timestamp,
  statusCode: z.number().nullable(),
  error: z.string().nullable(),
  durationMs: z.number(),
});
const listQuery = pageQuery(["createdAt"] as const).extend({
  status: z.enum(STATUSES).optional(),
  webhook: z.string().max(63).optional(),
  type: z.string().max(63).optional(),
});

export async function webhookRoutes(api: Api, { db, outbox }: Ctx): Promise<void> {
  const base = () =>
    db
      .selectFrom("webhookDeliveries as d")
      .innerJoin("webhookEvents as e", "e.id", "d.eventId")
      .selectAll("d")
      .select("e.type");

  api.get(
    "/webhook-deliveries",
    {
      config: { scope: "webhooks:read" },
      schema: { tags, querystring: listQuery, response: { 200: pageOf(deliveryOut) } },
    },
    async (req) => {
      const q = req.query;
      const ks = keyset("d.createdAt", "d.id", "timestamptz", q.sort, q.cursor);
      let query = base().select(ks.cursorValue.as("cursorValue"));
      if (ks.where) query = query.where(ks.where);
      if (q.status) query = query.where("d.status", "=", q.status);
      if (q.webhook) query = query.where("d.webhook", "=", q.webhook);
      if (q.type) query = query.where("e.type", "=", q.type);
      const rows = await query
        .orderBy(ks.orderBy)
        .limit(q.limit + 1)
        .execute();
      const p = page(rows, q.limit, q.sort);
      return { data: p.rows, nextCursor: p.nextCursor };
    },
  );

  api.get(
    "/webhook-deliveries/:id",
    {
      config: { scope: "webhooks:read" },
      schema: {
        tags,
        params: idParam,
        response: { 200: deliveryOut.extend({ attemptLog: z.array(attemptOut) }) },
      },
    },
    async (req) => {
      const d = await base().where("d.id", "=", req.params.id).executeTakeFirst();
      if (!d) throw notFound("webhook delivery", req.params.id);
      const attemptLog = await db
        .selectFrom("webhookAttempts")
        .selectAll()
        .where("deliveryId", "=", d.id)
        .orderBy("attempt")
        .execute();
      return { ...d, attemptLog };
    },
  );

  api.post(
    "/webhook-deliveries/:id/replay",
    {
      config: { scope: "webhooks:write" },
      schema: { tags, params: idParam, response: { 202: deliveryOut } },
    },
    async (req, reply) => {
      const id = await db.transaction().execute(async (trx) => {
        const d = await trx
          .selectFrom("webhookDeliveries")
          .selectAll()
          .where("id", "=", req.params.id)
          .executeTakeFirst();
        if (!d) throw notFound("webhook delivery", req.params.id);
        if (d.status === "pending") {
          throw new Problem(
            409,
            "conflict",
            "Conflict",
            `delivery ${d.id} is still pending; it will be attempted`,
          );
        }
        // A new delivery of the same event: same webhook-id, so receivers can deduplicate.
        const now = new Date();
        const nid = `dlv_${randomUUID().replaceAll("-", "")}`;
        await trx
          .insertInto("webhookDeliveries")
          .values({
            id: nid,
            eventId: d.eventId,
            webhook: d.webhook,
            url: d.url,
            status: "pending",
            nextAttemptAt: now,
            createdAt: now,
            updatedAt: now,
          })
          .execute();
        await outbox.enqueue?.(trx, [{ id: nid, webhook: d.webhook }]);
        return nid;
      });
      const d = await base().where("d.id", "=", id).executeTakeFirstOrThrow();
      return reply.code(202).send(d);
    },
  );

  api.get(
    "/webhook-endpoints",
    {
      config: { scope: "webhooks:read" },
      schema: {
        tags,
        response: {
          200: z.object({
            data: z.array(
              z.object({
                name: z.string(),
                url: z.string(),
                events: z.array(z.string()),
                disabledAt: timestamp.nullable(),
                disabledReason: z.string().nullable(),
              }),
            ),
          }),
        },
      },
    },
    async () => {
      const state = await db.selectFrom("webhookEndpoints").selectAll().execute();
      return {
        data: outbox.webhooks.map((w) => {
          const s = state.find((x) => x.name === w.name);
          return {
            name: w.name,
            url: w.url,
            events: w.events,
            disabledAt: s?.disabledAt ?? null,
            disabledReason: s?.disabledReason ?? null,
          };
        }),
      };
    },
  );

  api.post(
    "/webhook-endpoints/:name/enable",
    { config: { scope: "webhooks:write" }, schema: { tags, params: z.object({ name: z.string().max(63) }) } },
    async (req, reply) => {
      if (!outbox.webhooks.some((w) => w.name === req.params.name))
        throw notFound("webhook", req.params.name);
      await db
        .updateTable("webhookEndpoints")
        .set({ disabledAt: null, disabledReason: null })
        .where("name", "=", req.params.name)
        .execute();
      return reply.code(204).send();
    },
  );
}
