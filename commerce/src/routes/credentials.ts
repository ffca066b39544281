import { randomUUID } from "node:crypto";
import { z } from "zod";
import { randomToken, sha256 } from "../auth/secrets.ts";
import type { Api, Ctx } from "../http/context.ts";
import { notFound } from "../http/problem.ts";
import { idParam, timestamp } from "./common.ts";
import { grantableScopes } from "./oauth.ts";

// API keys and OAuth clients, managed with a credential that has every scope (the operator's key).
// A secret is shown once, in the creation response; only its SHA-256 is kept.

const tags = ["credentials"];
const ts = timestamp;

const apiKeyOut = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string().describe("First characters of the key, to recognise it."),
  scopes: z.array(z.string()),
  createdAt: ts,
  lastUsedAt: ts.nullable().describe("Last use, at minute precision."),
  revokedAt: ts.nullable(),
});
const clientOut = z.object({
  id: z.string().describe("client_id"),
  name: z.string(),
  scopes: z.array(z.string()),
  createdAt: ts,
  revokedAt: ts.nullable(),
});
const createIn = z.object({ name: z.string().min(1).max(200), scopes: grantableScopes });

export async function credentialRoutes(api: Api, { db, keys }: Ctx): Promise<void> {
  const admin = { scope: "*" };

  api.post(
    "/api-keys",
    {
      config: admin,
      schema: {
        tags,
        body: createIn,
        response: { 201: apiKeyOut.extend({ key: z.string().describe("Shown once.") }) },
      },
    },
    async (req, reply) => {
      const key = `csk_${randomToken(40)}`;
      const row = await db
        .insertInto("apiKeys")
        .values({
          id: `key_${randomUUID()}`,
          name: req.body.name,
          prefix: key.slice(0, 10),
          hash: sha256(key),
          scopes: req.body.scopes,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return reply.code(201).send({ ...row, key });
    },
  );
  api.get(
    "/api-keys",
    { config: admin, schema: { tags, response: { 200: z.object({ data: z.array(apiKeyOut) }) } } },
    async () => ({ data: await db.selectFrom("apiKeys").selectAll().orderBy("createdAt").execute() }),
  );
  api.delete("/api-keys/:id", { config: admin, schema: { tags, params: idParam } }, async (req, reply) => {
    const r = await db
      .updateTable("apiKeys")
      .set({ revokedAt: new Date() })
      .where("id", "=", req.params.id)
      .where("revokedAt", "is", null)
      .returning("hash")
      .executeTakeFirst();
    if (!r) throw notFound("API key", req.params.id);
    keys.forgetKey(r.hash);
    return reply.code(204).send();
  });

  api.post(
    "/oauth-clients",
    {
      config: admin,
      schema: {
        tags,
        body: createIn,
        response: { 201: clientOut.extend({ clientSecret: z.string().describe("Shown once.") }) },
      },
    },
    async (req, reply) => {
      const secret = randomToken(48);
      const row = await db
        .insertInto("oauthClients")
        .values({
          id: `cli_${randomToken(24)}`,
          name: req.body.name,
          secretHash: sha256(secret),
          scopes: req.body.scopes,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return reply.code(201).send({ ...row, clientSecret: secret });
    },
  );
  api.get(
    "/oauth-clients",
    { config: admin, schema: { tags, response: { 200: z.object({ data: z.array(clientOut) }) } } },
    async () => ({ data: await db.selectFrom("oauthClients").selectAll().orderBy("createdAt").execute() }),
  );
  api.delete(
    "/oauth-clients/:id",
    { config: admin, schema: { tags, params: idParam } },
    async (req, reply) => {
      const r = await db
        .updateTable("oauthClients")
        .set({ revokedAt: new Date() })
        .where("id", "=", req.params.id)
        .where("revokedAt", "is", null)
        .executeTakeFirst();
      if (!r.numUpdatedRows) throw notFound("OAuth client", req.params.id);
      return reply.code(204).send();
    },
  );
}
