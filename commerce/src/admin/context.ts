import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../config.ts";
import type { AdminApi } from "./api.ts";
import type { AdminDB } from "./db.ts";
import type { AdminLocale } from "./locale.ts";
import type { Session, Sessions } from "./sessions.ts";
import { renderPage, type VNode } from "./views/html.ts";
import type { PageCtx } from "./views/layout.ts";

// What the admin's route modules share.

declare module "fastify" {
  interface FastifyRequest {
    adminSession?: Session;
  }
}

export interface AdminCtx {
  db: AdminDB;
  config: Config;
  sessions: Sessions;
  api: AdminApi;
  storeName: string;
  /** The admin's language and formats (from the localization settings). */
  loc: AdminLocale;
}

export type Form = Record<string, string | string[] | undefined>;
/** A form field as one string (the first when repeated). */
export const field = (f: Form | undefined, name: string): string => {
  const v = f?.[name];
  return (Array.isArray(v) ? v[0] : v)?.trim() ?? "";
};
/** A repeated form field (checkboxes) as a list. */
export const fields = (f: Form | undefined, name: string): string[] => {
  const v = f?.[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
};

export function pageCtx(c: AdminCtx, req: FastifyRequest, reply: FastifyReply): PageCtx {
  return {
    csrf: reply.generateCsrf(),
    session: req.adminSession,
    path: req.url.split("?")[0] ?? "/admin/",
    storeName: c.storeName,
    loc: c.loc,
  };
}

export function sendPage(reply: FastifyReply, page: VNode, status = 200): FastifyReply {
  return reply.code(status).type("text/html; charset=utf-8").send(renderPage(page));
}

/** preHandler of the signed-in pages: a session that is not fully signed in goes to its next step. */
export async function requireSignedIn(req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const s = req.adminSession;
  if (!s) return reply.redirect("/admin/login", 303);
  if (s.stage === "mfa") return reply.redirect("/admin/login/verify", 303);
  if (s.stage === "setup") return reply.redirect("/admin/setup", 303);
}
