import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { sql } from "kysely";
import type { DB } from "../db/database.ts";
import { Problem } from "./problem.ts";

// Idempotency-Key on POST (per credential): the first request's response is stored and replayed
// for 24 hours to any retry with the same key and the same request; the same key with another
// request is refused (422), and a retry while the first is still running gets 409. A 5xx is not
// stored, so the client may retry it. Stored in PostgreSQL: a retry may reach another replica.

export const IDEMPOTENCY_TTL = "24 hours";
const REPLAYED_HEADERS = ["content-type", "etag", "location"];

declare module "fastify" {
  interface FastifyRequest {
    idempotency?: { credential: string; key: string };
  }
}

export function installIdempotency(app: FastifyInstance, db: DB): void {
  app.addHook("preHandler", async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.method !== "POST") return;
    const key = req.headers["idempotency-key"];
    if (key === undefined) return;
    if (typeof key !== "string" || key.length < 1 || key.length > 255) {
      throw new Problem(
        422,
        "validation",
        "Invalid request",
        "header Idempotency-Key: must be 1-255 characters",
        {
          errors: [{ pointer: "#/idempotency-key", in: "header", detail: "must be 1-255 characters" }],
        },
      );
    }
    const credential = req.principal?.id ?? "anonymous";
    const requestHash = createHash("sha256")
      .update(`${req.method} ${req.url}\n${JSON.stringify(req.body ?? null)}`)
      .digest("hex");
    await db
      .deleteFrom("idempotencyKeys")
      .where("credential", "=", credential)
      .where("key", "=", key)
      .where("createdAt", "<", sql<Date>`now() - cast(${IDEMPOTENCY_TTL} as interval)`)
      .execute();
    const inserted = await db
      .insertInto("idempotencyKeys")
      .values({ credential, key, requestHash })
      .onConflict((oc) => oc.doNothing())
      .returning("key")
      .executeTakeFirst();
    if (inserted) {
      req.idempotency = { credential, key };
      return;
    }
    const prior = await db
      .selectFrom("idempotencyKeys")
      .selectAll()
      .where("credential", "=", credential)
      .where("key", "=", key)
      .executeTakeFirstOrThrow();
    if (prior.requestHash !== requestHash) {
      throw new Problem(
        422,
        "idempotency-key-reused",
        "Idempotency-Key reused",
        "header Idempotency-Key: this key was used for a different request in the last 24 hours",
        { errors: [{ pointer: "#/idempotency-key", in: "header", detail: "used for a different request" }] },
      );
    }
    if (prior.statusCode === null) {
      throw new Problem(
        409,
        "idempotency-in-progress",
        "Request in progress",
        "a request with this Idempotency-Key is still being processed; retry shortly",
        {},
        { "retry-after": "1" },
      );
    }
    for (const [k, v] of Object.entries(prior.responseHeaders ?? {})) reply.header(k, v);
    reply.header("idempotent-replayed", "true");
    return reply.code(prior.statusCode).send(prior.responseBody ?? "");
  });

  app.addHook("onSend", async (req, reply, payload) => {
    const idem = req.idempotency;
    if (!idem) return payload;
    req.idempotency = undefined;
    const where = db
      .updateTable("idempotencyKeys")
      .where("credential", "=", idem.credential)
      .where("key", "=", idem.key);
    if (reply.statusCode >= 500 || typeof payload !== "string") {
      await db
        .deleteFrom("idempotencyKeys")
        .where("credential", "=", idem.credential)
        .where("key", "=", idem.key)
        .execute();
      return payload;
    }
    const headers: Record<string, string> = {};
    for (const h of REPLAYED_HEADERS) {
      const v = reply.getHeader(h);
      if (v !== undefined) headers[h] = String(v);
    }
    await where
      .set({ statusCode: reply.statusCode, responseBody: payload, responseHeaders: headers })
      .execute();
    return payload;
  });
}

/** Deletes expired records (called periodically). */
export async function purgeIdempotencyKeys(db: DB): Promise<void> {
  await db
    .deleteFrom("idempotencyKeys")
    .where("createdAt", "<", sql<Date>`now() - cast(${IDEMPOTENCY_TTL} as interval)`)
    .execute();
}
