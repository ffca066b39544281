// Condition types and CamelCase reasons, in one place. Each kind has its own section; add to
// yours only.

/** Summary condition every kind carries. */
export const CONDITION_READY = "Ready";

// --- ScheduledTask ---------------------------------------------------------------------------

/** Whether the last finished execution succeeded. */
export const CONDITION_LAST_RUN_SUCCEEDED = "LastRunSucceeded";
/**
 * Whether every env value comes from a Secret: False while some are written inline in the task,
 * which etcd stores unencrypted (a warning pointing to valueFrom.secretKeyRef, not an error).
 */
export const CONDITION_ENV_VALUES_IN_SECRETS = "EnvValuesInSecrets";

/** Whether every run older than the recent window is in the execution archive (when there is one). */
export const CONDITION_ARCHIVED = "Archived";

/** Reasons of ScheduledTask conditions. */
export const TaskReason = {
  /** The CronJob is in place and follows the spec. */
  Scheduled: "Scheduled",
  /** spec.suspend is true: no new runs start. */
  Suspended: "Suspended",
  /** Children are being created. */
  Creating: "Creating",
  /** The schedule is not valid (terminal until the spec changes). */
  InvalidSchedule: "InvalidSchedule",
  /** The timezone is not valid (terminal until the spec changes). */
  InvalidTimezone: "InvalidTimezone",
  /** The spec does not pass the schema (terminal until the spec changes). */
  InvalidSpec: "InvalidSpec",
  /** A child's name is taken by an object the task does not own. */
  NameConflict: "NameConflict",
  /** No execution has finished yet. */
  NoRunYet: "NoRunYet",
  /** Every env value comes from a Secret (or there is none). */
  AllInSecrets: "AllInSecrets",
  /** Some env values are written inline in the task (plain text in etcd). */
  InlineEnvValues: "InlineEnvValues",
  /** The last execution succeeded. */
  Succeeded: "Succeeded",
  /** The last execution failed. */
  Failed: "Failed",
  /** The last execution timed out. */
  TimedOut: "TimedOut",
  /** Runs beyond the recent window are in the execution archive. */
  Archived: "Archived",
  /** The execution archive cannot be reached: runs wait in etcd. */
  ArchiveUnreachable: "ArchiveUnreachable",
} as const;

// --- ScalePlatform ---------------------------------------------------------------------------

/** The seven deployment steps are underway (True while Provisioning or Updating). */
export const CONDITION_PROGRESSING = "Progressing";
/** TLS for the platform hosts is in place (certificate ready or given Secret present). */
export const CONDITION_TLS_READY = "TLSReady";
/** The HPA is in place; the message lists the active triggers. */
export const CONDITION_AUTOSCALING = "AutoscalingActive";
/** The operator's health check of the platform's health endpoint passes. */
export const CONDITION_HEALTHY = "Healthy";
/** The database volume has the size the plan asks for (False when the StorageClass cannot expand). */
export const CONDITION_STORAGE_SIZED = "StorageSized";
/** Every Secret key the spec references (SMTP password, webhook signing keys) exists. */
export const CONDITION_CONFIGURATION_READY = "ConfigurationReady";
/**
 * The plan's edge limits (per-client rate and concurrency, body size) are enforced at the Ingress
 * controller: True for Traefik (Middlewares) and ingress-nginx (annotations); False naming what is
 * not enforced for any other class or without Traefik's Middleware CRD.
 */
export const CONDITION_EDGE_PROTECTED = "EdgeProtected";

