import type { NotificationSpec } from "../api/v1alpha1/notification.ts";

// What each channel receives, built from the Notification's spec alone (pure): the message was
// decided once, so every attempt, by any replica, sends the same bytes apart from the timestamp.

/** Standard Webhooks event type of a Notification event, e.g. TaskFailed → task.failed. */
export function eventType(event: NotificationSpec["event"]): string {
  const [head, ...rest] = event.split(/(?=[A-Z])/);
  return [head?.toLowerCase(), rest.join("_").toLowerCase()].filter(Boolean).join(".");
}

/** The webhook body: the Standard Webhooks payload shape (type, timestamp, data). */
export function webhookBody(spec: NotificationSpec, namespace: string): string {
  return JSON.stringify({
    type: eventType(spec.event),
    timestamp: spec.occurredAt,
    data: {
      id: spec.id,
      event: spec.event,
      source: { kind: spec.source.kind, namespace, name: spec.source.name },
      count: spec.count,
      subject: spec.subject,
      text: spec.text,
      ...spec.details,
    },
  });
}

/** The chat body: a Slack-compatible incoming-webhook message (`text` with mrkdwn bold subject). */
export function chatBody(spec: NotificationSpec): string {
  return JSON.stringify({ text: `*${spec.subject}*\n${spec.text}` });
}

/** Longest SMS text: two concatenated segments. */
export const SMS_MAX_CHARS = 306;

/** The SMS gateway body: `{to, from, text}` with the subject only (a text message is short). */
export function smsBody(spec: NotificationSpec, to: string, from: string): string {
  const text =
    spec.subject.length > SMS_MAX_CHARS ? `${spec.subject.slice(0, SMS_MAX_CHARS - 1)}…` : spec.subject;
  return JSON.stringify({ to, from: from || undefined, text, reference: spec.id });
}
