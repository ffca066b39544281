import { API_VERSION } from "../api/v1alpha1/kind.ts";
import {
  LABEL_MANAGED_BY,
  LABEL_NOTIFICATION_SOURCE,
  LABEL_NOTIFICATION_SOURCE_KIND,
  LABEL_PLATFORM,
  LABEL_TASK,
  MANAGED_BY,
} from "../api/v1alpha1/labels.ts";
import { notificationHash, notificationName } from "../api/v1alpha1/names.ts";
import type {
  Notification,
  NotificationEventName,
  NotificationRecipients,
  NotificationSpec,
} from "../api/v1alpha1/notification.ts";
import type { KubeObject } from "../runtime/types.ts";

/** What a decision produces: one message about one transition (or a folded run of them). */
export interface Decided {
  event: NotificationEventName;
  /** Identifies the transition among the source's transitions (execution name, timestamp...). */
  key: string;
  count?: number;
  through?: string;
  lastResult?: string;
  subject: string;
  text: string;
  details: Record<string, string>;
  recipients: NotificationRecipients;
}

/** Whether any channel has a recipient. */
export function hasRecipients(r: NotificationRecipients | undefined): boolean {
  return !!r && [r.email, r.webhooks, r.chat, r.sms].some((l) => (l?.length ?? 0) > 0);
}

/** Only the channels with recipients (no empty lists in a spec). */
export function compactRecipients(r: NotificationRecipients): NotificationRecipients {
  const out: NotificationRecipients = {};
  if (r.email?.length) out.email = [...r.email];
  if (r.webhooks?.length) out.webhooks = [...r.webhooks];
  if (r.chat?.length) out.chat = [...r.chat];
  if (r.sms?.length) out.sms = [...r.sms];
  return out;
}

/**
 * The Notification object of a decision: named by a hash of (source uid, event, key) so a
 * second decision of the same transition collides with the first (409) instead of resending;
 * owned by the source so it goes when the source goes.
 */
export function buildNotification(source: KubeObject, d: Decided, now: string): Notification {
  const kind = source.kind as NotificationSpec["source"]["kind"];
  const name = source.metadata.name ?? "";
  const uid = source.metadata.uid ?? "";
  const hash = notificationHash(uid, d.event, d.key);
  const spec: NotificationSpec = {
    id: `notif_${hash.slice(0, 32)}`,
    source: { kind, name, uid },
    event: d.event,
    occurredAt: now,
    count: d.count ?? 1,
    through: d.through,
    lastResult: d.lastResult,
    subject: d.subject.slice(0, 256),
    text: d.text.slice(0, 8192),
    details: d.details,
    recipients: compactRecipients(d.recipients),
  };
  return {
    apiVersion: API_VERSION,
    kind: "Notification",
    metadata: {
      name: notificationName(name, d.event, hash),
      namespace: source.metadata.namespace,
      labels: {
        [LABEL_MANAGED_BY]: MANAGED_BY,
        [LABEL_NOTIFICATION_SOURCE_KIND]: kind,
        [LABEL_NOTIFICATION_SOURCE]: name,
        [kind === "ScheduledTask" ? LABEL_TASK : LABEL_PLATFORM]: name,
      },
      ownerReferences: [
        { apiVersion: source.apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: false },
      ],
    },
    // JSON round trip: no undefined fields in what is sent to the API server.
    spec: JSON.parse(JSON.stringify(spec)) as NotificationSpec,
  };
}

/** Orders Notifications oldest first by decision time, then name. */
export function byOccurred(a: Notification, b: Notification): number {
  return (
    a.spec.occurredAt.localeCompare(b.spec.occurredAt) ||
    (a.metadata.name ?? "").localeCompare(b.metadata.name ?? "")
  );
}
