import { createHash } from "node:crypto";

// Names of every child object the operator creates, in one place: a name is part of the API
// (users see it in `kubectl get`), and length limits are checked against the parent's limits.
// Each kind has its own section; add to yours only.

// --- ScheduledTask ---------------------------------------------------------------------------
// The task name is at most 52 characters (CronJob limit); Job names must stay ≤ 63 (they become
// a label value on the pods): a scheduled Job is `<cronjob>-<8+ digit minute>` (made by
// Kubernetes), a manual one `<task>-m-<8 hex>`.

/** The task's CronJob: the task name itself, so `kubectl get cronjob` reads naturally. */
export function taskCronJobName(task: string): string {
  return task;
}

/** ConfigMap holding the script of one configuration revision (immutable, so a running pod keeps its script). */
export function taskScriptConfigMapName(task: string, revision: string): string {
  return `${task}-script-${revision}`;
}

/** Secret holding the inline env values of one configuration revision. */
export function taskEnvSecretName(task: string, revision: string): string {
  return `${task}-env-${revision}`;
}

/**
 * Secret of the env values entered in the dashboard (one key per variable name), owned by the
 * task and referenced from its spec with valueFrom.secretKeyRef, so values never sit in the task.
 */
export function taskDashboardEnvSecretName(task: string): string {
  return `${task}-dashboard-env`;
}

/** Job of a run-now request: deterministic per token, so one token starts exactly one run. */
export function taskManualJobName(task: string, token: string): string {
  return `${task}-m-${createHash("sha256").update(token).digest("hex").slice(0, 8)}`;
}

// 10-digit seconds, inverted so that names sort newest first (the apiserver lists by name).
const INVERT_BASE = 9_999_999_999;

/**
 * TaskExecution of a Job: `<task>-<inverted start second>-<job suffix>`, so that
 * `kubectl get texec -l cronscale.io/task=NAME` lists the newest first.
 */
export function taskExecutionName(task: string, jobName: string, jobCreated: Date): string {
  const inverted = String(INVERT_BASE - Math.floor(jobCreated.getTime() / 1000)).padStart(10, "0");
  const suffix = jobName.startsWith(`${task}-`) ? jobName.slice(task.length + 1) : jobName;
  return `${task}-${inverted}-${suffix}`;
}

// --- ScalePlatform ---------------------------------------------------------------------------
// The instance name is at most 40 characters (CEL on the CRD); the longest suffix below is 15,
// so every child name stays ≤ 55, under the 63 of Service names and StatefulSet pod labels.

/** App Deployment, its Service, Ingress and HPA: the instance name itself. */
export function platformAppName(platform: string): string {
  return platform;
}

/** Database StatefulSet and its headless Service. */
export function platformDatabaseName(platform: string): string {
  return `${platform}-db`;
}

/** PVC of the database pod, as the StatefulSet controller names it (`<claim>-<sts>-0`). */
export function platformDatabasePvcName(platform: string): string {
  return `${PLATFORM_DB_VOLUME}-${platformDatabaseName(platform)}-0`;
}

/** volumeClaimTemplates name of the database StatefulSet. */
export const PLATFORM_DB_VOLUME = "data";

/** ConfigMap with the non-secret platform configuration (config groups, hosts). */
export function platformConfigMapName(platform: string): string {
  return `${platform}-config`;
}

/** Secret with the generated admin credentials and API key (created once, never rewritten). */
export function platformCredentialsSecretName(platform: string): string {
  return `${platform}-credentials`;
}

/** Secret with the generated database user and password (created once, never rewritten). */
export function platformDatabaseSecretName(platform: string): string {
  return `${platform}-db-credentials`;
}

/** cert-manager Certificate and the TLS Secret it writes. */
export function platformTlsName(platform: string): string {
  return `${platform}-tls`;
}

// --- ScalePlatform backups -------------------------------------------------------------------
// Longest suffix: `-backup-full` / `-backup-incr` (12): CronJob names stay ≤ 52, and the Jobs the
// CronJob controller names `<cronjob>-<8+ digits>` stay ≤ 63.

/** Generated encryption passphrase of the backups: NOT owned by the platform (outlives it). */
export function platformBackupKeySecretName(platform: string): string {
  return `${platform}-backup-key`;
}

/** The copy of the default repository's S3 credentials in the platform's namespace. */
export function platformBackupS3SecretName(platform: string): string {
  return `${platform}-backup-s3`;
}

/** ServiceAccount, Role, RoleBinding and runner ConfigMap of the backup Jobs. */
export function platformBackupName(platform: string): string {
  return `${platform}-backup`;
}

/** CronJob of the scheduled full or incremental backups. */
export function platformBackupCronJobName(platform: string, type: "full" | "incr"): string {
  return `${platform}-backup-${type}`;
}

/** The Job of the first full backup, started as soon as the database is ready. */
export function platformFirstBackupJobName(platform: string): string {
  return `${platform}-backup-first`;
}

/** Job of a ScalePlatformBackup (the request's name is at most 60 characters). */
export function platformBackupRequestJobName(request: string): string {
  return `${request}-bk`;
}

/** Job of a ScalePlatformRestore (the restore's name is at most 40 characters). */
export function platformRestoreJobName(restore: string): string {
  return `${restore}-restore`;
}

/** The new database volume a ScalePlatformRestore fills (≤ 40 + 4 + 40 characters). */
export function platformRestoreClaimName(platform: string, restore: string): string {
  return `${platformDatabaseName(platform)}-${restore}`;
}

/** The full backup a ScalePlatformRestore requests right after its cutover. */
export function platformRestoreBackupName(restore: string): string {
  return `${restore}-after`;
}

// --- Notification ----------------------------------------------------------------------------
// One per announced transition: `<source>-<event>-<10 hex>`, the hash over the source's uid, the
// event and the transition's key, so deciding the same transition twice names the same object.

/** Hash of a transition: the Notification's name suffix and its stable id. */
export function notificationHash(sourceUid: string, event: string, transitionKey: string): string {
  return createHash("sha256").update(`${sourceUid}\n${event}\n${transitionKey}`).digest("hex");
}

/** Notification of one transition of a task or platform (≤ 52 + 23 + 11 characters). */
export function notificationName(source: string, event: string, hash: string): string {
  const kebab = event.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase();
  return `${source}-${kebab}-${hash.slice(0, 10)}`;
}
