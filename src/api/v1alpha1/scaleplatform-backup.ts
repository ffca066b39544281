import { z } from "zod";
import { objectName, timestamp } from "./common.ts";
import { SCHEDULE_MAX_LENGTH, scheduleCelRules } from "./schedule-rules.ts";

// spec.backup and status.backup of a ScalePlatform: pgBackRest backups of the platform's
// PostgreSQL into an S3 bucket or a volume, always encrypted, with WAL archiving in between.

/** Default schedules: full daily at 01:00, incremental every other hour at :00 (never both at once). */
export const DEFAULT_FULL_SCHEDULE = "0 1 * * *";
export const DEFAULT_INCREMENTAL_SCHEDULE = "0 0,2-23 * * *";
/** Default retention (30 days; docs/backups.md). */
export const DEFAULT_RETENTION_DAYS = 30;
/** Default archive_timeout: a WAL segment is archived at least this often, bounding the RPO. */
export const DEFAULT_ARCHIVE_TIMEOUT_SECONDS = 60;
/** Most recent backups listed in status. */
export const RECENT_BACKUPS_MAX = 20;

function scheduleField(path: string, def: string, what: string) {
  return z
    .string()
    .min(1)
    .max(SCHEDULE_MAX_LENGTH)
    .default(def)
    .meta({
      "x-kubernetes-validations": scheduleCelRules().map((r) => ({
        ...r,
        message: r.message?.replaceAll("spec.schedule", path),
      })),
    })
    .describe(
      `${what} Five-field cron expression evaluated in the platform's timezone (spec.localization.timezone, default UTC). Default "${def}".`,
    );
}

const s3Schema = z
  .object({
    endpoint: z
      .string()
      .min(1)
      .max(259)
      .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]{1,5})?$/)
      .describe(
        "Host (and optional :port) of the S3 endpoint, e.g. s3.eu-central-1.amazonaws.com or minio.storage.svc:9000. Always HTTPS; buckets are addressed path-style.",
      ),
    bucket: z
      .string()
      .min(3)
      .max(63)
      .regex(/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/)
      .describe("Bucket name; it must exist."),
    region: z
      .string()
      .min(1)
      .max(64)
      .default("us-east-1")
      .describe("Region of the bucket. Default us-east-1."),
    pathPrefix: z
      .string()
      .max(256)
      .regex(/^(\/[A-Za-z0-9._-]+)*$/)
      .default("/cronscale")
      .describe(
        "Path inside the bucket; the repository is <pathPrefix>/<namespace>/<platform name>. Default /cronscale.",
      ),
    credentialsSecretRef: z
      .object({
        name: objectName("Secret in the platform's namespace holding the S3 key pair."),
        accessKeyIdKey: z.string().max(253).default("accessKeyId").describe("Key of the access key id."),
        secretAccessKeyKey: z
          .string()
          .max(253)
          .default("secretAccessKey")
          .describe("Key of the secret access key."),
      })
      .describe("S3 credentials, by reference (values never in the spec or status)."),
    caRef: z
      .object({
        configMapName: objectName("ConfigMap holding the CA bundle (PEM).").optional(),
        secretName: objectName("Secret holding the CA bundle (PEM).").optional(),
        key: z.string().min(1).max(253).default("ca.crt").describe("Key of the PEM bundle. Default ca.crt."),
      })
      .meta({
        "x-kubernetes-validations": [
          {
            rule: "has(self.configMapName) != has(self.secretName)",
            message:
              "spec.backup.repository.s3.caRef: exactly one of configMapName or secretName must be set",
          },
        ],
      })
      .optional()
      .describe(
        "CA that signs the endpoint's certificate, when not a public one (e.g. ConfigMap kube-root-ca.crt for a server with a certificate of the cluster's CA).",
      ),
  })
  .describe("An S3-compatible bucket reached over HTTPS.");

