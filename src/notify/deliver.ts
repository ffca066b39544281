import { API_VERSION } from "../api/v1alpha1/kind.ts";
import type {
  Delivery,
  Notification,
  NotificationChannel,
  NotificationStatus,
} from "../api/v1alpha1/notification.ts";
import { backoffDelay } from "../runtime/backoff.ts";
import { formatTime } from "../runtime/conditions.ts";
import { errorMessage, isConflict } from "../runtime/errors.ts";
import type { ObjectKey, ReconcileContext, ReconcileResult, Reconciler } from "../runtime/types.ts";
import type { NotificationsConfig } from "./config.ts";
import type { NotificationMetrics } from "./metrics.ts";
import { chatBody, smsBody, webhookBody } from "./payloads.ts";
import type { HttpSender, MailSender } from "./senders.ts";
import { canonical, summarize } from "./status.ts";

// Delivers one Notification to each of its recipients, at least once, and never twice for one
// attempt (docs/notifications.md, "Delivery"):
// - before it sends, a replica claims the target in status (claimedBy: its leader identity, with
//   the resourceVersion it read as a precondition), so two replicas racing through a leader change
//   cannot both start the same attempt; the outcome replaces the claim right after the answer;
// - a replica finding another one's claim (the previous leader died or was deposed mid-attempt)
//   waits until that attempt can no longer be under way (claim + lease duration + send timeout;
//   a sender re-checks its claim's age just before sending), then sends again under the same id;
// - an answer whose status write failed is kept in memory and written without sending again.
// So a copy is repeated only when the process dies between the channel's answer and the write of
// that outcome (one status write long); receivers recognise it by its id. Failures back off
// exponentially; the schedule lives in status (nextAttemptTime), so a new leader keeps it.

/** The I/O a delivery needs (real senders in production, recording fakes in unit tests). */
export interface DeliveryDeps {
  config: NotificationsConfig;
  mail: MailSender;
  http: HttpSender;
  metrics?: NotificationMetrics;
  /** Randomness of the retry jitter. */
  random?: () => number;
  /** This replica's identity (its leader-election identity), written in the claims it makes. */
  identity?: string;
  /**
   * Lease duration of the leader election: how long a deposed leader may still believe it leads.
   * Unset without leader election: this is the only replica, and any other claim is a dead one's.
   */
  leaseDurationMs?: number;
}

/** One recipient of a Notification: its status key, channel and address. */
export interface Target {
  target: string;
  channel: NotificationChannel;
  to: string[];
}

/** The recipients of a Notification as delivery targets (email: one message to all addresses). */
export function targetsOf(n: Notification): Target[] {
  const r = n.spec.recipients;
  const out: Target[] = [];
  if (r.email?.length) out.push({ target: "email", channel: "Email", to: r.email });
  const lists = [
    ["webhook", "Webhook", r.webhooks],
    ["chat", "Chat", r.chat],
    ["sms", "SMS", r.sms],
  ] as const;
  for (const [prefix, channel, list] of lists) {
    for (const [i, to] of (list ?? []).entries()) out.push({ target: `${prefix}-${i}`, channel, to: [to] });
  }
  return out;
}

class NotConfigured extends Error {}

/** The controller of Notifications: sends what is due, records the outcome, schedules retries. */
export class DeliveryReconciler implements Reconciler {
  private readonly d: DeliveryDeps;
  private readonly identity: string;
  /** Accepted deliveries whose status write has not succeeded yet (notification uid/target). */
  private readonly answered = new Map<string, Delivery>();

