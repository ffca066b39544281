import { API_VERSION } from "../api/v1alpha1/kind.ts";
import {
  LABEL_MANAGED_BY,
  LABEL_NOTIFICATION_SOURCE,
  LABEL_TASK,
  MANAGED_BY,
} from "../api/v1alpha1/labels.ts";
import { EXECUTION_CACHE, TASK_CACHE } from "../controllers/scheduledtask/cache.ts";
import type { Manager } from "../runtime/manager.ts";
import type { KubeObject, ObjectKey, ResourceType } from "../runtime/types.ts";
import type { NotificationsConfig } from "./config.ts";
import { DeliveryReconciler } from "./deliver.ts";
import { NotificationMetrics } from "./metrics.ts";
import { PlatformNotifier, TaskNotifier, wantsNotifications } from "./notifiers.ts";
import { FetchHttpSender, type HttpSender, type MailSender, SmtpMailSender } from "./senders.ts";

export { DEFAULT_NOTIFICATIONS_CONFIG, type NotificationsConfig } from "./config.ts";

const NOTIFICATION: ResourceType = {
  apiVersion: API_VERSION,
  kind: "Notification",
  plural: "notifications",
  namespaced: true,
};
const TASK: ResourceType = {
  apiVersion: API_VERSION,
  kind: "ScheduledTask",
  plural: "scheduledtasks",
  namespaced: true,
};
const PLATFORM: ResourceType = {
  apiVersion: API_VERSION,
  kind: "ScalePlatform",
  plural: "scaleplatforms",
  namespaced: true,
};
const EXECUTION: ResourceType = {
  apiVersion: API_VERSION,
  kind: "TaskExecution",
  plural: "taskexecutions",
  namespaced: true,
};
const RESTORE: ResourceType = {
  apiVersion: API_VERSION,
  kind: "ScalePlatformRestore",
  plural: "scaleplatformrestores",
  namespaced: true,
};
const MANAGED = `${LABEL_MANAGED_BY}=${MANAGED_BY}`;

/** A restore wakes the platform it restores (RestoreCompleted). */
function byPlatformName(o: KubeObject): ObjectKey[] {
  const name = (o as { spec?: { platformName?: string } }).spec?.platformName;
  return name ? [{ namespace: o.metadata.namespace ?? "", name }] : [];
}

function byLabel(label: string) {
  return (o: KubeObject): ObjectKey[] => {
    const name = o.metadata.labels?.[label];
    return name ? [{ namespace: o.metadata.namespace ?? "", name }] : [];
  };
}

function bySource(kind: string) {
  return (o: KubeObject): ObjectKey[] =>
    (o as { spec?: { source?: { kind?: string } } }).spec?.source?.kind === kind
      ? byLabel(LABEL_NOTIFICATION_SOURCE)(o)
      : [];
}

/** Options of the notification controllers. */
export interface RegisterNotificationOptions {
  config: NotificationsConfig;
  workers?: number;
  /** Senders (SMTP and fetch by default). */
  mail?: MailSender;
  http?: HttpSender;
  /** This replica's leader-election identity (written in delivery claims). */
  identity?: string;
  /** The leader lease's duration (how long a claim of a deposed leader is respected). */
  leaseDurationMs?: number;
}

/**
 * Registers the three notification controllers: "notify-task" and "notify-platform" decide what
 * to announce (they only create Notifications), "notification" delivers them.
 */
export function registerNotificationControllers(manager: Manager, opts: RegisterNotificationOptions): void {
  const metrics = new NotificationMetrics(manager.metrics.registry);
  const timeoutMs = opts.config.httpTimeoutSeconds * 1000;
  const workers = opts.workers ?? 2;
  manager.addController({
    name: "notify-task",
    for: TASK,
    // The task controller's cache of tasks (without managedFields): one shared informer, not a
    // second copy of every task (46 MiB at 10,000 tasks, docs/benchmarks.md).
    forCache: TASK_CACHE,
    // A task without notifications is passed over at once: its events (two per new task: the
    // task, then its status) wake nothing, instead of two passes that find nothing to do.
    forPredicate: wantsNotifications,
    watches: [
      // The task controllers' informer, shared: records without their output (the notifier
      // reads the output of the one record a message quotes).
      { type: EXECUTION, map: byLabel(LABEL_TASK), ...EXECUTION_CACHE },
      { type: NOTIFICATION, map: bySource("ScheduledTask"), labelSelector: MANAGED },
    ],
    reconciler: new TaskNotifier({ config: opts.config, metrics }),
    workers,
  });
  manager.addController({
    name: "notify-platform",
    for: PLATFORM,
    watches: [
      { type: NOTIFICATION, map: bySource("ScalePlatform"), labelSelector: MANAGED },
      { type: RESTORE, map: byPlatformName },
    ],
    reconciler: new PlatformNotifier({ config: opts.config, metrics }),
    workers,
  });
  manager.addController({
    name: "notification",
    for: NOTIFICATION,
    reconciler: new DeliveryReconciler({
      config: opts.config,
      mail: opts.mail ?? new SmtpMailSender(opts.config.email, timeoutMs),
      http: opts.http ?? new FetchHttpSender(timeoutMs),
      metrics,
      identity: opts.identity,
      leaseDurationMs: opts.leaseDurationMs,
    }),
    workers,
  });
}