export const backupSpecSchema = z
  .object({
    repository: z
      .object({
        s3: s3Schema.optional(),
        volume: z
          .object({
            claimName: objectName("PersistentVolumeClaim in the platform's namespace; it must exist."),
          })
          .optional()
          .describe(
            "A volume of this cluster. Allowed, but no disaster recovery: the condition BackupHealthy says so.",
          ),
      })
      .meta({
        "x-kubernetes-validations": [
          {
            rule: "has(self.s3) != has(self.volume)",
            message: "spec.backup.repository: exactly one of s3 or volume must be set",
          },
        ],
      })
      .describe("Where backups and archived WAL go: an S3 bucket (recommended) or a volume."),
    schedules: z
      .object({
        full: scheduleField("spec.backup.schedules.full", DEFAULT_FULL_SCHEDULE, "Full backups."),
        incremental: scheduleField(
          "spec.backup.schedules.incremental",
          DEFAULT_INCREMENTAL_SCHEDULE,
          "Incremental backups (changes since the last backup of any type).",
        ),
      })
      .prefault({})
      .describe(
        "When backups run. A run that would start while another backup of the platform runs waits for the next time.",
      ),
    retentionDays: z
      .int()
      .min(1)
      .max(3650)
      .default(DEFAULT_RETENTION_DAYS)
      .describe(
        "Days a point in time stays recoverable: older full backups (and the incrementals and WAL that depend on them) are expired after each backup. Default 30.",
      ),
    archiveTimeoutSeconds: z
      .int()
      .min(10)
      .max(3600)
      .default(DEFAULT_ARCHIVE_TIMEOUT_SECONDS)
      .describe(
        "PostgreSQL archive_timeout: a partly filled WAL segment is archived after this many seconds, which bounds how much recent data a restore can lose. Default 60.",
      ),
    encryptionKeySecretRef: z
      .object({
        name: objectName("Secret holding the passphrase."),
        key: z
          .string()
          .min(1)
          .max(253)
          .default("passphrase")
          .describe("Key of the passphrase. Default passphrase."),
      })
      .optional()
      .describe(
        "Your own encryption passphrase. When omitted, one is generated once into Secret <platform>-backup-key, which the platform does not own (deleting the platform keeps it). Keep a copy outside the cluster: without it the backups cannot be read.",
      ),
  })
  .describe(
    "Backups with pgBackRest: scheduled full and incremental backups plus continuous WAL archiving, encrypted with AES-256-CBC, expired after retentionDays. Omit to have no backups.",
  );

const backupRefSchema = z
  .object({
    label: z.string().max(64).describe("pgBackRest label of the backup, e.g. 20260101-010002F."),
    type: z.enum(["full", "diff", "incr"]).describe("full, diff or incr."),
    startTime: timestamp("When the backup started."),
    stopTime: timestamp("When the backup finished."),
    sizeBytes: z.int().min(0).optional().describe("Size of the database at backup time."),
    repoSizeBytes: z
      .int()
      .min(0)
      .optional()
      .describe("Bytes this backup added to the repository (compressed, encrypted)."),
  })
  .describe("One backup in the repository.");

export const backupStatusSchema = z
  .object({
    repository: z
      .string()
      .max(1024)
      .optional()
      .describe("Where the backups are, e.g. s3://bucket/cronscale/ns/shop."),
    encryptionKeySecretName: z
      .string()
      .max(253)
      .optional()
      .describe("Secret holding the passphrase; set once the key exists and never replaced by a new one."),
    lastSuccessfulBackup: backupRefSchema.optional(),
    lastFailedBackup: z
      .object({
        time: timestamp("When the failed run finished."),
        job: z.string().max(253).describe("Job of the run."),
        message: z.string().max(1024).describe("Why it failed (pgBackRest's error)."),
      })
      .optional()
      .describe("The most recent failed backup run, if it is newer than the last successful one."),
    recoverableFrom: timestamp(
      "Oldest point in time a restore can reach (start of the oldest backup).",
    ).optional(),
    recoverableUntil: timestamp(
      "Newest point a restore can reach, as of the last check (end of the archived WAL).",
    ).optional(),
    lastArchivedTime: timestamp(
      "When PostgreSQL last archived a WAL segment, as of the last check.",
    ).optional(),
    timeline: z
      .int()
      .min(1)
      .optional()
      .describe(
        "PostgreSQL timeline the database serves on, as of the last check (only when the database is the repository's: same system identifier). A restore follows this timeline, never one a failed restore left in the repository.",
      ),
    nextFullBackup: timestamp("Next scheduled full backup.").optional(),
    nextIncrementalBackup: timestamp("Next scheduled incremental backup.").optional(),
    recentBackups: z
      .array(backupRefSchema)
      .max(RECENT_BACKUPS_MAX)
      .optional()
      .describe(
        "The newest backups in the repository, newest first (at most 20): points a restore can choose.",
      ),
  })
  .describe("State of the platform's backups.");

export type BackupSpec = z.output<typeof backupSpecSchema>;
export type BackupStatus = z.output<typeof backupStatusSchema>;
export type BackupRef = z.output<typeof backupRefSchema>;
