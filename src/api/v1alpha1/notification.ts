import { z } from "zod";
import type { KubeObject } from "../../runtime/types.ts";
import { conditionsSchema, observedGenerationSchema, timestamp } from "./common.ts";
import { defineKind } from "./kind.ts";

// Notifications (docs/notifications.md): who is told what, on the ScheduledTask and ScalePlatform
// themselves, and the Notification kind: one object per message to send, written to the API
// server BEFORE anything is sent, so a restart or a new leader finds what is still undelivered.
// Its name is derived from the transition it announces, so deciding twice creates it once.

/** Channels a message can go out on; each is configured once by the operator's administrator. */
export const NOTIFICATION_CHANNELS = ["Email", "Webhook", "Chat", "SMS"] as const;
/** One channel. */
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number];

/** What a ScheduledTask can notify about. */
export const TASK_NOTIFICATION_EVENTS = ["Failure", "Timeout", "Recovery", "EveryRun"] as const;
/** One task event selector. */
export type TaskNotificationEvent = (typeof TASK_NOTIFICATION_EVENTS)[number];

/**
 * What a ScalePlatform can notify about (src/notify/platform.ts and backup.ts decide when).
 */
export const PLATFORM_NOTIFICATION_EVENTS = [
  "DeploymentCompleted",
  "PlanUpgradeCompleted",
  "HealthCheckFailing",
  "HealthCheckRecovered",
  "BackupFailed",
  "BackupRecovered",
  "RestoreCompleted",
] as const;
/** One platform event. */
export type PlatformNotificationEvent = (typeof PLATFORM_NOTIFICATION_EVENTS)[number];

/** Events a Notification object can carry. */
export const NOTIFICATION_EVENTS = [
  "TaskFailed",
  "TaskTimedOut",
  "TaskRecovered",
  "TaskSucceeded",
  ...PLATFORM_NOTIFICATION_EVENTS,
] as const;
/** One event of a Notification. */
export type NotificationEventName = (typeof NOTIFICATION_EVENTS)[number];

/** Most recipients of one channel. */
export const MAX_RECIPIENTS = 10;

const httpUrl = (description: string) =>
  z
    .string()
    .min(8)
    .max(2048)
    .regex(/^https?:\/\/[^\s]+$/)
    .describe(description);

/** Recipients per channel, shared by tasks and platforms. */
export const recipientsShape = {
  email: z
    .array(z.email().max(254))
    .max(MAX_RECIPIENTS)
    .meta({ "x-kubernetes-list-type": "set" })
    .optional()
    .describe("Email addresses to notify (one message to all of them)."),
  webhooks: z
    .array(httpUrl("URL receiving a signed JSON POST."))
    .max(MAX_RECIPIENTS)
    .meta({ "x-kubernetes-list-type": "set" })
    .optional()
    .describe(
      "URLs that receive each notification as a JSON POST signed the Standard Webhooks way (webhook-id, webhook-timestamp, webhook-signature headers; verify with the secret your operator administrator gives you). webhook-id is stable per notification: a retried delivery carries the same id.",
    ),
  chat: z
    .array(httpUrl("A Slack-compatible incoming-webhook URL."))
    .max(MAX_RECIPIENTS)
    .meta({ "x-kubernetes-list-type": "set" })
    .optional()
    .describe(
      'Slack-compatible incoming-webhook URLs (Slack, Mattermost, Rocket.Chat...): each receives {"text": ...}, signed like webhooks.',
    ),
};

/** The recipients part of a spec.notifications (what the delivery needs). */
export const notificationRecipientsSchema = z
  .object({
    ...recipientsShape,
    sms: z
      .array(
        z
          .string()
          .max(16)
          .regex(/^\+[1-9][0-9]{6,14}$/),
      )
      .max(MAX_RECIPIENTS)
      .meta({ "x-kubernetes-list-type": "set" })
      .optional()
      .describe("Phone numbers in E.164 form (e.g. +4915112345678) that receive a short text."),
  })
  .describe("Who received the notification, per channel.");

