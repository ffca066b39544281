// Label and annotation keys, in one place; selectors use only these. Each kind has its own
// section; add to yours only.

/** Marks every object the operator creates. */
export const LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
/** Value of LABEL_MANAGED_BY. */
export const MANAGED_BY = "cronscale";

// --- ScheduledTask ---------------------------------------------------------------------------

/** Name of the ScheduledTask a child (ConfigMap, Secret, CronJob, Job, Pod, TaskExecution) belongs to. */
export const LABEL_TASK = "cronscale.io/task";
/** How a Job/Pod/TaskExecution was started: Schedule or Manual. */
export const LABEL_TRIGGER = "cronscale.io/trigger";
/** Result of a TaskExecution (Succeeded, Failed, TimedOut), for `kubectl get texec -l`. */
export const LABEL_RESULT = "cronscale.io/result";
/** On a ScheduledTask: any new value starts one run at once (run-now). */
export const ANNOTATION_RUN_NOW = "cronscale.io/run-now";
/** On a CronJob's Job template and Pod: the configuration revision it runs. */
export const ANNOTATION_CONFIG_REVISION = "cronscale.io/config-revision";
/** On a Job/Pod: the task's timeout in seconds, so a run is judged by the timeout it ran with. */
export const ANNOTATION_TIMEOUT_SECONDS = "cronscale.io/timeout-seconds";
/** On a Job/Pod: the task's language, so a run is recorded with the language it ran in. */
export const ANNOTATION_TASK_LANGUAGE = "cronscale.io/task-language";
/** On a Job/Pod: the task's plan, so a run is recorded (and billed) with the plan it ran on. */
export const ANNOTATION_TASK_PLAN = "cronscale.io/task-plan";

// --- common (recommended labels, https://kubernetes.io/docs/concepts/overview/working-with-objects/common-labels/)

/** Application name label (e.g. commerce, postgres). */
export const LABEL_NAME = "app.kubernetes.io/name";
/** The parent's name: every child of one ScalePlatform/ScheduledTask shares it. */
export const LABEL_INSTANCE = "app.kubernetes.io/instance";
/** Role of a child inside its parent (app, database). */
export const LABEL_COMPONENT = "app.kubernetes.io/component";
/** Larger application the object belongs to. */
export const LABEL_PART_OF = "app.kubernetes.io/part-of";

// --- ScalePlatform ---------------------------------------------------------------------------

/** Name of the ScalePlatform a child belongs to (selectors use it with LABEL_COMPONENT). */
export const LABEL_PLATFORM = "cronscale.io/platform";
/** Values of LABEL_COMPONENT on platform children. */
export const PlatformComponent = { App: "app", Database: "database" } as const;
/** On the app pod template: the plan it was rolled with, so a plan change rolls the pods. */
export const ANNOTATION_PLATFORM_PLAN = "cronscale.io/plan";
/** On the app pod template: hash of the configuration, so a config change rolls the pods. */
export const ANNOTATION_CONFIG_HASH = "cronscale.io/config-hash";
/**
 * On the app pod template: name@resourceVersion of every user Secret the app's env reads, so a
 * rotated SMTP password, signing key or payment credential rolls the pods (env from a Secret is
 * read only when a container starts). Versions, not values: nothing about a secret leaks.
 */
export const ANNOTATION_SECRETS_REVISION = "cronscale.io/secrets-revision";
/** LABEL_COMPONENT of the backup Jobs, their pods, CronJobs and RBAC objects. */
export const BACKUP_COMPONENT = "backup";
/** On a backup Job: the pgBackRest backup type it runs (full or incr). */
export const LABEL_BACKUP_TYPE = "cronscale.io/backup-type";
/** On the Job of a ScalePlatformBackup and its pod: the request's name. */
export const LABEL_BACKUP_REQUEST = "cronscale.io/backup-request";
/** On the Job, pod and volume of a ScalePlatformRestore: the restore's name. */
export const LABEL_RESTORE = "cronscale.io/restore";
/** LABEL_COMPONENT of a restore's Job, pod and volume. */
export const RESTORE_COMPONENT = "restore";
/**
 * On the database StatefulSet: the PVC its data lives on since a restore's cutover (absent: the
 * StatefulSet's own claim). Written by the restore controller, kept by the platform reconciler.
 */
export const ANNOTATION_DATA_CLAIM = "cronscale.io/data-claim";
/**
 * On the app Deployment during a restore's cutover: `<restore>@<RFC 3339 time>`, the app held at
 * zero replicas until then (the platform reconciler does not bring it back up meanwhile; a hold
 * left behind expires by itself). Written and removed by the restore controller.
 */
export const ANNOTATION_RESTORE_HOLD = "cronscale.io/restore-hold";

/** Label selector (query form) of a platform's app pods. */
export function appPodSelector(platformName: string): string {
  return `${LABEL_PLATFORM}=${platformName},${LABEL_COMPONENT}=app`;
}

// --- Notification ----------------------------------------------------------------------------

/** On a Notification: kind of the object it is about (ScheduledTask or ScalePlatform). */
export const LABEL_NOTIFICATION_SOURCE_KIND = "cronscale.io/source-kind";
/** On a Notification: name of the object it is about (tasks also carry LABEL_TASK, platforms LABEL_PLATFORM). */
export const LABEL_NOTIFICATION_SOURCE = "cronscale.io/source";
