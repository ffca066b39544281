import { randomUUID } from "node:crypto";
import type { Transaction } from "kysely";
import type { WebhookConfig, WebhookEventName } from "../config.ts";
import type { Database } from "../db/schema.ts";
import type { MailKind } from "../email/mailer.ts";

// The outbox: an event is written in the transaction of the change that caused it (one event row,
// one delivery row per enabled webhook subscribed to it), so a crash after commit loses nothing
// and a rollback sends nothing. The delivery worker (worker.ts) picks the rows up.

/** Wire type of each event (the `type` of the payload): spec.webhooks[].events → type. */
export const EVENT_TYPES: Record<WebhookEventName, string> = {
  OrderCreated: "order.created",
  OrderUpdated: "order.updated",
  PaymentReceived: "payment.received",
  InventoryLow: "inventory.low",
  CustomerRegistered: "customer.registered",
};

/** A delivery to enqueue: its id and its webhook (the endpoint whose concurrency it counts against). */
export interface Enqueued {
  id: string;
  webhook: string;
}

/** Called after the rows are written, inside the same transaction (the worker's wake-up). */
export type EnqueueHook = (
  trx: Transaction<Database>,
  deliveries: Enqueued[],
  startAfter?: Date,
) => Promise<void>;

/** Enqueues a transactional mail in the caller's transaction (set when SMTP is configured). */
export type MailHook = (trx: Transaction<Database>, kind: MailKind, orderId: string) => Promise<void>;

export class Outbox {
  /** The enabled webhooks. */
  readonly webhooks: WebhookConfig[];
  enqueue?: EnqueueHook;
  mail?: MailHook;

  constructor(webhooks: WebhookConfig[]) {
    this.webhooks = webhooks.filter((w) => w.enabled);
  }

  async emit(
    trx: Transaction<Database>,
    event: WebhookEventName,
    data: unknown,
  ): Promise<string | undefined> {
    const targets = this.webhooks.filter((w) => w.events.includes(event));
    if (!targets.length) return undefined;
    const id = `msg_${randomUUID().replaceAll("-", "")}`;
    const type = EVENT_TYPES[event];
    const now = new Date();
    await trx
      .insertInto("webhookEvents")
      .values({
        id,
        type,
        payload: JSON.stringify({ type, timestamp: now.toISOString(), data }),
        createdAt: now,
      })
      .execute();
    const deliveries = targets.map((w) => ({
      id: `dlv_${randomUUID().replaceAll("-", "")}`,
      eventId: id,
      webhook: w.name,
      url: w.url,
      status: "pending" as const,
      nextAttemptAt: now,
      createdAt: now,
      updatedAt: now,
    }));
    await trx.insertInto("webhookDeliveries").values(deliveries).execute();
    await this.enqueue?.(trx, deliveries);
    return id;
  }
}
