import type { FastifyRequest } from "fastify";

// The resolvers' context (mercurius passes the reply), in a module of its own so resolver modules
// never import the file that installs them (index.ts).

export type Ctx = { reply: { request: FastifyRequest } };
