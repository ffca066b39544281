import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { sql } from "kysely";
import type { DB } from "../db/database.ts";
import { Problem } from "./problem.ts";

// Idempotency-Key on POST (per credential): the first request's response is stored and replayed
// for 24 hours to any retry with the same key and the same request; the same key with another
// request is refused (422), and a retry while the first is still running gets 409. A 5xx is not
// stored, so the client may retry it. Stored in PostgreSQL: a retry may reach another replica.
// A key whose request has not answered within the request time limit (its process died mid-request)
// is released: the first retry after the limit takes it over and runs, once; the record's creation
// time is the owner's fence, so a late answer of the first request cannot overwrite the retry's.

export const IDEMPOTENCY_TTL = "24 hours";
const REPLAYED_HEADERS = ["content-type", "etag", "location"];

declare module "fastify" {
  interface FastifyRequest {
    idempotency?: { credential: string; key: string; fence: string };
  }
}

export function installIdempotency(app: FastifyInstance, db: DB, timeLimitSeconds: number): void {
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
    // Claims the key: a new one, one whose record expired, or one whose request outlived the time
    // limit without answering (same request only; another request gets 422 below).
    const claimed = await sql<{ fence: string }>`
      insert into idempotency_keys (credential, key, request_hash) values (${credential}, ${key}, ${requestHash})
      on conflict (credential, key) do update
        set request_hash = excluded.request_hash, status_code = null, response_body = null,
            response_headers = null, created_at = clock_timestamp()
        where idempotency_keys.created_at < now() - cast(${IDEMPOTENCY_TTL} as interval)
          or (idempotency_keys.status_code is null and idempotency_keys.request_hash = excluded.request_hash
              and idempotency_keys.created_at < now() - make_interval(secs => ${timeLimitSeconds}))
      returning created_at::text as fence`.execute(db);
    const fence = claimed.rows[0]?.fence;
    if (fence !== undefined) {
      req.idempotency = { credential, key, fence };
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
      .where("key", "=", idem.key)
      .where("createdAt", "=", sql<Date>`${idem.fence}::timestamptz`);
    if (reply.statusCode >= 500 || typeof payload !== "string") {
      await db
        .deleteFrom("idempotencyKeys")
        .where("credential", "=", idem.credential)
        .where("key", "=", idem.key)
        .where("createdAt", "=", sql<Date>`${idem.fence}::timestamptz`)
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
