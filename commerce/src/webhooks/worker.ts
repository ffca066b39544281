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
// after every batch and a batch waits for its slowest receiver. Here each endpoint has a queue of
// its own, the commit's NOTIFY wakes a fetch of that queue at once, each attempt runs on its own,
// and an endpoint has at most COMMERCE_WEBHOOK_CONCURRENCY attempts in flight per process. The
// worker's statements use a pool of its own.

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

/** The queue of one endpoint's deliveries (`QUEUE` itself holds jobs an earlier version enqueued). */
export const queueOf = (webhook: string) => `${QUEUE}/${webhook}`;

type Job = { id: string; retryCount: number; data: { deliveryId: string } };

/** A delivery as an attempt reads it. */
interface Loaded {
  id: string;
  eventId: string;
  webhook: string;
  url: string;
  status: string;
  attempts: number;
  payload: unknown;
  disabledAt: Date | null;
}

/** A successful attempt waiting to be recorded. */
interface Success {
  deliveryId: string;
  attempts: number;
  code: number;
  durationMs: number;
  queue: string;
  job: Job;
}

/** One endpoint's queue and its attempts in flight in this process. */
interface Lane {
  queue: string;
  active: number;
  fetching: boolean;
  /** Fetch once more when the fetch in progress ends (a wake-up came during it). */
  again: boolean;
  /** The last fetch was limited by the free slots: jobs may be waiting for one. */
  more: boolean;
}

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
  private readonly lanes = new Map<string, Lane>();
  private total = 0;
  private readonly settled = new Set<Promise<void>>();
  private readonly successes: (Success & { at: Date; resolve: () => void; reject: (e: unknown) => void })[] =
    [];
  private recording = false;

  constructor(apiDb: DB, config: Config, options: WorkerOptions = {}) {
    this.mailer = Mailer.from(apiDb, config);
    this.config = config;
    this.options = options;
    this.perEndpoint = config.COMMERCE_WEBHOOK_CONCURRENCY;
    this.allowed = parseCidrs(config.COMMERCE_WEBHOOK_ALLOWED_CIDRS);
    // Asynchronous commit for the worker's own writes (claims, attempt records, job completions):
    // with synchronous commit each attempt's record waited for its own WAL flush, and those flushes
    // queued with the orders' commits. A database crash can lose the last fraction of a second of
    // them, which only sends those events again with the same webhook-id, as at-least-once allows;
    // the orders, events and jobs the API writes stay synchronous.
    this.pool = new pg.Pool({
      connectionString: config.databaseUrl,
      max: config.COMMERCE_WEBHOOK_DB_POOL_SIZE,
      idleTimeoutMillis: 60_000,
      options: "-c synchronous_commit=off",
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
   * Starts pg-boss (its schema is migrated under its own lock) and the delivery loop: one queue
   * per endpoint, each woken by the NOTIFY pg-boss sends with its runnable jobs (committed with
   * the order), by a finished attempt when jobs were left behind, and by a fallback poll.
   */
  async start(outbox: Outbox): Promise<void> {
    this.boss.on("error", () => {});
    await this.boss.start();
    // Job-level retries only cover a worker that died mid-attempt (the job expires).
    const settings = { retryLimit: 5, retryDelay: 30, expireInSeconds: 60, notify: true };
    // The configured endpoints, the endpoints of earlier configurations (their deliveries still
    // go out, to the URL stored with them) and the one queue of earlier versions.
    const queues = new Set([QUEUE, ...(this.config.CONFIG_WEBHOOKS ?? []).map((w) => queueOf(w.name))]);
    for (const q of await this.boss.getQueues()) if (q.name.startsWith(`${QUEUE}/`)) queues.add(q.name);
    for (const queue of queues) {
      if (!(await this.boss.getQueue(queue))) await this.boss.createQueue(queue, settings).catch(() => {});
      // A queue made by an earlier version did not notify.
      await this.boss.updateQueue(queue, settings);
      this.lanes.set(queue, { queue, active: 0, fetching: false, again: false, more: false });
    }
    outbox.enqueue = this.enqueue;
    if (this.mailer) await this.startMail(outbox, this.mailer);
    this.running = true;
    await this.listen();
    const pollMs = (this.options.pollingIntervalSeconds ?? 2) * 1000;
    this.poll = setInterval(() => {
      for (const lane of this.lanes.values()) this.wake(lane);
    }, pollMs);
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
      const lane = n.payload ? this.lanes.get(n.payload) : undefined;
      if (lane) this.wake(lane);
    });
    c.on("error", lost);
    c.on("end", lost);
    this.listener = c;
    await c.connect();
    await c.query(`listen ${BOSS_CHANNEL}`);
    // Anything committed while not listening is fetched now.
    for (const lane of this.lanes.values()) this.wake(lane);
  }

  /** Fetches the lane's jobs now, or once more after the fetch in progress. */
  private wake(lane: Lane): void {
    if (!this.running) return;
    if (lane.fetching) {
      lane.again = true;
      return;
    }
    lane.fetching = true;
    void this.pump(lane).finally(() => (lane.fetching = false));
  }

  /**
   * Claims the lane's due jobs, oldest first, as many as it has free slots (at most
   * COMMERCE_WEBHOOK_CONCURRENCY in flight per endpoint, MAX_IN_FLIGHT in all), and starts each
   * attempt on its own: no attempt waits for another, and a slow receiver holds only its own
   * endpoint's slots, never another endpoint's events.
   */
  private async pump(lane: Lane): Promise<void> {
    do {
      lane.again = false;
      const room = Math.min(this.perEndpoint - lane.active, MAX_IN_FLIGHT - this.total);
      if (room <= 0) {
        lane.more = true;
        return;
      }
      let jobs: Job[];
      try {
        jobs = await this.boss.fetch<{ deliveryId: string }>(lane.queue, { batchSize: room });
      } catch {
        return; // the database is away: the poll tries again
      }
      lane.more = jobs.length === room;
      if (lane.more) lane.again = true;
      if (!jobs.length) continue;
      // One query reads the batch's deliveries; if it fails, each attempt reads its own.
      const loaded = await this.load(jobs.map((j) => j.data.deliveryId)).catch(() => undefined);
      for (const job of jobs) {
        const d = loaded ? (loaded.get(job.data.deliveryId) ?? null) : undefined;
        this.run(lane, job, d);
      }
    } while (lane.again && this.running);
  }

  private run(lane: Lane, job: Job, loaded: Loaded | null | undefined): void {
    lane.active++;
    this.total++;
    // The endpoint's slot is free once its answer is in (recording it does not load the endpoint);
    // the process's slot once the attempt is recorded.
    let answered = false;
    const sent = () => {
      if (answered) return;
      answered = true;
      lane.active--;
      this.freed();
    };
    const p = this.attempt(job.data.deliveryId, { queue: lane.queue, job, sent }, loaded ?? undefined)
      .catch(() => this.boss.fail(lane.queue, job).catch(() => {}))
      .then(() => {
        this.total--;
        this.settled.delete(p);
        sent();
        this.freed();
      });
    this.settled.add(p);
  }

  /** A slot is free: lanes whose last fetch was cut short by the limits fetch again. */
  private freed(): void {
    for (const l of this.lanes.values()) if (l.more) this.wake(l);
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
      const busy = () => [...this.lanes.values()].some((lane) => lane.fetching) || this.settled.size > 0;
      while (busy()) await Promise.all([...this.settled, new Promise((r) => setTimeout(r, 10))]);
    }
    await this.boss.stop({ graceful: true, timeout: 15_000 });
    this.mailer?.close();
    await this.db.destroy();
  }

  /** The outbox's enqueue hook: one job per delivery on its endpoint's queue, in the caller's transaction. */
  enqueue = async (trx: Transaction<Database>, deliveries: Enqueued[], startAfter?: Date): Promise<void> => {
    // pg-boss's statements run on the caller's transaction: the jobs commit or roll back with it,
    // and so does the NOTIFY each insert sends (delivered at commit).
    const db = fromKysely(trx.withoutPlugins());
    for (const webhook of new Set(deliveries.map((d) => d.webhook))) {
      const jobs = deliveries
        .filter((d) => d.webhook === webhook)
        .map((d) => ({ data: { deliveryId: d.id }, ...(startAfter ? { startAfter } : {}) }));
      await this.boss.insert(queueOf(webhook), jobs, { db });
    }
  };

  /**
   * One attempt of a delivery, recorded with its outcome and the next job when it will retry. The
   * job (when given) is completed in the transaction that records the attempt.
   */
  async attempt(
    deliveryId: string,
    claimed?: { queue: string; job: Job; sent: () => void },
    loaded?: Loaded,
  ): Promise<void> {
    const complete = async (trx: Transaction<Database>) => {
      if (claimed)
        await this.boss.complete(claimed.queue, claimed.job, undefined, {
          db: fromKysely(trx.withoutPlugins()),
        });
    };
    const d = loaded !== undefined ? loaded : (await this.load([deliveryId])).get(deliveryId);
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
    claimed?.sent();
    const attempts = d.attempts + 1;
    const code = r.statusCode;
    if (claimed && code !== undefined && code >= 200 && code < 300) {
      await this.recordSuccess({ deliveryId, attempts, code, durationMs: r.durationMs, ...claimed });
      return;
    }
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

  /** The deliveries (with their event's payload and their endpoint's state) of `ids`, in one query. */
  private async load(ids: string[]): Promise<Map<string, Loaded>> {
    const rows = await this.db
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
      .where("webhookDeliveries.id", "in", ids)
      .execute();
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * Records a successful attempt and completes its job. Successes that finish while a recording
   * is being written are written together in the next transaction (one commit for many).
   */
  private recordSuccess(s: Success): Promise<void> {
    return new Promise((resolve, reject) => {
      this.successes.push({ ...s, at: new Date(), resolve, reject });
      if (!this.recording) void this.flushSuccesses();
    });
  }

  private async flushSuccesses(): Promise<void> {
    this.recording = true;
    try {
      while (this.successes.length) {
        const batch = this.successes.splice(0);
        try {
          await this.db.transaction().execute(async (trx) => {
            await trx
              .insertInto("webhookAttempts")
              .values(
                batch.map((b) => ({
                  deliveryId: b.deliveryId,
                  attempt: b.attempts,
                  statusCode: b.code,
                  error: null,
                  durationMs: b.durationMs,
                  at: b.at,
                })),
              )
              .execute();
            await sql`
              update webhook_deliveries d
                 set status = 'succeeded', attempts = v.attempts, last_status_code = v.code,
                     last_error = null, next_attempt_at = null, updated_at = now()
                from unnest(${batch.map((b) => b.deliveryId)}::text[], ${batch.map((b) => b.attempts)}::int[],
                            ${batch.map((b) => b.code)}::int[]) as v(id, attempts, code)
               where d.id = v.id`.execute(trx);
            const db = fromKysely(trx.withoutPlugins());
            for (const queue of new Set(batch.map((b) => b.queue))) {
              const jobs = batch.filter((b) => b.queue === queue).map((b) => b.job);
              await this.boss.complete(queue, jobs, undefined, { db });
            }
          });
          this.outcomes?.inc({ outcome: "succeeded" }, batch.length);
          for (const b of batch) b.resolve();
        } catch (err) {
          for (const b of batch) b.reject(err);
        }
      }
    } finally {
      this.recording = false;
    }
  }
}