/** Reasons of ScalePlatform conditions. */
export const PlatformReason = {
  /** All seven steps done, health check passing. */
  Running: "Running",
  /** First deployment underway. */
  Provisioning: "Provisioning",
  /** A plan change or rollout is underway. */
  Updating: "Updating",
  /** spec.stopped is true: app and database scaled to zero. */
  Stopped: "Stopped",
  /** A step failed; the message says which and why. */
  StepFailed: "StepFailed",
  /** The spec cannot be acted on (terminal until the spec changes). */
  InvalidSpec: "InvalidSpec",
  /** cert-manager's CRDs are not installed and no TLS Secret is given. */
  WaitingForCertManager: "WaitingForCertManager",
  /** The Certificate exists but is not Ready yet. */
  CertificatePending: "CertificatePending",
  /** The Certificate is Ready. */
  CertificateReady: "CertificateReady",
  /** The given spec.tls.secretName is used. */
  UsingExistingSecret: "UsingExistingSecret",
  /** A Secret the spec references (TLS Secret, SMTP password, webhook signing key) does not exist. */
  SecretNotFound: "SecretNotFound",
  /** A referenced Secret exists but lacks the referenced key. */
  SecretKeyNotFound: "SecretKeyNotFound",
  /** Every Secret key the spec references exists (or none is referenced). */
  SecretsResolved: "SecretsResolved",
  /** HPA with CPU and memory only: the cluster serves no custom metrics API. */
  ResourceMetricsOnly: "ResourceMetricsOnly",
  /** HPA with CPU, memory and the custom request metrics. */
  AllMetrics: "AllMetrics",
  /** A custom metrics API is served but has no values for (some of) the app pods' metrics: those are left out. */
  CustomMetricsMissing: "CustomMetricsMissing",
  /** Health endpoint answered 2xx. */
  HealthCheckPassed: "HealthCheckPassed",
  /** Health endpoint failed or timed out. */
  HealthCheckFailed: "HealthCheckFailed",
  /** The PVC was expanded to the plan's size. */
  Expanded: "Expanded",
  /** The PVC was asked to grow and the resize is underway. */
  Expanding: "Expanding",
  /** No health check has run yet. */
  HealthCheckPending: "HealthCheckPending",
  /** No spec.tls and no default issuer in the operator config: served without TLS. */
  NoIssuer: "NoIssuer",
  /** The StorageClass does not allow volume expansion; the volume keeps its size. */
  ExpansionNotSupported: "ExpansionNotSupported",
  /** A child's name is taken by an object the platform does not own. */
  NameConflict: "NameConflict",
  /** A host of the platform is served by another platform: this one is held until it is free. */
  HostConflict: "HostConflict",
} as const;

// --- ScalePlatform backups -------------------------------------------------------------------

/** Backups are configured, current and restorable (False names what is wrong). */
export const CONDITION_BACKUP_HEALTHY = "BackupHealthy";
/** The backup repository is outside the cluster (False: a volume of this cluster). */
export const CONDITION_BACKUP_OFFSITE = "BackupOffsite";

/** Reasons of the backup conditions. */
export const BackupReason = {
  /** The last scheduled backup succeeded and none is overdue. */
  BackupsCurrent: "BackupsCurrent",
  /** No repository: neither spec.backup nor the operator's default repository. */
  NotConfigured: "NotConfigured",
  /** spec.disableBackups: the platform opted out. */
  Disabled: "Disabled",
  /** No backup has completed yet (the first one may be running). */
  NoBackupYet: "NoBackupYet",
  /** The newest backup run failed (not for a repository problem). */
  LastBackupFailed: "LastBackupFailed",
  /** A scheduled backup did not succeed within the grace period. */
  BackupOverdue: "BackupOverdue",
  /** PostgreSQL's archive_command fails: WAL is not reaching the repository. */
  ArchivingFailing: "ArchivingFailing",
  /** The repository cannot be reached or refuses the credentials. */
  RepositoryUnreachable: "RepositoryUnreachable",
  /** The Secret with the encryption passphrase is missing. */
  EncryptionKeyMissing: "EncryptionKeyMissing",
  /** spec.stopped: no backups of a stopped database, and that is fine. */
  PlatformStopped: "PlatformStopped",
  /** Repository in object storage. */
  ObjectStorage: "ObjectStorage",
  /** Repository on a volume of this cluster. */
  VolumeRepository: "VolumeRepository",
} as const;
