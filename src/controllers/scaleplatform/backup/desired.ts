import {
  BACKUP_COMPONENT,
  LABEL_BACKUP_TYPE,
  LABEL_COMPONENT,
  LABEL_MANAGED_BY,
  LABEL_PLATFORM,
  MANAGED_BY,
} from "../../../api/v1alpha1/labels.ts";
import {
  platformBackupCronJobName,
  platformBackupKeySecretName,
  platformBackupName,
  platformBackupS3SecretName,
  platformDatabaseName,
  platformFirstBackupJobName,
} from "../../../api/v1alpha1/names.ts";
import type { BackupSpec } from "../../../api/v1alpha1/scaleplatform-backup.ts";
import type { KubeObject } from "../../../runtime/types.ts";
import {
  childLabels,
  nameOf,
  ownerRef,
  type PlatformInputs,
  RESTRICTED_CONTAINER,
} from "../desired/common.ts";
import { COPY_KEYS } from "./default.ts";
import { RUNNER_GRACE_SECONDS, RUNNER_SCRIPT } from "./runner.ts";

// The backup children of a platform with spec.backup, all owned by it except the generated key:
// the runner ConfigMap, a ServiceAccount whose Role may exec into the database pod only, the
// full and incremental CronJobs (suspended while the platform is stopped), and the first full
// backup's Job. Pure.

/** Backup types the runner takes (pgBackRest's names). */
export type BackupType = "full" | "incr";

/** Seconds a backup Job may run before Kubernetes stops it. */
export const BACKUP_DEADLINE_SECONDS = 6 * 3600;
/** Finished scheduled Jobs kept per CronJob (the status is derived from them). */
export const JOB_HISTORY = 3;

/** The platform's timezone, which the schedules are evaluated in. */
export function backupTimezone(inp: PlatformInputs): string {
  return inp.spec.localization?.timezone ?? "UTC";
}

/** Labels of every backup object; `type` on Jobs and their pods. */
export function backupLabels(inp: PlatformInputs, type?: BackupType): Record<string, string> {
  return {
    ...childLabels(inp),
    [LABEL_COMPONENT]: BACKUP_COMPONENT,
    ...(type ? { [LABEL_BACKUP_TYPE]: type } : {}),
  };
}

/** Label selector (query form) of a platform's backup Jobs and their pods. */
export function backupSelector(platform: string): string {
  return `${LABEL_PLATFORM}=${platform},${LABEL_COMPONENT}=${BACKUP_COMPONENT},${LABEL_MANAGED_BY}=${MANAGED_BY}`;
}

function meta(inp: PlatformInputs, name: string, type?: BackupType) {
  return {
    name,
    namespace: inp.platform.metadata.namespace,
    labels: backupLabels(inp, type),
    ownerReferences: [ownerRef(inp)],
  };
}

/**
 * The generated encryption passphrase: labelled, but with NO owner reference, so deleting the
 * platform leaves it (and the backups readable). Created once, never updated.
 */
export function desiredKeySecret(inp: PlatformInputs, passphrase: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: platformBackupKeySecretName(nameOf(inp)),
      namespace: inp.platform.metadata.namespace,
      labels: backupLabels(inp),
      annotations: {
        "cronscale.io/purpose":
          "Encryption passphrase of this platform's backups. Not deleted with the platform. Keep a copy outside the cluster: without it the backups cannot be read.",
      },
    },
    type: "Opaque",
    immutable: true,
    stringData: { passphrase },
  };
}

/** The default repository's key pair copied into the platform's namespace; undefined on another repository. */
export function desiredRepositoryCredentials(inp: PlatformInputs): KubeObject | undefined {
  const creds = inp.defaultBackupCredentials;
  if (inp.backupSource !== "default" || !creds) return undefined;
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: meta(inp, platformBackupS3SecretName(nameOf(inp))),
    type: "Opaque",
    data: { [COPY_KEYS.accessKeyId]: creds.accessKeyId, [COPY_KEYS.secretAccessKey]: creds.secretAccessKey },
  };
}

