import { createHash } from "node:crypto";
import { CamelCasePlugin, Kysely, PostgresDialect, sql, type Transaction } from "kysely";
import pg from "pg";
import { fromKysely, PgBoss } from "pg-boss";
import client from "prom-client";
import type { Config } from "../config.ts";
import type { DB } from "../db/database.ts";
import type { Database } from "../db/schema.ts";
import { Mailer, type MailKind } from "../email/mailer.ts";
import { type Cidr, parseCidrs } from "./destination.ts";
import type { Enqueued, Outbox } from "./outbox.ts";
import { sendOnce, signerFor } from "./send.ts";

// Delivery of the outbox through pg-boss: each attempt is a job, inserted in the transaction that
// wrote the delivery row (or recorded the previous attempt), so no commit ever leaves a delivery
// without a job. A pod dying mid-attempt leaves an active job that pg-boss expires and retries.
// Our delivery row keeps the schedule: backoff with jitter over about three days, Retry-After
// honoured on 429/503, 410 disables the endpoint, the same webhook-id on every attempt.
//
// The loop is our own on pg-boss's fetch rather than its work(): work() sleeps its polling interval
// after every batch and a batch waits for its slowest receiver. Here the commit's NOTIFY wakes a
// fetch at once, each attempt runs on its own, and each endpoint (the job's group) has at most
// COMMERCE_WEBHOOK_CONCURRENCY attempts active. The worker's statements use a pool of its own.

export const QUEUE = "webhook-delivery";
export const MAIL_QUEUE = "transactional-mail";

/** Seconds before attempt 2, 3, … (about 65 h in all; ±20 % jitter each). 13 attempts at most. */
export const BACKOFF_SECONDS = [5, 60, 300, 1800, 3600, 7200, 14400, 28800, 43200, 43200, 43200, 50400];
const MAX_RETRY_AFTER_SECONDS = 86_400;

/** Delay before the next attempt after `attempts` attempts, or undefined when out of attempts. */
export function nextDelaySeconds(
  attempts: number,
  retryAfter?: number,
  random = Math.random,
): number | undefined {
  const base = BACKOFF_SECONDS[attempts - 1];
  if (base === undefined) return undefined;
  if (retryAfter !== undefined) return Math.min(Math.max(retryAfter, 1), MAX_RETRY_AFTER_SECONDS);
  return Math.max(1, Math.round(base * (0.8 + 0.4 * random())));
}

export interface WorkerOptions {
  /** Fallback poll (seconds): due retries, and wake-ups missed while the listener was down. */
  pollingIntervalSeconds?: number;
  registry?: client.Registry;
}

/** Deliveries one process has in flight at most, over all endpoints. */
export const MAX_IN_FLIGHT = 128;

/** pg-boss's NOTIFY channel for schema `pgboss` (its `notifyChannelSql`: sha224 of the schema name). */
const BOSS_SCHEMA = "pgboss";
const BOSS_CHANNEL = `pgboss_${createHash("sha224").update(BOSS_SCHEMA).digest("hex").slice(0, 24)}`;

type Job = { id: string; retryCount: number; data: { deliveryId: string }; groupId?: string | null };

export class WebhookWorker {
  private readonly config: Config;
  /** The worker's own pool (COMMERCE_WEBHOOK_DB_POOL_SIZE): pg-boss and the attempts share it, the API does not. */
  private readonly pool: pg.Pool;
  private readonly db: DB;
  private readonly boss: PgBoss;
  private readonly allowed: Cidr[];
  private readonly outcomes?: client.Counter<"outcome">;
  private readonly options: WorkerOptions;
  private readonly perEndpoint: number;
  private readonly mailer?: Mailer;

  private listener?: pg.Client;
  private poll?: NodeJS.Timeout;
  private running = false;
  private stopped = false;
  private fetching = false;
  private again = false;
  /** Set when a fetch may have left due jobs behind (it came back full): fetch again as slots free. */
  private more = false;
  private readonly inFlight = new Map<string, number>();
  private total = 0;
  private readonly settled = new Set<Promise<void>>();