/** spec.notifications of a ScheduledTask. */
export const taskNotificationsSchema = z
  .object({
    ...recipientsShape,
    on: z
      .array(z.enum(TASK_NOTIFICATION_EVENTS))
      .max(4)
      .meta({ "x-kubernetes-list-type": "set" })
      .default(["Failure", "Timeout", "Recovery"])
      .describe(
        "When to notify: Failure (a run failed), Timeout (a run was stopped at its timeout), Recovery (the first success after failures), EveryRun (every finished run). Default Failure, Timeout and Recovery.",
      ),
    foldMinutes: z
      .int()
      .min(1)
      .max(1440)
      .default(60)
      .describe(
        "While a task keeps failing, at most one message per this many minutes: the first failure is sent at once, later ones are counted and sent together when the interval ends (or with the recovery). Default 60.",
      ),
  })
  .describe(
    "Who is told about this task's runs, and when. Each message names the task and its namespace and carries the run's result, exit code, duration and the end of its output (secrets masked).",
  );

/** spec.notifications of a ScalePlatform (SMS is checked against the plan on the spec). */
export const platformNotificationsSchema = z
  .object({
    ...notificationRecipientsSchema.shape,
    events: z
      .array(z.enum(PLATFORM_NOTIFICATION_EVENTS))
      .max(PLATFORM_NOTIFICATION_EVENTS.length)
      .meta({ "x-kubernetes-list-type": "set" })
      .optional()
      .describe(
        "Events to notify about; default all: DeploymentCompleted (summary, URLs and cost estimate, never credentials), PlanUpgradeCompleted, HealthCheckFailing, HealthCheckRecovered (with the downtime), BackupFailed, BackupRecovered, RestoreCompleted.",
      ),
    foldMinutes: z
      .int()
      .min(1)
      .max(1440)
      .default(60)
      .describe(
        "While the health check flaps, at most one outage alert per this many minutes: the first outage is announced at once with its recovery; outages starting within the interval after that alert are counted and sent as one message (with their total downtime) when the interval ends. Default 60.",
      ),
  })
  .describe(
    "Who is told about this platform. Without any recipient, the deployment completion email goes to spec.store.contactEmail. SMS needs plan Enterprise or Custom.",
  );

/** CEL on a ScalePlatform spec: SMS only on the plans that include it. */
export const SMS_PLAN_RULE = {
  rule: "!has(self.notifications) || !has(self.notifications.sms) || size(self.notifications.sms) == 0 || self.plan in ['Enterprise', 'Custom']",
  messageExpression:
    "'spec.notifications.sms: SMS notifications need plan Enterprise or Custom; this platform is on plan ' + self.plan",
  fieldPath: ".notifications.sms",
  reason: "FieldValueForbidden" as const,
};

/** Delivery states of one target. */
export const DELIVERY_STATES = ["Pending", "Delivered", "Failed"] as const;
/** One delivery state. */
export type DeliveryState = (typeof DELIVERY_STATES)[number];
/** Phases of a Notification. */
export const NOTIFICATION_PHASES = ["Pending", "Delivered", "Retrying", "Failed"] as const;
/** One phase. */
export type NotificationPhase = (typeof NOTIFICATION_PHASES)[number];

/** spec of a Notification: the message, decided once and never changed. */
export const notificationSpecSchema = z
  .object({
    id: z
      .string()
      .min(1)
      .max(128)
      .describe("Stable id of the transition announced (webhook-id, email Message-ID): duplicates share it."),
    source: z
      .object({
        kind: z.enum(["ScheduledTask", "ScalePlatform"]).describe("Kind of the object the message is about."),
        name: z.string().min(1).max(253).describe("Its name (same namespace)."),
        uid: z.string().max(64).optional().describe("Its uid."),
      })
      .describe("The object the message is about."),
    event: z.enum(NOTIFICATION_EVENTS).describe("What happened."),
    occurredAt: timestamp("When the operator decided to send the message."),
    count: z
      .int()
      .min(1)
      .default(1)
      .describe("How many transitions the message reports (more than 1 when a storm was folded)."),
    through: z
      .string()
      .max(512)
      .optional()
      .describe("The last transition covered (for tasks: completion time and TaskExecution name)."),
    lastResult: z
      .string()
      .max(32)
      .optional()
      .describe("For tasks: the result of the last run covered (Succeeded, Failed or TimedOut)."),
    subject: z
      .string()
      .min(1)
      .max(256)
      .describe("One line: the email subject and the first line of the chat text."),
    text: z
      .string()
      .max(8192)
      .describe("The message body in plain text (secrets masked, never credentials)."),
    details: z
      .record(z.string().max(63), z.string().max(4096))
      .meta({ maxProperties: 32 })
      .optional()
      .describe("Structured fields of the message (the webhook payload's data)."),
    recipients: notificationRecipientsSchema,
  })
  .describe("A message decided once from a transition of a task or platform.");