/** RBAC and the runner script of the backup Jobs. */
export function desiredBackupAccess(inp: PlatformInputs): KubeObject[] {
  const name = platformBackupName(nameOf(inp));
  const pod = `${platformDatabaseName(nameOf(inp))}-0`;
  return [
    { apiVersion: "v1", kind: "ConfigMap", metadata: meta(inp, name), data: { "backup.mjs": RUNNER_SCRIPT } },
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: meta(inp, name),
      automountServiceAccountToken: false,
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: meta(inp, name),
      // Least privilege: exec into this platform's database pod, nothing else. The exec WebSocket
      // is opened with a GET, which the API server authorizes as both get and create.
      rules: [{ apiGroups: [""], resources: ["pods/exec"], resourceNames: [pod], verbs: ["get", "create"] }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: meta(inp, name),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [{ kind: "ServiceAccount", name, namespace: inp.platform.metadata.namespace }],
    },
  ];
}

/** Pod template of a backup Job of `type`. */
export function backupPodTemplate(inp: PlatformInputs, type: BackupType) {
  const name = platformBackupName(nameOf(inp));
  return {
    metadata: { labels: backupLabels(inp, type) },
    spec: {
      serviceAccountName: name,
      // The runner needs the token to reach the API server; the Role limits what it can do.
      automountServiceAccountToken: true,
      restartPolicy: "Never",
      // The pause container is PID 1, not the runner: a PID 1 ignores signals it has no handler
      // for, so a SIGTERM that came while Node was starting (a request deleted at once) was lost,
      // and the backup ran to its end. Now it ends the runner before it starts anything.
      shareProcessNamespace: true,
      // Covers the runner's cancel of pgBackRest in the database pod (SIGTERM, then SIGKILL).
      terminationGracePeriodSeconds: RUNNER_GRACE_SECONDS,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 65532,
        runAsGroup: 65532,
        seccompProfile: { type: "RuntimeDefault" },
      },
      containers: [
        {
          name: "backup",
          image: inp.config.images.backupRunner,
          imagePullPolicy: inp.config.imagePullPolicy,
          command: ["node", "/runner/backup.mjs"],
          env: [
            { name: "DB_POD", value: `${platformDatabaseName(nameOf(inp))}-0` },
            { name: "BACKUP_TYPE", value: type },
            // Names this run's files in the database pod (a recreated request reuses the Job name).
            { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
            { name: "NODE_EXTRA_CA_CERTS", value: "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt" },
            {
              name: "JOB_NAME",
              valueFrom: { fieldRef: { fieldPath: "metadata.labels['batch.kubernetes.io/job-name']" } },
            },
            { name: "HOME", value: "/tmp" },
          ],
          resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "250m", memory: "128Mi" } },
          terminationMessagePolicy: "File",
          securityContext: RESTRICTED_CONTAINER,
          volumeMounts: [
            { name: "runner", mountPath: "/runner", readOnly: true },
            { name: "tmp", mountPath: "/tmp" },
          ],
        },
      ],
      volumes: [
        { name: "runner", configMap: { name } },
        { name: "tmp", emptyDir: {} },
      ],
    },
  };
}

/** Spec of a backup Job of `type` (no retries: a failed backup is reported, the next run retries). */
export function backupJobSpec(inp: PlatformInputs, type: BackupType) {
  return {
    backoffLimit: 0,
    activeDeadlineSeconds: BACKUP_DEADLINE_SECONDS,
    template: backupPodTemplate(inp, type),
  };
}

/** The scheduled CronJob of `type`, in the platform's timezone; suspended while stopped. */
export function desiredBackupCronJob(inp: PlatformInputs, backup: BackupSpec, type: BackupType): KubeObject {
  return {
    apiVersion: "batch/v1",
    kind: "CronJob",
    metadata: meta(inp, platformBackupCronJobName(nameOf(inp), type)),
    spec: {
      schedule: type === "full" ? backup.schedules.full : backup.schedules.incremental,
      timeZone: backupTimezone(inp),
      concurrencyPolicy: "Forbid",
      // A stopped database cannot be backed up (and does not change).
      suspend: inp.spec.stopped,
      startingDeadlineSeconds: 600,
      successfulJobsHistoryLimit: JOB_HISTORY,
      failedJobsHistoryLimit: JOB_HISTORY,
      jobTemplate: { metadata: { labels: backupLabels(inp, type) }, spec: backupJobSpec(inp, type) },
    },
  };
}

/** The first full backup, started once the database is ready and no backup Job exists. */
export function desiredFirstBackupJob(inp: PlatformInputs): KubeObject {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: meta(inp, platformFirstBackupJobName(nameOf(inp)), "full"),
    spec: { ...backupJobSpec(inp, "full"), ttlSecondsAfterFinished: 7 * 86400 },
  };
}