  constructor(apiDb: DB, config: Config, options: WorkerOptions = {}) {
    this.mailer = Mailer.from(apiDb, config);
    this.config = config;
    this.options = options;
    this.perEndpoint = config.COMMERCE_WEBHOOK_CONCURRENCY;
    this.allowed = parseCidrs(config.COMMERCE_WEBHOOK_ALLOWED_CIDRS);
    this.pool = new pg.Pool({
      connectionString: config.databaseUrl,
      max: config.COMMERCE_WEBHOOK_DB_POOL_SIZE,
      idleTimeoutMillis: 60_000,
    });
    this.pool.on("error", () => {});
    this.db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: this.pool }),
      plugins: [new CamelCasePlugin()],
    });
    const pool = this.pool;
    this.boss = new PgBoss({
      db: { executeSql: (text, values) => pool.query(text, values) },
      schema: BOSS_SCHEMA,
    });
    if (options.registry) {
      this.outcomes = new client.Counter({
        name: "webhook_delivery_attempts_total",
        help: "Webhook delivery attempts by outcome (succeeded, retry, failed, disabled, refused).",
        labelNames: ["outcome"] as const,
        registers: [options.registry],
      });
      const db = this.db;
      new client.Gauge({
        name: "webhook_queue_depth",
        help: "Webhook deliveries waiting for an attempt.",
        registers: [options.registry],
        collect: async function (this: client.Gauge) {
          const r = await sql<{
            n: number;
          }>`select count(*)::int as n from webhook_deliveries where status = 'pending'`.execute(db);
          this.set(r.rows[0]?.n ?? 0);
        },
      });
    }
  }

  /**
   * Starts pg-boss (its schema is migrated under its own lock) and the delivery loop: woken by
   * the NOTIFY pg-boss sends with each runnable job (committed with the order), by a finished
   * attempt when jobs were left behind, and by a fallback poll.
   */
  async start(outbox: Outbox): Promise<void> {
    this.boss.on("error", () => {});
    await this.boss.start();
    // Job-level retries only cover a worker that died mid-attempt (the job expires).
    const settings = { retryLimit: 5, retryDelay: 30, expireInSeconds: 60, notify: true };
    if (!(await this.boss.getQueue(QUEUE))) await this.boss.createQueue(QUEUE, settings).catch(() => {});
    // A queue made by an earlier version did not notify.
    await this.boss.updateQueue(QUEUE, settings);
    outbox.enqueue = this.enqueue;
    if (this.mailer) await this.startMail(outbox, this.mailer);
    this.running = true;
    await this.listen();
    const pollMs = (this.options.pollingIntervalSeconds ?? 2) * 1000;
    this.poll = setInterval(() => this.wake(), pollMs);
    this.wake();
  }

  /** A dedicated connection LISTENing to pg-boss's channel; reconnects after a second, then fetches. */
  private async listen(): Promise<void> {
    const c = new pg.Client({ connectionString: this.config.databaseUrl });
    const lost = () => {
      if (this.listener !== c || !this.running) return;
      this.listener = undefined;
      c.end().catch(() => {});
      setTimeout(() => void this.listen().catch(lost), 1000).unref();
    };
    c.on("notification", (n) => {
      if (n.payload === QUEUE) this.wake();
    });
    c.on("error", lost);
    c.on("end", lost);
    this.listener = c;
    await c.connect();
    await c.query(`listen ${BOSS_CHANNEL}`);
    // Anything committed while not listening is fetched now.
    this.wake();
  }

  /** Fetches now, or once more after the fetch in progress. */
  private wake(): void {
    if (!this.running) return;
    if (this.fetching) {
      this.again = true;
      return;
    }
    this.fetching = true;
    void this.pump().finally(() => (this.fetching = false));
  }

  /**
   * Claims due jobs while there are free slots, and starts each attempt on its own: no attempt
   * waits for another. pg-boss's groupConcurrency (the group is the endpoint) hands out no job
   * of an endpoint that already has COMMERCE_WEBHOOK_CONCURRENCY attempts active (across all
   * replicas), so a slow receiver holds at most that many slots and never another's events.
   */
  private async pump(): Promise<void> {
    do {
      this.again = false;
      const free = MAX_IN_FLIGHT - this.total;
      if (free <= 0) {
        this.more = true;
        return;
      }
      let jobs: Job[];
      try {
        jobs = (await this.boss.fetch<{ deliveryId: string }>(QUEUE, {
          batchSize: free,
          groupConcurrency: this.perEndpoint,
        })) as Job[];
      } catch {
        return; // the database is away: the poll tries again
      }
      this.more = jobs.length === free;
      if (this.more) this.again = true;
      for (const job of jobs) this.run(job);
    } while (this.again && this.running);
  }

  private run(job: Job): void {
    const group = job.groupId ?? "";
    const before = this.inFlight.get(group) ?? 0;
    this.inFlight.set(group, before + 1);
    this.total++;
    const p = this.attempt(job.data.deliveryId, job)
      .catch(() => this.boss.fail(QUEUE, job).catch(() => {}))
      .then(() => {
        const n = (this.inFlight.get(group) ?? 1) - 1;
        if (n) this.inFlight.set(group, n);
        else this.inFlight.delete(group);
        this.total--;
        this.settled.delete(p);
        // Its endpoint was at its limit (jobs of it may wait), or a fetch came back full.
        if (this.more || (group && before + 1 >= this.perEndpoint)) this.wake();
      });
    this.settled.add(p);
  }

  /** Transactional mail: one job per mail, retried with backoff by pg-boss for about a day. */
  private async startMail(outbox: Outbox, mailer: Mailer): Promise<void> {
    if (!(await this.boss.getQueue(MAIL_QUEUE))) {
      await this.boss
        .createQueue(MAIL_QUEUE, {
          retryLimit: 12,
          retryDelay: 30,
          retryBackoff: true,
          retryDelayMax: 3600,
          expireInSeconds: 120,
        })
        .catch(() => {});
    }
    await this.boss.work<{ kind: MailKind; orderId: string }>(
      MAIL_QUEUE,
      { pollingIntervalSeconds: this.options.pollingIntervalSeconds ?? 2 },
      async (jobs) => {
        for (const j of jobs) await mailer.send(j.data.kind, j.data.orderId);
      },
    );
    outbox.mail = async (trx, kind, orderId) => {
      if (!mailer.wants(kind)) return;
      await this.boss.send(MAIL_QUEUE, { kind, orderId }, { db: fromKysely(trx.withoutPlugins()) });
    };
  }

  /** Stops fetching, lets the attempts in flight finish (each is bounded by its timeout), stops pg-boss. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.running) {
      this.running = false;
      clearInterval(this.poll);
      const l = this.listener;
      this.listener = undefined;
      await l?.end().catch(() => {});
      while (this.fetching || this.settled.size) {
        await Promise.all([...this.settled, new Promise((r) => setTimeout(r, 10))]);
      }
    }
    await this.boss.stop({ graceful: true, timeout: 15_000 });
    this.mailer?.close();
    await this.db.destroy();
  }

  /** The outbox's enqueue hook: one job per delivery, in the caller's transaction (one statement). */
  enqueue = async (trx: Transaction<Database>, deliveries: Enqueued[], startAfter?: Date): Promise<void> => {
    // pg-boss's statement runs on the caller's transaction: the jobs commit or roll back with it,
    // and so does its NOTIFY (delivered at commit).
    await this.boss.insert(
      QUEUE,
      deliveries.map((d) => ({
        data: { deliveryId: d.id },
        group: { id: d.webhook },
        ...(startAfter ? { startAfter } : {}),
      })),
      { db: fromKysely(trx.withoutPlugins()) },
    );
  };

  /**
   * One attempt of a delivery, recorded with its outcome and the next job when it will retry. The
   * job (when given) is completed in the transaction that records the attempt.
   */
  async attempt(deliveryId: string, job?: Job): Promise<void> {
    const complete = async (trx: Transaction<Database>) => {
      if (job) await this.boss.complete(QUEUE, job, undefined, { db: fromKysely(trx.withoutPlugins()) });
    };
    const d = await this.db
      .selectFrom("webhookDeliveries")
      .innerJoin("webhookEvents", "webhookEvents.id", "webhookDeliveries.eventId")
      .leftJoin("webhookEndpoints", "webhookEndpoints.name", "webhookDeliveries.webhook")
      .select([
        "webhookDeliveries.id",
        "eventId",
        "webhook",
        "url",
        "status",
        "attempts",
        "payload",
        "disabledAt",
      ])
      .where("webhookDeliveries.id", "=", deliveryId)
      .executeTakeFirst();
    if (d?.status !== "pending") {
      await this.db.transaction().execute(complete);
      return;
    }
    if (d.disabledAt) {
      await this.db.transaction().execute(async (trx) => {
        await trx
          .updateTable("webhookDeliveries")
          .set({
            status: "cancelled",
            lastError: "endpoint disabled (it answered 410 Gone)",
            nextAttemptAt: null,
            updatedAt: new Date(),
          })
          .where("id", "=", deliveryId)
          .execute();
        await complete(trx);
      });
      return;
    }
    const key = this.config.webhookSigningKeys.get(d.webhook);
    const payload = typeof d.payload === "string" ? d.payload : JSON.stringify(d.payload);
    const r = await sendOnce(d.url, d.eventId, payload, key ? signerFor(key) : undefined, this.allowed);
    const attempts = d.attempts + 1;
    const code = r.statusCode;
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("webhookAttempts")
        .values({
          deliveryId,
          attempt: attempts,
          statusCode: code ?? null,
          error: r.error ?? null,
          durationMs: r.durationMs,
          at: new Date(),
        })
        .execute();
      const common = {
        attempts,
        lastStatusCode: code ?? null,
        lastError: r.error ?? null,
        updatedAt: new Date(),
      };
      let outcome: string;
      if (code !== undefined && code >= 200 && code < 300) {
        outcome = "succeeded";
        await trx
          .updateTable("webhookDeliveries")
          .set({ ...common, status: "succeeded", nextAttemptAt: null })
          .where("id", "=", deliveryId)
          .execute();
      } else if (code === 410) {
        outcome = "disabled";
        await trx
          .insertInto("webhookEndpoints")
          .values({ name: d.webhook, disabledAt: new Date(), disabledReason: `410 Gone from ${d.url}` })
          .onConflict((oc) =>
            oc
              .column("name")
              .doUpdateSet({ disabledAt: new Date(), disabledReason: `410 Gone from ${d.url}` }),
          )
          .execute();
        await trx
          .updateTable("webhookDeliveries")
          .set({ ...common, status: "cancelled", nextAttemptAt: null })
          .where("id", "=", deliveryId)
          .execute();
      } else {
        const honour = code === 429 || code === 503 ? r.retryAfterSeconds : undefined;
        const delay = r.refused ? undefined : nextDelaySeconds(attempts, honour);
        if (delay === undefined) {
          outcome = r.refused ? "refused" : "failed";
          await trx
            .updateTable("webhookDeliveries")
            .set({ ...common, status: "failed", nextAttemptAt: null })
            .where("id", "=", deliveryId)
            .execute();
        } else {
          outcome = "retry";
          const at = new Date(Date.now() + delay * 1000);
          await trx
            .updateTable("webhookDeliveries")
            .set({ ...common, nextAttemptAt: at })
            .where("id", "=", deliveryId)
            .execute();
          await this.enqueue(trx, [{ id: deliveryId, webhook: d.webhook }], at);
        }
      }
      await complete(trx);
      this.outcomes?.inc({ outcome });
    });
  }
}
