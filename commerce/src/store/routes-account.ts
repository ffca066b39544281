import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { sql } from "kysely";
import { z } from "zod";
import { Problem } from "../http/problem.ts";
import { RateLimiter } from "../http/ratelimit.ts";
import type { Store } from "./context.ts";
import { authenticate, register } from "./customers.ts";
import { formErrors } from "./locale.ts";
import { signIn, signOut } from "./session.ts";
import { AccountBody, RegisterBody, SignInBody } from "./views/account.ts";

// Customer accounts: register, sign in and out, the account page with the order history.

/** A local path to return to after signing in (never another site). */
const nextPath = (v: unknown) =>
  typeof v === "string" && /^\/(?![/\\])[\x21-\x7e]*$/.test(v) && v.length < 200 ? v : "/account";

const signInForm = z.object({ email: z.string().trim().max(254), password: z.string().max(200) });
// Messages to shoppers come from the catalog by field (formErrors).
const registerForm = z.object({
  name: z.string().trim().min(1).max(200),
  email: z.email().max(254),
  password: z.string().min(10).max(200),
});

/** Sign-in attempts per email and minute (shared by all replicas: the API's GCRA buckets). */
export const SIGN_IN_ATTEMPTS_PER_MINUTE = 5;

export async function accountRoutes(app: FastifyInstance, store: Store): Promise<void> {
  const { db } = store;
  const { t } = store.loc;
  const attempts = new RateLimiter(db, SIGN_IN_ATTEMPTS_PER_MINUTE, randomUUID());

  app.get("/account", async (req, reply) => {
    const s = store.session(req);
    const c = s?.customerId
      ? await db
          .selectFrom("customers")
          .select(["name", "email"])
          .where("id", "=", s.customerId)
          .executeTakeFirst()
      : undefined;
    if (!s?.customerId || !c) return reply.redirect("/account/sign-in?next=/account", 303);
    const orders = await db
      .selectFrom("orders")
      .select((eb) => [
        "orders.id",
        "orders.status",
        "orders.createdAt",
        "orders.totalMinor",
        eb
          .selectFrom("orderLines")
          .select(sql<number>`coalesce(sum(quantity), 0)::int`.as("n"))
          .whereRef("orderLines.orderId", "=", "orders.id")
          .as("items"),
      ])
      .where("customerId", "=", s.customerId)
      .orderBy("createdAt", "desc")
      .orderBy("id", "desc")
      .limit(100)
      .execute();
    return store.page(req, reply, t.yourAccount, (ctx) =>
      AccountBody({ ctx, ...c, orders: orders.map((o) => ({ ...o, items: o.items ?? 0 })) }),
    );
  });

  app.get("/account/sign-in", async (req, reply) => {
    const next = nextPath((req.query as { next?: string }).next);
    return store.page(req, reply, t.signIn, (ctx) => SignInBody({ ctx, next }));
  });

  app.post("/account/sign-in", async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const next = nextPath(body.next);
    const f = signInForm.safeParse(body);
    const email = typeof body.email === "string" ? body.email : undefined;
    if (f.success) {
      // Guessing passwords is bounded per account, whichever replica or address the guesses come from.
      const { admitted, retryAfter } = await attempts.take(`store-sign-in:${f.data.email.toLowerCase()}`);
      if (!admitted) {
        reply.header("retry-after", String(retryAfter));
        const error = t.tooManySignIns(retryAfter);
        return store.page(req, reply, t.signIn, (ctx) => SignInBody({ ctx, next, email, error }), {
          status: 429,
        });
      }
    }
    const id = f.success ? await authenticate(store, f.data.email, f.data.password) : undefined;
    if (!id) {
      const error = t.wrongCredentials;
      return store.page(req, reply, t.signIn, (ctx) => SignInBody({ ctx, next, email, error }), {
        status: 401,
      });
    }
    store.setSession(req, await signIn(db, req, reply, id));
    return reply.redirect(next, 303);
  });

  app.get("/account/register", async (req, reply) => {
    const next = nextPath((req.query as { next?: string }).next);
    return store.page(req, reply, t.createAccount, (ctx) => RegisterBody({ ctx, next }));
  });

  app.post("/account/register", async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, string | undefined>;
    const next = nextPath(body.next);
    const again = (error: string) =>
      store.page(
        req,
        reply,
        t.createAccount,
        (ctx) => RegisterBody({ ctx, next, name: body.name, email: body.email, error }),
        { status: 422 },
      );
    const f = registerForm.safeParse(body);
    if (!f.success) return again(formErrors(t, f.error.issues));
    try {
      const id = await register(store, f.data);
      store.setSession(req, await signIn(db, req, reply, id));
      return reply.redirect(next, 303);
    } catch (err) {
      if (err instanceof Problem) return again(err.message);
      throw err;
    }
  });

  app.post("/account/sign-out", async (req, reply) => {
    await signOut(db, store.session(req), reply);
    return reply.redirect("/", 303);
  });
}
