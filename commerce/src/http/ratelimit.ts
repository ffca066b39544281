import type { FastifyReply, FastifyRequest } from "fastify";
import { sql } from "kysely";
import type { Plan } from "../config.ts";
import type { DB } from "../db/database.ts";
import { Problem } from "./problem.ts";

// Rate limits per credential, shared by every replica: one counter row per credential and minute
// in PostgreSQL (an atomic upsert per request), so N pods allow the plan's rate, not N times it.
// Headers of the IETF draft "RateLimit header fields for HTTP": RateLimit-Policy and RateLimit.

/** Requests per minute and credential, by plan. */
export const PLAN_RATE_PER_MINUTE: Record<Exclude<Plan, "Custom">, number> = {
  Standard: 600,
  Professional: 1_800,
  Enterprise: 6_000,
};
/** Custom plans without COMMERCE_RATE_LIMIT_PER_MINUTE get the Enterprise rate. */
export const CUSTOM_DEFAULT_RATE = 6_000;
export const WINDOW_SECONDS = 60;

/** Requests per minute of a plan; Infinity when limiting is turned off. */
export function ratePerMinute(plan: Plan, override?: number | "unlimited"): number {
  if (override === "unlimited") return Number.POSITIVE_INFINITY;
  if (override !== undefined) return override;
  return plan === "Custom" ? CUSTOM_DEFAULT_RATE : PLAN_RATE_PER_MINUTE[plan];
}

export class RateLimiter {
  private readonly db: DB;
  readonly quota: number;
  private readonly policy: string;

  /** Requests carrying this token in X-Internal-Request are already counted (GraphQL's REST calls). */
  private readonly internalToken: string;

  constructor(db: DB, quota: number, internalToken: string) {
    this.db = db;
    this.internalToken = internalToken;
    this.quota = quota;
    this.policy = `"per-credential";q=${quota};w=${WINDOW_SECONDS}`;
  }

  /** Counts one request of `credential`; returns the remaining quota and seconds to the reset. */
  async take(credential: string, n = 1): Promise<{ count: number; reset: number }> {
    const row = await sql<{ count: number; reset: number }>`
      insert into rate_limit_counters as c (credential, window_start, count)
      values (${credential}, date_bin(${`${WINDOW_SECONDS} seconds`}::interval, now(), 'epoch'), ${n})
      on conflict (credential, window_start) do update set count = c.count + ${n}
      returning c.count,
        ceil(extract(epoch from c.window_start + ${`${WINDOW_SECONDS} seconds`}::interval - now()))::int as reset`.execute(
      this.db,
    );
    const r = row.rows[0];
    if (!r) throw new Error("rate limit counter not returned");
    return { count: r.count, reset: Math.max(1, r.reset) };
  }

  /**
   * Counts `n` units for `credential` and sets the RateLimit headers on `reply`; returns the
   * problem to answer with when over the quota.
   */
  async charge(reply: FastifyReply, credential: string, n: number): Promise<Problem | undefined> {
    if (this.quota === Number.POSITIVE_INFINITY) return undefined;
    const { count, reset } = await this.take(credential, n);
    const remaining = Math.max(0, this.quota - count);
    reply.header("ratelimit-policy", this.policy);
    reply.header("ratelimit", `"per-credential";r=${remaining};t=${reset}`);
    if (count <= this.quota) return undefined;
    return new Problem(
      429,
      "rate-limited",
      "Too many requests",
      `this credential may make ${this.quota} requests per ${WINDOW_SECONDS} s; retry in ${reset} s`,
      {},
      { "retry-after": String(reset) },
    );
  }

  /** onRequest hook after authentication. */
  hook = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const credential = req.principal?.id;
    if (!credential || req.headers["x-internal-request"] === this.internalToken) return;
    if (this.quota === Number.POSITIVE_INFINITY) return;
    const over = await this.charge(reply, credential, 1);
    if (over) throw over;
  };

  /** Deletes finished windows (called periodically). */
  async purge(): Promise<void> {
    await sql`delete from rate_limit_counters where window_start < now() - interval '2 minutes'`.execute(
      this.db,
    );
  }
}
