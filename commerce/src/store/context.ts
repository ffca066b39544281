import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../config.ts";
import type { DB } from "../db/database.ts";
import type { Outbox } from "../webhooks/outbox.ts";
import type { Locale } from "./locale.ts";
import type { StoreSession } from "./session.ts";
import type { VNode } from "./views/html.ts";
import type { PageCtx } from "./views/layout.ts";

// What the store frontend's route modules are given (index.ts builds it), in a module of its own
// so they never import the file that registers them.

export interface StoreDeps {
  db: DB;
  config: Config;
  outbox: Outbox;
}

export interface Store extends StoreDeps {
  loc: Locale;
  /** The request's session (loaded once per request). */
  session(req: FastifyRequest): StoreSession | undefined;
  setSession(req: FastifyRequest, s: StoreSession | undefined): void;
  /** Sends a whole page. */
  page(
    req: FastifyRequest,
    reply: FastifyReply,
    title: string,
    body: (ctx: PageCtx) => VNode,
    opts?: PageOpts,
  ): Promise<void>;
}
export interface PageOpts {
  status?: number;
  q?: string;
}
