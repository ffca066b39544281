import { hash, verify } from "@node-rs/argon2";
import { sql } from "kysely";
import { Problem } from "../http/problem.ts";
import { insertCustomer, isUniqueViolation } from "../routes/customers.ts";
import type { Store } from "./context.ts";
import type { StoreSession } from "./session.ts";

// Store customers: accounts (an Argon2id password hash beside the customer row) and the customer
// a checkout orders as. Customers are the API's customers: creating one emits CustomerRegistered.

const refuse = (message: string) => new Problem(422, "validation", "Invalid request", message);

// Verifying against this when the email is unknown costs the same as a real check, so the answer
// time does not tell which emails have accounts.
const DUMMY = hash("not a real password, only for timing");

async function byEmail(store: Store, email: string) {
  return store.db
    .selectFrom("customers")
    .leftJoin("storeAccounts", "storeAccounts.customerId", "customers.id")
    .select(["customers.id", "customers.name", "storeAccounts.passwordHash"])
    .where(sql`lower(customers.email)`, "=", email.toLowerCase())
    .executeTakeFirst();
}

/** The customer an order is placed for: the signed-in one, or the guest's (created on first order). */
export async function checkoutCustomer(
  store: Store,
  s: StoreSession,
  f: { name?: string; email?: string },
): Promise<string> {
  if (s.customerId) return s.customerId;
  if (!f.name || !f.email) throw refuse(store.loc.t.enterNameAndEmail);
  const c = await byEmail(store, f.email);
  if (c?.passwordHash) throw refuse(store.loc.t.accountExists);
  if (c) return c.id;
  try {
    const row = await store.db
      .transaction()
      .execute((trx) => insertCustomer(trx, store.outbox, { email: f.email ?? "", name: f.name ?? "" }));
    return row.id;
  } catch (err) {
    // Created concurrently by another checkout with the same email: use it.
    if (isUniqueViolation(err)) return (await byEmail(store, f.email))?.id ?? Promise.reject(err);
    throw err;
  }
}

/** Creates a customer with an account; refuses an email that already belongs to a customer. */
export async function register(
  store: Store,
  f: { name: string; email: string; password: string },
): Promise<string> {
  if (await byEmail(store, f.email)) {
    // Without a verified email, an existing customer's orders must not become visible to whoever
    // registers their address.
    throw refuse(store.loc.t.emailTaken);
  }
  const passwordHash = await hash(f.password);
  try {
    return await store.db.transaction().execute(async (trx) => {
      const c = await insertCustomer(trx, store.outbox, { email: f.email, name: f.name });
      await trx.insertInto("storeAccounts").values({ customerId: c.id, passwordHash }).execute();
      return c.id;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw refuse(store.loc.t.emailTaken);
    throw err;
  }
}

/** The customer of these credentials, or undefined. */
export async function authenticate(
  store: Store,
  email: string,
  password: string,
): Promise<string | undefined> {
  const c = await byEmail(store, email);
  const ok = await verify(c?.passwordHash ?? (await DUMMY), password).catch(() => false);
  return c?.passwordHash && ok ? c.id : undefined;
}
