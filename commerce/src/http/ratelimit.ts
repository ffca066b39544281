import type { FastifyReply, FastifyRequest } from "fastify";
import { sql } from "kysely";
import type { Plan } from "../config.ts";
import type { DB } from "../db/database.ts";
import { Problem } from "./problem.ts";

// Rate limits per credential, shared by every replica, as GCRA (the generic cell rate algorithm:
// a token bucket `quota` deep that refills one token every 60/quota s, so no double burst at the
// edge of a window). The bucket's state is one timestamp per credential in PostgreSQL (migration
// 0007). Replicas do not write it per request: each leases tokens in batches sized to its own
// recent demand (one `rate_limit_lease` call), spends them locally and gives back what it has not
// spent within LEASE_MS. Every admitted request was debited from the shared bucket first, so N
// replicas together admit the bucket's rate, never more; near the limit a lease is capped to a
// share of what is left, so no replica sits on tokens another needs.
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
/** How long a replica keeps leased tokens before giving back what it has not spent. */
export const LEASE_MS = 500;
/** The most tokens one lease takes. */
const MAX_LEASE = 1_000;
/** The share of the tokens left in the bucket one lease may take (at least what it needs). */
const LEASE_SHARE = 0.25;

/** Requests per minute of a plan; Infinity when limiting is turned off. */
export function ratePerMinute(plan: Plan, override?: number | "unlimited"): number {
  if (override === "unlimited") return Number.POSITIVE_INFINITY;
  if (override !== undefined) return override;
  return plan === "Custom" ? CUSTOM_DEFAULT_RATE : PLAN_RATE_PER_MINUTE[plan];
}

/** One credential's tokens on this replica. */
interface Held {
  /** Leased and not yet spent. */
  tokens: number;
  /** When unspent tokens go back to the bucket (ms). */
  expires: number;
  /** Until then the bucket had too few tokens (ms): refuse without asking. */
  blockedUntil: number;
  /** Tokens left in the shared bucket after the last lease. */
  available: number;
  /** When the shared bucket is full again, as of the last lease (ms). */
  fullAt: number;
  /** Units admitted since the last lease, and its time: this replica's demand. */
  spent: number;
  leasedAt: number;
  pending?: Promise<void>;
}

export interface Decision {
  admitted: boolean;
  /** Tokens left (shared bucket + this replica's lease). */
  remaining: number;
  /** Seconds until the bucket is full again. */
  reset: number;
  /** Seconds until the request could be admitted (refused requests). */
  retryAfter: number;
}

export class RateLimiter {
  private readonly db: DB;
  readonly quota: number;
  private readonly interval: number;
  private readonly policy: string;
  private readonly held = new Map<string, Held>();
  private sweeper?: NodeJS.Timeout;

  /** Requests carrying this token in X-Internal-Request are already counted (GraphQL's REST calls). */
  private readonly internalToken: string;

  constructor(db: DB, quota: number, internalToken: string) {
    this.db = db;
    this.internalToken = internalToken;
    this.quota = quota;
    this.interval = WINDOW_SECONDS / quota;
    this.policy = `"per-credential";q=${quota};w=${WINDOW_SECONDS}`;
  }

  /** Takes `n` tokens of `key`'s bucket, from this replica's lease or a new one. */
  async take(key: string, n = 1): Promise<Decision> {
    let h = this.held.get(key);
    if (!h) {
      h = { tokens: 0, expires: 0, blockedUntil: 0, available: this.quota, fullAt: 0, spent: 0, leasedAt: 0 };
      this.held.set(key, h);
    }
    for (;;) {
      const now = Date.now();
      if (h.tokens >= n && now < h.expires) {
        h.tokens -= n;
        h.spent += n;
        return this.decision(h, true, now);
      }
      if (now < h.blockedUntil) return this.decision(h, false, now);
      if (h.pending) await h.pending;
      else {
        const held = h;
        held.pending = this.lease(key, held, n).finally(() => {
          held.pending = undefined;
        });
        await held.pending;
      }
    }
  }

