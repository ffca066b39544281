import { Counter, Histogram, type Registry } from "prom-client";

/** Delivery metrics per channel, on the operator's /metrics. */
export class NotificationMetrics {
  readonly deliveries: Counter<"channel" | "result">;
  readonly duration: Histogram<"channel">;
  readonly decided: Counter<"event">;

  constructor(registry: Registry) {
    const registers = [registry];
    this.deliveries = new Counter({
      name: "cronscale_notification_deliveries_total",
      help: "Delivery attempts per channel and result (delivered, failed, gave_up)",
      labelNames: ["channel", "result"],
      registers,
    });
    this.duration = new Histogram({
      name: "cronscale_notification_delivery_duration_seconds",
      help: "Time of one delivery attempt per channel",
      labelNames: ["channel"],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.decided = new Counter({
      name: "cronscale_notifications_decided_total",
      help: "Notifications decided (written for delivery) per event",
      labelNames: ["event"],
      registers,
    });
  }

  /** Counts one attempt. */
  observe(channel: string, result: "delivered" | "failed" | "gave_up", seconds: number): void {
    this.deliveries.inc({ channel, result });
    this.duration.observe({ channel }, seconds);
  }
}
