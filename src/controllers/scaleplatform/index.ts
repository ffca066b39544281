import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import {
  LABEL_BACKUP_REQUEST,
  LABEL_MANAGED_BY,
  LABEL_PLATFORM,
  LABEL_RESTORE,
  MANAGED_BY,
} from "../../api/v1alpha1/labels.ts";
import type { Manager } from "../../runtime/manager.ts";
import type { KubeObject, ObjectKey, ResourceType } from "../../runtime/types.ts";
import { BackupMetrics } from "./backup/metrics.ts";
import { BackupRequestReconciler } from "./backup/request.ts";
import type { PlatformControllerConfig } from "./config.ts";
import type { HealthProbe } from "./health.ts";
import { ScalePlatformReconciler } from "./reconciler.ts";
import { RestoreReconciler } from "./restore/reconciler.ts";

export {
  DEFAULT_PLATFORM_CONFIG,
  type PlatformControllerConfig,
  platformControllerConfigFrom,
} from "./config.ts";

const PLATFORM: ResourceType = {
  apiVersion: API_VERSION,
  kind: "ScalePlatform",
  plural: "scaleplatforms",
  namespaced: true,
};

// Children whose changes must wake the platform up. The Certificate is not watched: its CRD may
// be absent (an informer on a missing type only retries); the reconciler reads it directly and
// requeues every 2 s while a step is underway.
const CHILDREN: ResourceType[] = [
  { apiVersion: "apps/v1", kind: "Deployment", plural: "deployments", namespaced: true },
  { apiVersion: "apps/v1", kind: "StatefulSet", plural: "statefulsets", namespaced: true },
  { apiVersion: "v1", kind: "Service", plural: "services", namespaced: true },
  { apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true },
  { apiVersion: "v1", kind: "Secret", plural: "secrets", namespaced: true },
  { apiVersion: "v1", kind: "Pod", plural: "pods", namespaced: true },
  { apiVersion: "v1", kind: "PersistentVolumeClaim", plural: "persistentvolumeclaims", namespaced: true },
  { apiVersion: "networking.k8s.io/v1", kind: "Ingress", plural: "ingresses", namespaced: true },
  {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    plural: "horizontalpodautoscalers",
    namespaced: true,
  },
  {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    plural: "poddisruptionbudgets",
    namespaced: true,
  },
  // Backups (spec.backup): the CronJobs, their Jobs (whose pods are above) and the runner's RBAC.
  { apiVersion: "batch/v1", kind: "CronJob", plural: "cronjobs", namespaced: true },
  { apiVersion: "batch/v1", kind: "Job", plural: "jobs", namespaced: true },
  { apiVersion: "v1", kind: "ServiceAccount", plural: "serviceaccounts", namespaced: true },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", plural: "roles", namespaced: true },
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    plural: "rolebindings",
    namespaced: true,
  },
];

// Only the operator's own platform objects (label selector): memory follows the platforms, not
// the cluster, nor the tasks (whose children carry the same managed-by label).
const MANAGED = `${LABEL_MANAGED_BY}=${MANAGED_BY},${LABEL_PLATFORM}`;

function toPlatform(o: KubeObject): ObjectKey[] {
  const name = o.metadata.labels?.[LABEL_PLATFORM];
  return name ? [{ namespace: o.metadata.namespace ?? "", name }] : [];
}

const BACKUP_REQUEST: ResourceType = {
  apiVersion: API_VERSION,
  kind: "ScalePlatformBackup",
  plural: "scaleplatformbackups",
  namespaced: true,
};

function toRequest(o: KubeObject): ObjectKey[] {
  const name = o.metadata.labels?.[LABEL_BACKUP_REQUEST];
  return name ? [{ namespace: o.metadata.namespace ?? "", name }] : [];
}

const RESTORE: ResourceType = {
  apiVersion: API_VERSION,
  kind: "ScalePlatformRestore",
  plural: "scaleplatformrestores",
  namespaced: true,
};

/** A restore's own Job and pods (the cutover is followed by polling every second). */
function toRestore(o: KubeObject): ObjectKey[] {
  const name = o.metadata.labels?.[LABEL_RESTORE];
  return name ? [{ namespace: o.metadata.namespace ?? "", name }] : [];
}

/** Options of the ScalePlatform controller. */
export interface RegisterPlatformOptions {
  config: PlatformControllerConfig;
  /** Concurrent reconciles. */
  workers?: number;
  /** Health probe (the real HTTP one by default). */
  probe?: HealthProbe;
}

/** Registers the "scaleplatform" controller on a manager; returns its reconciler. */
export function registerScalePlatformControllers(
  manager: Manager,
  opts: RegisterPlatformOptions,
): ScalePlatformReconciler {
  const cached = new Set([PLATFORM, ...CHILDREN].map((t) => `${t.apiVersion}|${t.kind}`));
  const backupMetrics = new BackupMetrics(manager.metrics.registry);
  const reconciler = new ScalePlatformReconciler(opts.config, { cached, probe: opts.probe, backupMetrics });
  manager.addController({
    name: "scaleplatform",
    for: PLATFORM,
    watches: CHILDREN.map((type) => ({ type, map: toPlatform, labelSelector: MANAGED })),
    reconciler,
    workers: opts.workers ?? 2,
  });
  // Manual backups (ScalePlatformBackup): their Jobs and pods wake them.
  const requestTypes = [BACKUP_REQUEST, ...CHILDREN.filter((t) => t.kind === "Job" || t.kind === "Pod")];
  const requestCached = new Set([...cached, `${BACKUP_REQUEST.apiVersion}|${BACKUP_REQUEST.kind}`]);
  manager.addController({
    name: "scaleplatformbackup",
    for: BACKUP_REQUEST,
    watches: requestTypes.slice(1).map((type) => ({ type, map: toRequest, labelSelector: `${MANAGED}` })),
    reconciler: new BackupRequestReconciler(opts.config, requestCached),
    workers: 1,
  });
  // Restores (ScalePlatformRestore): their Jobs and pods wake them.
  const restoreCached = new Set([...cached, `${RESTORE.apiVersion}|${RESTORE.kind}`]);
  manager.addController({
    name: "scaleplatformrestore",
    for: RESTORE,
    watches: requestTypes.slice(1).map((type) => ({ type, map: toRestore, labelSelector: MANAGED })),
    reconciler: new RestoreReconciler(opts.config, restoreCached, backupMetrics),
    workers: 1,
  });
  return reconciler;
}