  private decision(h: Held, admitted: boolean, now: number): Decision {
    return {
      admitted,
      remaining: h.available + h.tokens,
      reset: Math.max(0, Math.ceil((h.fullAt - now) / 1000)),
      retryAfter: Math.max(1, Math.ceil((h.blockedUntil - now) / 1000)),
    };
  }

  /** One call to the shared bucket: gives back expired tokens and leases what `n` needs at least. */
  private async lease(key: string, h: Held, n: number): Promise<void> {
    const now = Date.now();
    const giveBack = now >= h.expires ? h.tokens : 0;
    h.tokens -= giveBack;
    const need = Math.max(0, n - h.tokens);
    // Enough for LEASE_MS at the rate this replica admitted since its last lease.
    const rate = h.spent / Math.max(1, now - h.leasedAt);
    const want = Math.max(need, Math.min(MAX_LEASE, Math.ceil(rate * LEASE_MS)));
    const r = await this.call(key, need, want, giveBack);
    const at = Date.now();
    h.spent = 0;
    h.leasedAt = at;
    h.tokens += r.granted;
    if (r.granted > 0) h.expires = at + LEASE_MS;
    h.available = r.available;
    h.fullAt = at + r.fullSeconds * 1000;
    if (r.granted < need) h.blockedUntil = at + Math.max(1, r.waitSeconds * 1000);
    this.sweeper ??= setInterval(() => void this.sweep().catch(() => {}), LEASE_MS).unref();
  }

  private async call(key: string, need: number, want: number, giveBack: number) {
    const { rows } = await sql<{
      granted: number;
      available: number;
      waitSeconds: number;
      fullSeconds: number;
    }>`
      select * from rate_limit_lease(${key}, ${this.interval}::float8, ${this.quota}::int, ${need}::int,
        ${want}::int, ${LEASE_SHARE}::float8, ${giveBack}::int)`.execute(this.db);
    const r = rows[0];
    if (!r) throw new Error("rate limit lease not returned");
    return r;
  }

  /** Gives back tokens whose lease expired; forgets credentials idle for a while. */
  private async sweep(): Promise<void> {
    const now = Date.now();
    const back: Promise<unknown>[] = [];
    for (const [key, h] of this.held) {
      if (h.pending) continue;
      if (h.tokens > 0 && now >= h.expires) {
        const giveBack = h.tokens;
        h.tokens = 0;
        back.push(this.call(key, 0, 0, giveBack));
      } else if (h.tokens === 0 && now > h.blockedUntil && now - h.leasedAt > 10 * LEASE_MS) {
        this.held.delete(key);
      }
    }
    await Promise.all(back);
  }

  /** Gives back every unspent token (at shutdown). */
  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    for (const h of this.held.values()) h.expires = 0;
    await this.sweep().catch(() => {});
  }

  /**
   * Counts `n` units for `credential` and sets the RateLimit headers on `reply`; returns the
   * problem to answer with when the bucket has too few tokens.
   */
  async charge(reply: FastifyReply, credential: string, n: number): Promise<Problem | undefined> {
    if (this.quota === Number.POSITIVE_INFINITY) return undefined;
    const d = await this.take(credential, n);
    reply.header("ratelimit-policy", this.policy);
    reply.header("ratelimit", `"per-credential";r=${d.remaining};t=${d.reset}`);
    if (d.admitted) return undefined;
    return new Problem(
      429,
      "rate-limited",
      "Too many requests",
      `this credential may make ${this.quota} requests per ${WINDOW_SECONDS} s (a burst of ${this.quota}, then one every ${+this.interval.toFixed(3)} s); retry in ${d.retryAfter} s`,
      {},
      { "retry-after": String(d.retryAfter) },
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

  /** Deletes buckets that are full again (their state says nothing) and the old window counters. */
  async purge(): Promise<void> {
    await sql`delete from rate_limit_buckets where tat < now() - interval '1 minute'`.execute(this.db);
    await sql`delete from rate_limit_counters where window_start < now() - interval '2 minutes'`.execute(
      this.db,
    );
  }
}