const deliverySchema = z
  .object({
    target: z
      .string()
      .min(1)
      .max(64)
      .describe("Which recipient: email, webhook-<n>, chat-<n> or sms-<n> (n indexes spec.recipients)."),
    channel: z.enum(NOTIFICATION_CHANNELS).describe("Channel of the target."),
    state: z.enum(DELIVERY_STATES).describe("Pending (not yet or retrying), Delivered or Failed (given up)."),
    attempts: z.int().min(0).describe("Attempts made."),
    lastAttemptTime: timestamp("When the last attempt was made.").optional(),
    nextAttemptTime: timestamp("When the next attempt is due (backoff).").optional(),
    deliveredTime: timestamp("When the channel accepted the message.").optional(),
    claimedBy: z
      .string()
      .max(253)
      .optional()
      .describe(
        "Identity of the operator replica whose attempt is in flight (written before it sends, cleared with the outcome). A replica that takes over finds it, waits until that attempt can no longer be under way, then sends again under the same id.",
      ),
    claimedTime: timestamp("When the attempt in flight was claimed (see claimedBy).").optional(),
    message: z.string().max(1024).optional().describe("The last error, or what the channel answered."),
  })
  .describe("Delivery of the message to one recipient.");

/** status of a Notification. */
export const notificationStatusSchema = z
  .object({
    phase: z
      .enum(NOTIFICATION_PHASES)
      .optional()
      .describe("Pending, Delivered (every target), Retrying (an attempt failed) or Failed (gave up)."),
    deliveries: z
      .array(deliverySchema)
      .max(4 * 10 + 1)
      .meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["target"] })
      .optional()
      .describe("One entry per recipient."),
    conditions: conditionsSchema("Delivered: True once every target accepted the message.").optional(),
    observedGeneration: observedGenerationSchema.optional(),
  })
  .describe("Delivery progress, written by the operator after each attempt.");

/** The Notification kind (short name notif). */
export const notificationKind = defineKind({
  kind: "Notification",
  plural: "notifications",
  singular: "notification",
  shortNames: ["notif"],
  categories: ["cronscale"],
  scope: "Namespaced",
  description:
    "One message about a ScheduledTask or ScalePlatform (a failure, a recovery, a completed deployment...) and its delivery to email, webhook, chat and SMS. Written before sending, so nothing is lost across an operator restart; owned by the object it is about.",
  specSchema: notificationSpecSchema,
  statusSchema: notificationStatusSchema,
  printerColumns: [
    {
      name: "Source",
      type: "string",
      jsonPath: ".spec.source.name",
      description: "Object the message is about.",
    },
    { name: "Event", type: "string", jsonPath: ".spec.event", description: "What happened." },
    { name: "Count", type: "integer", jsonPath: ".spec.count", description: "Transitions reported." },
    { name: "Status", type: "string", jsonPath: ".status.phase", description: "Delivery phase." },
    {
      name: "Subject",
      type: "string",
      jsonPath: ".spec.subject",
      description: "The message's subject.",
      priority: 1,
    },
  ],
});

/** A Notification as read from the API server. */
export type Notification = KubeObject & { spec: NotificationSpec; status?: NotificationStatus };
/** The message. */
export type NotificationSpec = z.output<typeof notificationSpecSchema>;
/** Delivery progress. */
export type NotificationStatus = z.output<typeof notificationStatusSchema>;
/** One delivery entry. */
export type Delivery = z.output<typeof deliverySchema>;
/** Recipients per channel. */
export type NotificationRecipients = z.output<typeof notificationRecipientsSchema>;
/** spec.notifications of a task. */
export type TaskNotifications = z.output<typeof taskNotificationsSchema>;
/** spec.notifications of a platform. */
export type PlatformNotifications = z.output<typeof platformNotificationsSchema>;
