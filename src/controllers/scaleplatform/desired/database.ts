import { toQuantity } from "../../../api/plans.ts";
import { ANNOTATION_DATA_CLAIM } from "../../../api/v1alpha1/labels.ts";
import {
  PLATFORM_DB_VOLUME,
  platformDatabaseName,
  platformDatabaseSecretName,
} from "../../../api/v1alpha1/names.ts";
import type { KubeObject } from "../../../runtime/types.ts";
import { archiveArgs, pgbackrestEnv, pgbackrestVolumes } from "../backup/pgbackrest.ts";
import {
  childLabels,
  childMeta,
  containerResources,
  nameOf,
  type PlatformInputs,
  RESTRICTED_CONTAINER,
  selectorLabels,
} from "./common.ts";
import { DB_KEYS } from "./credentials.ts";

// PostgreSQL: a one-replica StatefulSet with a volume sized from the plan, and the headless
// Service that gives its pod a stable DNS name. Pure.

/** PostgreSQL's port. */
export const DB_PORT = 5432;

/** Where the image keeps its data (PGDATA is a subdirectory of the mount). */
export const DATA_MOUNT = "/var/lib/postgresql/data";

/** Headless Service of the database (stable name `<platform>-db`). */
export function desiredDatabaseService(inp: PlatformInputs): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: childMeta(inp, platformDatabaseName(nameOf(inp)), "database"),
    spec: {
      clusterIP: "None",
      selector: selectorLabels(inp, "database"),
      ports: [{ name: "postgres", port: DB_PORT, targetPort: DB_PORT, protocol: "TCP" }],
      // The app must reach the database while it starts up; readiness gates the app instead.
      publishNotReadyAddresses: false,
    },
  };
}

/** Pod volume of the database's data after a restore (the claim named by ANNOTATION_DATA_CLAIM). */
export const RESTORED_DATA_VOLUME = "restored-data";

/** The retention policy of the database volume on platform deletion. */
export function pvcRetention(inp: PlatformInputs): "Retain" | "Delete" {
  return inp.spec.database?.pvcRetention ?? inp.config.pvcRetention;
}

/**
 * The database StatefulSet. `templateStorage` is the size in the live StatefulSet's volume claim
 * template (immutable after creation); when absent the plan's size is used. Growth happens on
 * the PVC itself (see the reconciler), not here. `dataClaim` is the PVC a restore's cutover moved
 * the data to (the live StatefulSet's ANNOTATION_DATA_CLAIM): mounted in place of the
 * StatefulSet's own claim, which stays attached but unused (claim templates cannot change).
 */
export function desiredDatabaseStatefulSet(
  inp: PlatformInputs,
  templateStorage?: string,
  dataClaim?: string,
): KubeObject {
  const name = platformDatabaseName(nameOf(inp));
  const secret = platformDatabaseSecretName(nameOf(inp));
  const env = (envName: string, key: string) => ({
    name: envName,
    valueFrom: { secretKeyRef: { name: secret, key } },
  });
  const storageClassName = inp.spec.database?.storageClassName;
  // spec.backup: pgBackRest's environment, WAL archiving and the repository's CA or volume.
  const backup = inp.spec.backup;
  const ns = inp.platform.metadata.namespace ?? "";
  const backupVolumes = backup ? pgbackrestVolumes(backup) : { volumes: [], mounts: [] };
  const dataVolume = dataClaim ? RESTORED_DATA_VOLUME : PLATFORM_DB_VOLUME;
  const restoredVolumes = dataClaim
    ? [{ name: RESTORED_DATA_VOLUME, persistentVolumeClaim: { claimName: dataClaim } }]
    : [];
  const meta: ReturnType<typeof childMeta> & { annotations?: Record<string, string> } = childMeta(
    inp,
    name,
    "database",
  );
  if (dataClaim) meta.annotations = { [ANNOTATION_DATA_CLAIM]: dataClaim };
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: meta,
    spec: {
      serviceName: name,
      replicas: inp.spec.stopped ? 0 : 1,
      selector: { matchLabels: selectorLabels(inp, "database") },
      // whenScaled Retain: stopping the platform scales to 0 and must keep the data.
      persistentVolumeClaimRetentionPolicy: { whenDeleted: pvcRetention(inp), whenScaled: "Retain" },
      template: {
        metadata: { labels: childLabels(inp, "database") },
        spec: {
          // Pod Security "restricted" holds: the image runs as postgres (999), fsGroup makes the
          // volume writable for it, the socket and temp files go to an emptyDir on /tmp.
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 999,
            runAsGroup: 999,
            fsGroup: 999,
            seccompProfile: { type: "RuntimeDefault" },
          },
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: 30,
          containers: [
            {
              name: "postgres",
              image: inp.config.images.database,
              imagePullPolicy: inp.config.imagePullPolicy,
              env: [
                env("POSTGRES_USER", DB_KEYS.user),
                env("POSTGRES_PASSWORD", DB_KEYS.password),
                env("POSTGRES_DB", DB_KEYS.database),
                { name: "PGDATA", value: `${DATA_MOUNT}/pgdata` },
                ...(backup ? pgbackrestEnv(backup, ns, nameOf(inp)) : []),
              ],
              ...(backup ? { args: archiveArgs(backup) } : {}),
              ports: [{ name: "postgres", containerPort: DB_PORT, protocol: "TCP" }],
              resources: containerResources(inp.budget.database, inp.config.requestFraction),
              readinessProbe: {
                exec: { command: ["pg_isready", "-h", "127.0.0.1", "-p", String(DB_PORT)] },
                periodSeconds: 5,
                timeoutSeconds: 3,
              },
              livenessProbe: {
                exec: { command: ["pg_isready", "-h", "127.0.0.1", "-p", String(DB_PORT)] },
                initialDelaySeconds: 30,
                periodSeconds: 20,
                timeoutSeconds: 5,
                failureThreshold: 6,
              },
              securityContext: RESTRICTED_CONTAINER,
              volumeMounts: [
                { name: dataVolume, mountPath: DATA_MOUNT },
                { name: "tmp", mountPath: "/tmp" },
                ...backupVolumes.mounts,
              ],
            },
          ],
          volumes: [{ name: "tmp", emptyDir: {} }, ...restoredVolumes, ...backupVolumes.volumes],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: PLATFORM_DB_VOLUME, labels: childLabels(inp, "database") },
          spec: {
            accessModes: ["ReadWriteOnce"],
            ...(storageClassName ? { storageClassName } : {}),
            resources: {
              requests: { storage: templateStorage ?? toQuantity.storage(inp.budget.database.storageGiB) },
            },
          },
        },
      ],
    },
  };
}

/** A patch that grows the database PVC to the plan's size (applied only when expansion is allowed). */
export function desiredPvcExpansion(inp: PlatformInputs, pvcName: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: pvcName, namespace: inp.platform.metadata.namespace },
    spec: { resources: { requests: { storage: toQuantity.storage(inp.budget.database.storageGiB) } } },
  };
}