  constructor(deps: DeliveryDeps) {
    this.d = deps;
    this.identity = deps.identity ?? `cronscale_${process.pid}`;
  }

  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const cached = ctx.cache?.get<Notification>(API_VERSION, "Notification", key.namespace, key.name);
    if (cached && (cached.status?.phase === "Delivered" || cached.status?.phase === "Failed")) return {};
    // The live object, not the cache: a stale cache would resend what was just delivered.
    const note = await ctx.client.get<Notification>(API_VERSION, "Notification", key.namespace, key.name);
    if (!note || note.metadata.deletionTimestamp) return {};
    const targets = targetsOf(note);
    let deliveries = targets.map(
      (t) =>
        note.status?.deliveries?.find((x) => x.target === t.target) ??
        ({ target: t.target, channel: t.channel, state: "Pending", attempts: 0 } as Delivery),
    );
    let stored: Stored = { status: note.status, resourceVersion: note.metadata.resourceVersion };
    const waits: number[] = [];
    for (const t of targets) {
      const now = ctx.clock.now().getTime();
      const i = deliveries.findIndex((x) => x.target === t.target);
      const cur = deliveries[i] as Delivery;
      if (cur.state !== "Pending" || (cur.nextAttemptTime && Date.parse(cur.nextAttemptTime) > now)) continue;
      const mark = `${note.metadata.uid}/${t.target}`;
      let next = this.answered.get(mark);
      if (!next) {
        const settle = this.settleWait(cur, now);
        if (settle > 0) {
          waits.push(settle);
          continue;
        }
        const retaken = cur.claimedBy !== undefined && cur.claimedBy !== this.identity;
        if (retaken)
          ctx.log.warn(
            {
              notification: note.metadata.name,
              target: t.target,
              id: note.spec.id,
              claimedBy: cur.claimedBy,
            },
            "notification attempt of another replica never recorded its outcome: sending again under the same id",
          );
        const claim: Delivery = { ...cur, claimedBy: this.identity, claimedTime: formatTime(new Date(now)) };
        deliveries = deliveries.map((x, j) => (j === i ? claim : x));
        try {
          stored = await this.write(ctx, note, deliveries, stored, true);
        } catch (err) {
          // Another replica wrote in between (its claim or outcome): re-read and decide again.
          if (isConflict(err)) return { requeueAfter: 250 };
          throw err;
        }
        next = await this.attempt(ctx, note, t, cur, now);
        if (next.state === "Delivered") this.answered.set(mark, next);
      }
      deliveries = deliveries.map((x, j) => (j === i ? (next as Delivery) : x));
      stored = await this.write(ctx, note, deliveries, stored, false);
      this.answered.delete(mark);
    }
    stored = await this.write(ctx, note, deliveries, stored, false);
    const now = ctx.clock.now().getTime();
    const due = deliveries
      .filter((x) => x.state === "Pending" && x.nextAttemptTime)
      .map((x) => Date.parse(x.nextAttemptTime ?? "") - now);
    const all = [...due, ...waits];
    return all.length ? { requeueAfter: Math.max(250, Math.min(...all)) } : {};
  }

  /** How long another replica's claim on `cur` must still be respected (0: not claimed, or over). */
  private settleWait(cur: Delivery, now: number): number {
    const ttl = this.d.leaseDurationMs;
    if (ttl === undefined || !cur.claimedBy || cur.claimedBy === this.identity || !cur.claimedTime) return 0;
    return Date.parse(cur.claimedTime) + ttl + this.sendTimeoutMs() - now;
  }

  /** Longest a send can take once started (SMTP's socket timeout is three times the base). */
  private sendTimeoutMs(): number {
    return this.d.config.httpTimeoutSeconds * 3000;
  }

  /** One attempt at one target; returns its new delivery entry. */
  private async attempt(
    ctx: ReconcileContext,
    n: Notification,
    t: Target,
    cur: Delivery,
    claimedAt: number,
  ): Promise<Delivery> {
    const now = ctx.clock.now();
    const started = performance.now();
    const attempts = cur.attempts + 1;
    try {
      // The claim was written moments ago; if it is already older than a lease (this process was
      // paused), another replica may lead by now and will send it: do not race it.
      const ttl = this.d.leaseDurationMs;
      if (ttl !== undefined && now.getTime() - claimedAt >= ttl)
        throw new Error("claim expired before sending (this replica was paused); not sent");
      const answer = await this.send(ctx, n, t, now);
      this.d.metrics?.observe(t.channel, "delivered", (performance.now() - started) / 1000);
      ctx.log.info(
        { notification: n.metadata.name, target: t.target, id: n.spec.id, attempts },
        "notification delivered",
      );
      return {
        target: t.target,
        channel: t.channel,
        state: "Delivered",
        attempts,
        lastAttemptTime: formatTime(now),
        deliveredTime: formatTime(now),
        message: answer.slice(0, 1024),
      };
    } catch (err) {
      const msg = errorMessage(err).slice(0, 900);
      const age = now.getTime() - Date.parse(n.spec.occurredAt);
      const giveUp = err instanceof NotConfigured || age >= this.d.config.retry.giveUpHours * 3_600_000;
      this.d.metrics?.observe(t.channel, giveUp ? "gave_up" : "failed", (performance.now() - started) / 1000);
      const r = this.d.config.retry;
      const delay = backoffDelay(cur.attempts, {
        baseMs: r.baseSeconds * 1000,
        maxMs: r.maxSeconds * 1000,
        random: this.d.random,
      });
      ctx.log.warn(
        { notification: n.metadata.name, target: t.target, attempts, err: msg, giveUp },
        "notification delivery failed",
      );
      const source = {
        apiVersion: API_VERSION,
        kind: n.spec.source.kind,
        metadata: { name: n.spec.source.name, namespace: n.metadata.namespace, uid: n.spec.source.uid },
      };
      await ctx.events.warning(
        source,
        "NotificationDeliveryFailed",
        "Notify",
        `${n.metadata.name} to ${t.target} (${t.channel}), attempt ${attempts}${giveUp ? ", given up" : ""}: ${msg}`,
      );
      return {
        target: t.target,
        channel: t.channel,
        state: giveUp ? "Failed" : "Pending",
        attempts,
        lastAttemptTime: formatTime(now),
        ...(giveUp ? {} : { nextAttemptTime: formatTime(new Date(now.getTime() + Math.max(1000, delay))) }),
        message: msg,
      };
    }
  }

  /** Sends to one target through its channel; resolves with the channel's answer. */
  private async send(ctx: ReconcileContext, n: Notification, t: Target, now: Date): Promise<string> {
    const cfg = this.d.config;
    const ns = n.metadata.namespace ?? "";
    if (t.channel === "Email") {
      if (!cfg.email.host || !cfg.email.from)
        throw new NotConfigured(
          "email is not configured on this operator (notifications.email.host and .from)",
        );
      const password = await this.secret(ctx, cfg.email.passwordSecret);
      return this.d.mail.send(
        {
          to: t.to,
          subject: n.spec.subject,
          text: `${n.spec.text}\n\n--\nNotification ${n.spec.id}`,
          messageId: `<${n.spec.id}@cronscale>`,
          headers: { "X-Cronscale-Notification-Id": n.spec.id, "X-Cronscale-Event": n.spec.event },
        },
        password,
      );
    }
    if (t.channel === "SMS") {
      if (!cfg.sms.url)
        throw new NotConfigured("SMS is not configured on this operator (notifications.sms.url)");
      const token = await this.secret(ctx, cfg.sms.tokenSecret);
      return this.d.http.post({
        url: cfg.sms.url,
        body: smsBody(n.spec, t.to[0] ?? "", cfg.sms.from),
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
    }
    const secret = await this.secret(ctx, cfg.signingSecret);
    const body = t.channel === "Webhook" ? webhookBody(n.spec, ns) : chatBody(n.spec);
    return this.d.http.post({
      url: t.to[0] ?? "",
      body,
      sign: secret ? { id: n.spec.id, secret, at: now } : undefined,
    });
  }

  /** A value from the administrator's Secret (read at each use: rotation needs no restart). */
  private async secret(
    ctx: ReconcileContext,
    ref: { name: string; key: string },
  ): Promise<string | undefined> {
    if (!ref.name) return undefined;
    const ns = this.d.config.secretNamespace;
    const s = await ctx.client.get("v1", "Secret", ns, ref.name);
    const b64 = (s?.data as Record<string, string> | undefined)?.[ref.key];
    if (b64 === undefined) throw new Error(`Secret ${ns}/${ref.name} has no key ${ref.key}`);
    return Buffer.from(b64, "base64").toString("utf8").trim();
  }

  /**
   * Writes status when it changed; returns what is now stored. A claim is written with the
   * resourceVersion last seen as a precondition (409 when another replica wrote in between);
   * an outcome is written unconditionally (it is a fact, whoever records it).
   */
  private async write(
    ctx: ReconcileContext,
    n: Notification,
    deliveries: Delivery[],
    prev: Stored,
    claim: boolean,
  ): Promise<Stored> {
    const next = summarize(
      deliveries,
      prev.status,
      this.d.config.retry.failureThreshold,
      n.metadata.generation,
      ctx.clock.now(),
    );
    if (canonical(next) === canonical(prev.status)) return prev;
    const written = await ctx.client.applyStatus({
      apiVersion: API_VERSION,
      kind: "Notification",
      metadata: {
        name: n.metadata.name,
        namespace: n.metadata.namespace,
        ...(claim ? { resourceVersion: prev.resourceVersion } : {}),
      },
      status: next,
    });
    return { status: next, resourceVersion: written.metadata.resourceVersion };
  }
}

/** The status last written (or read) and the resourceVersion it has. */
interface Stored {
  status: NotificationStatus | undefined;
  resourceVersion: string | undefined;
}
