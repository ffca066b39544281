import { platformBackupKeySecretName, platformDatabaseSecretName } from "../../../api/v1alpha1/names.ts";
import type { BackupSpec } from "../../../api/v1alpha1/scaleplatform-backup.ts";
import { DB_KEYS } from "../desired/credentials.ts";

// pgBackRest in the database container: every option as a PGBACKREST_* environment variable
// (secrets through secretKeyRef, so no config file holds a key), WAL archiving through
// archive_command, the CA bundle and a volume repository as mounts. Commands exec'd into the
// container (the backup Jobs) inherit the same environment. Pure.

/** The pgBackRest stanza of a platform's database (one cluster per repository path). */
export const STANZA = "db";
/** Where the CA bundle of the S3 endpoint is mounted. */
export const CA_DIR = "/etc/pgbackrest/ca";
/** Where a volume repository is mounted. */
export const VOLUME_REPO_MOUNT = "/var/lib/pgbackrest";
/** Data directory, as the database StatefulSet sets PGDATA. */
const PG_DATA = "/var/lib/postgresql/data/pgdata";
/** Cipher of the repository; pgBackRest's only one. */
export const CIPHER = "aes-256-cbc";

type EnvVar = { name: string; value?: string; valueFrom?: object };

/** Where the platform's repository lives: `<pathPrefix or "">/<namespace>/<platform>`. */
export function repositoryPath(backup: BackupSpec, namespace: string, platform: string): string {
  const prefix = backup.repository.s3 ? backup.repository.s3.pathPrefix : VOLUME_REPO_MOUNT;
  return `${prefix}/${namespace}/${platform}`;
}

/** Human-readable repository location (status.backup.repository). */
export function repositoryUrl(backup: BackupSpec, namespace: string, platform: string): string {
  const s3 = backup.repository.s3;
  if (s3) return `s3://${s3.bucket}${repositoryPath(backup, namespace, platform)} (https://${s3.endpoint})`;
  return `pvc://${backup.repository.volume?.claimName}/${namespace}/${platform}`;
}

/** Secret and key of the encryption passphrase: the user's, or the generated one. */
export function keyRef(backup: BackupSpec, platform: string): { name: string; key: string } {
  return backup.encryptionKeySecretRef ?? { name: platformBackupKeySecretName(platform), key: "passphrase" };
}

/** The PGBACKREST_* (and libpq) environment of the database container. */
export function pgbackrestEnv(backup: BackupSpec, namespace: string, platform: string): EnvVar[] {
  const fromSecret = (name: string, secret: string, key: string): EnvVar => ({
    name,
    valueFrom: { secretKeyRef: { name: secret, key } },
  });
  const db = platformDatabaseSecretName(platform);
  const key = keyRef(backup, platform);
  const env: EnvVar[] = [
    { name: "PGBACKREST_STANZA", value: STANZA },
    { name: "PGBACKREST_PG1_PATH", value: PG_DATA },
    { name: "PGBACKREST_PG1_SOCKET_PATH", value: "/tmp" },
    fromSecret("PGBACKREST_PG1_USER", db, DB_KEYS.user),
    // libpq reads it: pgBackRest connects over the Unix socket, where scram-sha-256 applies too.
    fromSecret("PGPASSWORD", db, DB_KEYS.password),
    // With that password, every libpq client of the container needs the user it belongs to: the
    // probes' pg_isready would otherwise log in as the OS user "postgres" (no such role) with it,
    // and the server would log "password authentication failed" at every probe.
    fromSecret("PGUSER", db, DB_KEYS.user),
    { name: "PGBACKREST_LOCK_PATH", value: "/tmp/pgbackrest/lock" },
    { name: "PGBACKREST_LOG_PATH", value: "/tmp/pgbackrest/log" },
    { name: "PGBACKREST_LOG_LEVEL_FILE", value: "off" },
    { name: "PGBACKREST_LOG_LEVEL_CONSOLE", value: "info" },
    { name: "PGBACKREST_START_FAST", value: "y" },
    { name: "PGBACKREST_COMPRESS_TYPE", value: "lz4" },
    { name: "PGBACKREST_REPO1_PATH", value: repositoryPath(backup, namespace, platform) },
    { name: "PGBACKREST_REPO1_CIPHER_TYPE", value: CIPHER },
    fromSecret("PGBACKREST_REPO1_CIPHER_PASS", key.name, key.key),
    { name: "PGBACKREST_REPO1_RETENTION_FULL_TYPE", value: "time" },
    { name: "PGBACKREST_REPO1_RETENTION_FULL", value: String(backup.retentionDays) },
  ];
  const s3 = backup.repository.s3;
  if (s3) {
    const [host, port] = s3.endpoint.split(":");
    env.push(
      { name: "PGBACKREST_REPO1_TYPE", value: "s3" },
      { name: "PGBACKREST_REPO1_S3_ENDPOINT", value: host ?? s3.endpoint },
      { name: "PGBACKREST_REPO1_S3_BUCKET", value: s3.bucket },
      { name: "PGBACKREST_REPO1_S3_REGION", value: s3.region },
      { name: "PGBACKREST_REPO1_S3_URI_STYLE", value: "path" },
      fromSecret(
        "PGBACKREST_REPO1_S3_KEY",
        s3.credentialsSecretRef.name,
        s3.credentialsSecretRef.accessKeyIdKey,
      ),
      fromSecret(
        "PGBACKREST_REPO1_S3_KEY_SECRET",
        s3.credentialsSecretRef.name,
        s3.credentialsSecretRef.secretAccessKeyKey,
      ),
    );
    if (port) env.push({ name: "PGBACKREST_REPO1_STORAGE_PORT", value: port });
    if (s3.caRef) env.push({ name: "PGBACKREST_REPO1_STORAGE_CA_FILE", value: `${CA_DIR}/ca.crt` });
  } else {
    env.push({ name: "PGBACKREST_REPO1_TYPE", value: "posix" });
  }
  return env;
}

/** `postgres -c` arguments that turn on WAL archiving through pgBackRest. */
export function archiveArgs(backup: BackupSpec): string[] {
  return [
    "-c",
    "archive_mode=on",
    "-c",
    "archive_command=pgbackrest archive-push %p",
    "-c",
    `archive_timeout=${backup.archiveTimeoutSeconds}`,
  ];
}

/** Volumes and mounts of the database pod for the repository's CA or volume. */
export function pgbackrestVolumes(backup: BackupSpec): { volumes: object[]; mounts: object[] } {
  const s3 = backup.repository.s3;
  if (s3?.caRef) {
    const items = [{ key: s3.caRef.key, path: "ca.crt" }];
    const source = s3.caRef.configMapName
      ? { configMap: { name: s3.caRef.configMapName, items } }
      : { secret: { secretName: s3.caRef.secretName, items } };
    return {
      volumes: [{ name: "backup-ca", ...source }],
      mounts: [{ name: "backup-ca", mountPath: CA_DIR, readOnly: true }],
    };
  }
  const claim = backup.repository.volume?.claimName;
  if (claim) {
    return {
      volumes: [{ name: "backup-repo", persistentVolumeClaim: { claimName: claim } }],
      mounts: [{ name: "backup-repo", mountPath: VOLUME_REPO_MOUNT }],
    };
  }
  return { volumes: [], mounts: [] };
}
