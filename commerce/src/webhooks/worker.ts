import { sql, type Transaction } from "kysely";
import { fromKysely, PgBoss } from "pg-boss";
import client from "prom-client";
import type { Config } from "../config.ts";
import type { DB } from "../db/database.ts";
import type { Database } from "../db/schema.ts";
import { Mailer, type MailKind } from "../email/mailer.ts";
import { type Cidr, parseCidrs } from "./destination.ts";
import type { Outbox } from "./outbox.ts";
import { sendOnce, signerFor } from "./send.ts";

// Delivery of the outbox through pg-boss: each attempt is a job, inserted in the transaction that
// wrote the delivery row (or recorded the previous attempt), so no commit ever leaves a delivery
// without a job. A pod dying mid-attempt leaves an active job that pg-boss expires and retries.
// Our delivery row keeps the schedule: backoff with jitter over about three days, Retry-After
// honoured on 429/503, 410 disables the endpoint, the same webhook-id on every attempt.

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
  pollingIntervalSeconds?: number;
  registry?: client.Registry;
}

export class WebhookWorker {
  private readonly db: DB;
  private readonly config: Config;
  private readonly boss: PgBoss;
  private readonly allowed: Cidr[];
  private readonly outcomes?: client.Counter<"outcome">;
  private readonly options: WorkerOptions;

  private readonly mailer?: Mailer;

  constructor(db: DB, config: Config, options: WorkerOptions = {}) {
    this.db = db;
    this.mailer = Mailer.from(db, config);
    this.config = config;
    this.options = options;
    this.allowed = parseCidrs(config.COMMERCE_WEBHOOK_ALLOWED_CIDRS);
    this.boss = new PgBoss({ connectionString: config.databaseUrl, schema: "pgboss", max: 3 });
    if (options.registry) {
      this.outcomes = new client.Counter({
        name: "webhook_delivery_attempts_total",
        help: "Webhook delivery attempts by outcome (succeeded, retry, failed, disabled, refused).",
        labelNames: ["outcome"] as const,
        registers: [options.registry],
      });
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

  /** Starts pg-boss (its schema is migrated under its own lock) and the delivery loop. */
  async start(outbox: Outbox): Promise<void> {
    this.boss.on("error", () => {});
    await this.boss.start();
    if (!(await this.boss.getQueue(QUEUE))) {
      // Job-level retries only cover a worker that died mid-attempt (the job expires).
      await this.boss
        .createQueue(QUEUE, { retryLimit: 5, retryDelay: 30, expireInSeconds: 60 })
        .catch(() => {});
    }
    await this.boss.work<{ deliveryId: string }>(
      QUEUE,
      { pollingIntervalSeconds: this.options.pollingIntervalSeconds ?? 2, batchSize: 10 },
      async (jobs) => {
        await Promise.all(jobs.map((j) => this.attempt(j.data.deliveryId)));
      },
    );
    outbox.enqueue = this.enqueue;
    if (this.mailer) await this.startMail(outbox, this.mailer);
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

  async stop(): Promise<void> {
    await this.boss.stop({ graceful: true, timeout: 15_000 });
    this.mailer?.close();
  }

  /** The outbox's enqueue hook: one job per delivery, in the caller's transaction. */
  enqueue = async (trx: Transaction<Database>, deliveryIds: string[], startAfter?: Date): Promise<void> => {
    // pg-boss's statements run on the caller's transaction: the job commits or rolls back with it.
    const db = fromKysely(trx.withoutPlugins());
    for (const deliveryId of deliveryIds) {
      await this.boss.send(QUEUE, { deliveryId }, { db, ...(startAfter ? { startAfter } : {}) });
    }
  };

  /** One attempt of a delivery, recorded with its outcome and the next job when it will retry. */
  async attempt(deliveryId: string): Promise<void> {
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
    if (d?.status !== "pending") return;
    if (d.disabledAt) {
      await this.finish(deliveryId, "cancelled", { lastError: "endpoint disabled (it answered 410 Gone)" });
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
          await this.enqueue(trx, [deliveryId], at);
        }
      }
      this.outcomes?.inc({ outcome });
    });
  }

  private async finish(
    id: string,
    status: "cancelled" | "failed",
    extra: { lastError: string },
  ): Promise<void> {
    await this.db
      .updateTable("webhookDeliveries")
      .set({ status, ...extra, nextAttemptAt: null, updatedAt: new Date() })
      .where("id", "=", id)
      .execute();
  }
}
