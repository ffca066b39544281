import { randomUUID } from "node:crypto";
import { sql, type Transaction } from "kysely";
import { z } from "zod";
import type { Database } from "../db/schema.ts";
import type { Api, Ctx } from "../http/context.ts";
import { ifMatchVersion, setEtag, versionMismatch } from "../http/etag.ts";
import { keyset, page, pageOf, pageQuery } from "../http/pagination.ts";
import { notFound, Problem } from "../http/problem.ts";
import type { Outbox } from "../webhooks/outbox.ts";
import { idParam, ifMatchHeader, timestamp } from "./common.ts";

// Customers. Registering one emits CustomerRegistered; the email is unique (case-insensitive).

const tags = ["customers"];
const customerIn = z.object({ email: z.email().max(254), name: z.string().min(1).max(200) });
const customerOut = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  version: z.number(),
  createdAt: timestamp,
  updatedAt: timestamp,
});
const listQuery = pageQuery(["createdAt", "name", "email"] as const).extend({
  email: z.string().max(254).optional().describe("Exact email (case-insensitive)."),
  q: z.string().max(200).optional().describe("Substring of name or email."),
});
const SORT = {
  createdAt: ["createdAt", "timestamptz"],
  name: ["name", "text"],
  email: ["email", "text"],
} as const;

const emailTaken = (email: string) =>
  new Problem(409, "conflict", "Conflict", `email: a customer with ${email} already exists`, {
    errors: [{ pointer: "#/email", in: "body", detail: "already exists" }],
  });
export const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === "23505";

/** Inserts a customer and emits CustomerRegistered in `trx` (the API and the store's sign-up). */
export async function insertCustomer(
  trx: Transaction<Database>,
  outbox: Outbox,
  c: { email: string; name: string },
  now = new Date(),
) {
  const row = await trx
    .insertInto("customers")
    .values({ id: `cus_${randomUUID()}`, email: c.email, name: c.name, createdAt: now, updatedAt: now })
    .returningAll()
    .executeTakeFirstOrThrow();
  await outbox.emit(trx, "CustomerRegistered", { id: row.id, email: row.email, name: row.name });
  return row;
}

export async function customerRoutes(api: Api, { db, outbox }: Ctx): Promise<void> {
  api.get(
    "/customers",
    {
      config: { scope: "customers:read" },
      schema: { tags, querystring: listQuery, response: { 200: pageOf(customerOut) } },
    },
    async (req) => {
      const q = req.query;
      const [column, type] = SORT[q.sort.replace(/^-/, "") as keyof typeof SORT];
      const ks = keyset(`customers.${column}`, "customers.id", type, q.sort, q.cursor);
      let query = db.selectFrom("customers").selectAll().select(ks.cursorValue.as("cursorValue"));
      if (ks.where) query = query.where(ks.where);
      if (q.email) query = query.where(sql`lower(email)`, "=", q.email.toLowerCase());
      if (q.q) {
        const like = `%${q.q.replace(/[\\%_]/g, "\\$&")}%`;
        query = query.where((eb) => eb.or([eb("name", "ilike", like), eb("email", "ilike", like)]));
      }
      const rows = await query
        .orderBy(ks.orderBy)
        .limit(q.limit + 1)
        .execute();
      const p = page(rows, q.limit, q.sort);
      return { data: p.rows, nextCursor: p.nextCursor };
    },
  );

  api.get(
    "/customers/:id",
    {
      config: { scope: "customers:read" },
      schema: { tags, params: idParam, response: { 200: customerOut } },
    },
    async (req, reply) => {
      const c = await db
        .selectFrom("customers")
        .selectAll()
        .where("id", "=", req.params.id)
        .executeTakeFirst();
      if (!c) throw notFound("customer", req.params.id);
      setEtag(reply, c.version);
      return c;
    },
  );

  api.post(
    "/customers",
    {
      config: { scope: "customers:write" },
      schema: { tags, body: customerIn, response: { 201: customerOut } },
    },
    async (req, reply) => {
      const now = new Date();
      try {
        const c = await db.transaction().execute(async (trx) => {
          return insertCustomer(trx, outbox, req.body, now);
        });
        setEtag(reply, c.version);
        return reply.code(201).header("location", `/api/v1/customers/${c.id}`).send(c);
      } catch (err) {
        if (isUniqueViolation(err)) throw emailTaken(req.body.email);
        throw err;
      }
    },
  );

  api.patch(
    "/customers/:id",
    {
      config: { scope: "customers:write" },
      schema: {
        tags,
        params: idParam,
        headers: ifMatchHeader,
        body: customerIn.partial(),
        response: { 200: customerOut },
      },
    },
    async (req, reply) => {
      const want = ifMatchVersion(req);
      try {
        const c = await db.transaction().execute(async (trx) => {
          const cur = await trx
            .selectFrom("customers")
            .select("version")
            .where("id", "=", req.params.id)
            .forUpdate()
            .executeTakeFirst();
          if (!cur) throw notFound("customer", req.params.id);
          if (want !== undefined && want !== cur.version) throw versionMismatch(cur.version);
          return trx
            .updateTable("customers")
            .set({ ...req.body, version: sql`version + 1`, updatedAt: new Date() })
            .where("id", "=", req.params.id)
            .returningAll()
            .executeTakeFirstOrThrow();
        });
        setEtag(reply, c.version);
        return c;
      } catch (err) {
        if (isUniqueViolation(err)) throw emailTaken(req.body.email ?? "");
        throw err;
      }
    },
  );
}
