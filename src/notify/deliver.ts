import { API_VERSION } from "../api/v1alpha1/kind.ts";
import type {
  Delivery,
  Notification,
  NotificationChannel,
  NotificationStatus,
} from "../api/v1alpha1/notification.ts";
import { backoffDelay } from "../runtime/backoff.ts";
import { formatTime, setCondition } from "../runtime/conditions.ts";
import { errorMessage } from "../runtime/errors.ts";
import type { ObjectKey, ReconcileContext, ReconcileResult, Reconciler } from "../runtime/types.ts";
import type { NotificationsConfig } from "./config.ts";
import type { NotificationMetrics } from "./metrics.ts";
import { chatBody, smsBody, webhookBody } from "./payloads.ts";
import type { HttpSender, MailSender } from "./senders.ts";

// Delivers one Notification to each of its recipients, at least once: an attempt is made only
// for a target the API server still shows undelivered, and each outcome is written back before
// the next target is tried, so a crash resends at most the one message in flight (with the same
// id, which receivers use to recognise it). Failures back off exponentially; the schedule lives
// in status (nextAttemptTime), so a restarted operator or a new leader keeps it.

/** The I/O a delivery needs (real senders in production, recording fakes in unit tests). */
export interface DeliveryDeps {
  config: NotificationsConfig;
  mail: MailSender;
  http: HttpSender;
  metrics?: NotificationMetrics;
  /** Randomness of the retry jitter. */
  random?: () => number;
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

  constructor(deps: DeliveryDeps) {
    this.d = deps;
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
    let status = note.status;
    for (const t of targets) {
      const now = ctx.clock.now();
      const i = deliveries.findIndex((x) => x.target === t.target);
      const cur = deliveries[i] as Delivery;
      if (cur.state !== "Pending" || (cur.nextAttemptTime && Date.parse(cur.nextAttemptTime) > now.getTime()))
        continue;
      const next = await this.attempt(ctx, note, t, cur);
      deliveries = deliveries.map((x, j) => (j === i ? next : x));
      status = await this.write(ctx, note, deliveries, status);
    }
    status = await this.write(ctx, note, deliveries, status);
    const now = ctx.clock.now().getTime();
    const due = deliveries
      .filter((x) => x.state === "Pending" && x.nextAttemptTime)
      .map((x) => Date.parse(x.nextAttemptTime ?? "") - now);
    return due.length ? { requeueAfter: Math.max(250, Math.min(...due)) } : {};
  }

  /** One attempt at one target; returns its new delivery entry. */
  private async attempt(ctx: ReconcileContext, n: Notification, t: Target, cur: Delivery): Promise<Delivery> {
    const now = ctx.clock.now();
    const started = performance.now();
    const attempts = cur.attempts + 1;
    try {
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

  /** Writes status when it changed; returns what is now stored. */
  private async write(
    ctx: ReconcileContext,
    n: Notification,
    deliveries: Delivery[],
    prev: NotificationStatus | undefined,
  ): Promise<NotificationStatus | undefined> {
    const next = summarize(
      deliveries,
      prev,
      this.d.config.retry.failureThreshold,
      n.metadata.generation,
      ctx.clock.now(),
    );
    if (canonical(next) === canonical(prev)) return prev;
    await ctx.client.applyStatus({
      apiVersion: API_VERSION,
      kind: "Notification",
      metadata: { name: n.metadata.name, namespace: n.metadata.namespace },
      status: next,
    });
    return next;
  }
}

/** Phase and Delivered condition of a set of deliveries. */
export function summarize(
  deliveries: Delivery[],
  prev: NotificationStatus | undefined,
  failureThreshold: number,
  generation: number | undefined,
  now: Date,
): NotificationStatus {
  const pending = deliveries.filter((d) => d.state === "Pending");
  const failed = deliveries.filter((d) => d.state === "Failed");
  const failing = pending.filter((d) => d.attempts >= failureThreshold);
  let phase: NotificationStatus["phase"];
  let cond: { status: "True" | "False"; reason: string; message: string };
  if (pending.length === 0 && failed.length === 0) {
    phase = "Delivered";
    cond = { status: "True", reason: "Delivered", message: `delivered to ${deliveries.length} target(s)` };
  } else if (pending.length === 0) {
    phase = "Failed";
    cond = {
      status: "False",
      reason: "DeliveryGaveUp",
      message: failed
        .map((d) => `${d.target}: ${d.message ?? ""}`)
        .join("; ")
        .slice(0, 1000),
    };
  } else if (failing.length > 0) {
    phase = "Retrying";
    cond = {
      status: "False",
      reason: "DeliveryFailing",
      message: failing
        .map((d) => `${d.target}: ${d.attempts} attempts, ${d.message ?? ""}`)
        .join("; ")
        .slice(0, 1000),
    };
  } else {
    phase = pending.some((d) => d.attempts > 0) ? "Retrying" : "Pending";
    cond = {
      status: "False",
      reason: "DeliveryPending",
      message: `${pending.length} target(s) not yet delivered`,
    };
  }
  return {
    phase,
    deliveries,
    conditions: setCondition(prev?.conditions, { type: "Delivered", ...cond }, generation, now),
    observedGeneration: generation,
  };
}

/** JSON with sorted keys: the API server need not keep the key order it was sent. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(
          Object.entries(x as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)),
        )
      : x,
  );
}
