import { platformBackupS3SecretName } from "../../../api/v1alpha1/names.ts";
import type { ScalePlatformSpec } from "../../../api/v1alpha1/scaleplatform.ts";
import { type BackupSpec, backupSpecSchema } from "../../../api/v1alpha1/scaleplatform-backup.ts";
import type { KubeObject, ReconcileContext } from "../../../runtime/types.ts";
import type { PlatformControllerConfig } from "../config.ts";

// Backups are on unless turned off: a platform without spec.backup (and without
// spec.disableBackups) is backed up to the operator's default repository, with the default
// schedules and retention. The repository's S3 key pair lives in a Secret of the operator's
// namespace; each platform gets a copy (<name>-backup-s3) for its database and backup Jobs.

/** Where a platform's backups go. */
export type BackupSource = "spec" | "default" | "disabled" | "none";

/** The default repository's key pair as read from its Secret (base64, as stored). */
export interface DefaultBackupCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** Keys of the copy in the platform's namespace. */
export const COPY_KEYS = { accessKeyId: "accessKeyId", secretAccessKey: "secretAccessKey" } as const;

/** Whether the operator has a default repository configured at all. */
export function defaultRepositoryConfigured(config: PlatformControllerConfig): boolean {
  const s3 = config.defaultBackup.s3;
  return s3.endpoint !== "" && s3.credentialsSecret.name !== "";
}

/**
 * Reads the default repository's key pair; undefined when none is configured, or its Secret or
 * a key is missing (then platforms without spec.backup have no backups, and the status says why:
 * a database told to archive into a repository it cannot reach would not start).
 */
export async function readDefaultBackupCredentials(
  ctx: ReconcileContext,
  config: PlatformControllerConfig,
  spec: ScalePlatformSpec,
): Promise<DefaultBackupCredentials | undefined> {
  if (spec.backup || spec.disableBackups || !defaultRepositoryConfigured(config)) return undefined;
  const ref = config.defaultBackup.s3.credentialsSecret;
  const secret = await ctx.client.get<KubeObject & { data?: Record<string, string> }>(
    "v1",
    "Secret",
    ref.namespace,
    ref.name,
  );
  const accessKeyId = secret?.data?.[ref.accessKeyIdKey];
  const secretAccessKey = secret?.data?.[ref.secretAccessKeyKey];
  return accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined;
}

/** Where the platform's backups go, given the default repository's key pair (if readable). */
export function backupSource(
  spec: ScalePlatformSpec,
  creds: DefaultBackupCredentials | undefined,
): BackupSource {
  if (spec.backup) return "spec";
  if (spec.disableBackups) return "disabled";
  return creds ? "default" : "none";
}

/** spec.backup of a platform on the default repository (defaults of the API: schedules, retention). */
export function defaultBackupSpec(config: PlatformControllerConfig, platform: string): BackupSpec {
  const s3 = config.defaultBackup.s3;
  return backupSpecSchema.parse({
    repository: {
      s3: {
        endpoint: s3.endpoint,
        bucket: s3.bucket,
        region: s3.region,
        pathPrefix: s3.pathPrefix,
        credentialsSecretRef: {
          name: platformBackupS3SecretName(platform),
          accessKeyIdKey: COPY_KEYS.accessKeyId,
          secretAccessKeyKey: COPY_KEYS.secretAccessKey,
        },
        ...(s3.caConfigMapName ? { caRef: { configMapName: s3.caConfigMapName, key: s3.caKey } } : {}),
      },
    },
  });
}

/** The spec with the backup in force: the user's, the default repository's, or none. */
export function withEffectiveBackup(
  spec: ScalePlatformSpec,
  config: PlatformControllerConfig,
  platform: string,
  creds: DefaultBackupCredentials | undefined,
): ScalePlatformSpec {
  if (backupSource(spec, creds) !== "default") return spec;
  return { ...spec, backup: defaultBackupSpec(config, platform) };
}

/** Why a platform has no backups, for BackupHealthy=False. */
export function noBackupReason(
  source: BackupSource,
  config: PlatformControllerConfig,
): { reason: "Disabled" | "NotConfigured"; message: string } {
  if (source === "disabled")
    return {
      reason: "Disabled",
      message:
        "backups are turned off for this platform (spec.disableBackups): no backups, no WAL archive, no restores; a lost volume is lost for good",
    };
  if (defaultRepositoryConfigured(config)) {
    const ref = config.defaultBackup.s3.credentialsSecret;
    return {
      reason: "NotConfigured",
      message: `no backups: the operator's default repository needs Secret ${ref.namespace}/${ref.name} with keys ${ref.accessKeyIdKey} and ${ref.secretAccessKeyKey}; or set spec.backup`,
    };
  }
  return {
    reason: "NotConfigured",
    message:
      "no backups: no repository is configured. Set the operator's default repository (chart values backup.defaultRepository: S3 endpoint, bucket, credentials Secret) or spec.backup on this platform",
  };
}
