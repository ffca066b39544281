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
//
// A route with `config.idempotencyInHandler` claims the key itself, in the transaction of its
// change, together with its answer (idempotencyClaim): no write of its own before and after the
// change, and a retry while the first runs waits for the first's outcome instead of getting 409.

export const IDEMPOTENCY_TTL = "24 hours";
const REPLAYED_HEADERS = ["content-type", "etag", "location"];

/** The Idempotency-Key of a request being answered. */
export interface Idempotency {
  credential: string;
  key: string;
  requestHash: string;
  /** Creation time of the record this request owns (claimed in the hook). */
  fence?: string;
  /** The handler claims the key in its own transaction (config.idempotencyInHandler). */
  inHandler?: boolean;
  /** The answer is stored (or replayed): nothing left for onSend to write. */
  stored?: boolean;
}

/** An answer as stored for replay. */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

declare module "fastify" {
  interface FastifyRequest {
    idempotency?: Idempotency;
  }
  interface FastifyContextConfig {
    /** The handler stores its answer with idempotencyClaim in its own transaction. */
    idempotencyInHandler?: boolean;
  }
}

/**
 * The statement that claims `idem` with its answer: it returns a row when the key was free (or
 * its record expired) and none when another request holds it. In the change's transaction, a
 * concurrent request with the same key waits on it until the first commits or rolls back.
 */
export function idempotencyClaim(idem: Idempotency, a: StoredAnswer) {
  return sql`insert into idempotency_keys (credential, key, request_hash, status_code, response_body, response_headers)
    values (${idem.credential}, ${idem.key}, ${idem.requestHash}, ${a.status}, ${a.body}, ${JSON.stringify(a.headers)}::jsonb)
    on conflict (credential, key) do update
      set request_hash = excluded.request_hash, status_code = excluded.status_code,
          response_body = excluded.response_body, response_headers = excluded.response_headers,
          created_at = clock_timestamp()
      where idempotency_keys.created_at < now() - cast(${IDEMPOTENCY_TTL} as interval)
    returning 1`;
}

/** Answers with the stored record of `idem`'s key (its claim was refused): replayed, 422 or 409. */
export async function replayStored(db: DB, idem: Idempotency, reply: FastifyReply): Promise<FastifyReply> {
  idem.stored = true;
  const prior = await db
    .selectFrom("idempotencyKeys")
    .selectAll()
    .where("credential", "=", idem.credential)
    .where("key", "=", idem.key)
    .executeTakeFirst();
  if (!prior) throw inProgress();
  return replay(prior, idem.requestHash, reply);
}

const inProgress = () =>
  new Problem(
    409,
    "idempotency-in-progress",
    "Request in progress",
    "a request with this Idempotency-Key is still being processed; retry shortly",
    {},
    { "retry-after": "1" },
  );

function replay(
  prior: {
    requestHash: string;
    statusCode: number | null;
    responseBody: string | null;
    responseHeaders: Record<string, string> | null;
  },
  requestHash: string,
  reply: FastifyReply,
): FastifyReply {
  if (prior.requestHash !== requestHash) {
    throw new Problem(
      422,
      "idempotency-key-reused",
      "Idempotency-Key reused",
      "header Idempotency-Key: this key was used for a different request in the last 24 hours",
      { errors: [{ pointer: "#/idempotency-key", in: "header", detail: "used for a different request" }] },
    );
  }
  if (prior.statusCode === null) throw inProgress();
  for (const [k, v] of Object.entries(prior.responseHeaders ?? {})) reply.header(k, v);
  reply.header("idempotent-replayed", "true");
  return reply.code(prior.statusCode).send(prior.responseBody ?? "");
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
    if (req.routeOptions.config.idempotencyInHandler) {
      req.idempotency = { credential, key, requestHash, inHandler: true };
      return;
    }
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
      req.idempotency = { credential, key, requestHash, fence };
      return;
    }
    const prior = await db
      .selectFrom("idempotencyKeys")
      .selectAll()
      .where("credential", "=", credential)
      .where("key", "=", key)
      .executeTakeFirstOrThrow();
    return replay(prior, requestHash, reply);
  });

  app.addHook("onSend", async (req, reply, payload) => {
    const idem = req.idempotency;
    if (!idem || idem.stored) return payload;
    req.idempotency = undefined;
    if (idem.inHandler) {
      // An answer the handler did not store (a refusal): kept as the first answer, unless a 5xx.
      if (reply.statusCode < 500 && typeof payload === "string") {
        await idempotencyClaim(idem, {
          status: reply.statusCode,
          headers: replayedHeaders(reply),
          body: payload,
        }).execute(db);
      }
      return payload;
    }
    const where = db
      .updateTable("idempotencyKeys")
      .where("credential", "=", idem.credential)
      .where("key", "=", idem.key)
      .where("createdAt", "=", sql<Date>`${idem.fence as string}::timestamptz`);
    if (reply.statusCode >= 500 || typeof payload !== "string") {
      await db
        .deleteFrom("idempotencyKeys")
        .where("credential", "=", idem.credential)
        .where("key", "=", idem.key)
        .where("createdAt", "=", sql<Date>`${idem.fence as string}::timestamptz`)
        .execute();
      return payload;
    }
    await where
      .set({ statusCode: reply.statusCode, responseBody: payload, responseHeaders: replayedHeaders(reply) })
      .execute();
    return payload;
  });
}

function replayedHeaders(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const h of REPLAYED_HEADERS) {
    const v = reply.getHeader(h);
    if (v !== undefined) headers[h] = String(v);
  }
  return headers;
}

/** Deletes expired records (called periodically). */
export async function purgeIdempotencyKeys(db: DB): Promise<void> {
  await db
    .deleteFrom("idempotencyKeys")
    .where("createdAt", "<", sql<Date>`now() - cast(${IDEMPOTENCY_TTL} as interval)`)
    .execute();
}
