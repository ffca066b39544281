import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import { LABEL_MANAGED_BY, LABEL_TASK, MANAGED_BY } from "../../api/v1alpha1/labels.ts";
import type { ExecutionArchive } from "../../archive/store.ts";
import type { SecretRegistry } from "../../log.ts";
import type { Manager } from "../../runtime/manager.ts";
import type { KubeObject, ObjectKey, ResourceType } from "../../runtime/types.ts";
import type { PodLogReader } from "../taskexecution/logs.ts";
import { TaskExecutionReconciler } from "../taskexecution/reconciler.ts";
import type { TaskControllerConfig } from "./config.ts";
import { ScheduledTaskReconciler } from "./reconciler.ts";

export {
  DEFAULT_TASK_CONTROLLER_CONFIG,
  type TaskControllerConfig,
  taskControllerConfigFrom,
} from "./config.ts";

const TASK: ResourceType = {
  apiVersion: API_VERSION,
  kind: "ScheduledTask",
  plural: "scheduledtasks",
  namespaced: true,
};
const CHILDREN: ResourceType[] = [
  { apiVersion: "batch/v1", kind: "CronJob", plural: "cronjobs", namespaced: true },
  { apiVersion: "batch/v1", kind: "Job", plural: "jobs", namespaced: true },
  { apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true },
  { apiVersion: "v1", kind: "Secret", plural: "secrets", namespaced: true },
  { apiVersion: "v1", kind: "Pod", plural: "pods", namespaced: true },
  { apiVersion: API_VERSION, kind: "TaskExecution", plural: "taskexecutions", namespaced: true },
];

// Informers over the operator's own objects only (label selector): memory stays proportional to
// the tasks, not to every Secret, Pod and Job of the cluster.
const MANAGED = `${LABEL_MANAGED_BY}=${MANAGED_BY}`;

function toTask(o: KubeObject): ObjectKey[] {
  const name = o.metadata.labels?.[LABEL_TASK];
  return name ? [{ namespace: o.metadata.namespace ?? "", name }] : [];
}

/** Options of the ScheduledTask controllers. */
export interface RegisterOptions {
  config: TaskControllerConfig;
  /** Reads pod logs (KubePodLogReader in production). */
  logs: PodLogReader;
  /** Concurrent reconciles per controller. */
  workers?: number;
  /** The logger's secret registry: values read to mask captured output are masked in logs too. */
  secrets?: SecretRegistry;
  /** The execution archive, if the operator has one. */
  archive?: ExecutionArchive;
}

/**
 * Registers the two controllers of scheduled tasks on a manager: "scheduledtask" (children,
 * run-now, retention, status) and "taskexecution" (records finished runs). Both are keyed by task.
 */
export function registerScheduledTaskControllers(manager: Manager, opts: RegisterOptions): void {
  const cached = new Set([TASK, ...CHILDREN].map((t) => `${t.apiVersion}|${t.kind}`));
  const workers = opts.workers ?? 4;
  manager.addController({
    name: "scheduledtask",
    for: TASK,
    watches: CHILDREN.filter((t) => t.kind !== "Pod").map((type) => ({
      type,
      map: toTask,
      labelSelector: MANAGED,
    })),
    reconciler: new ScheduledTaskReconciler(opts.config, cached, opts.archive),
    workers,
  });
  manager.addController({
    name: "taskexecution",
    for: TASK,
    // Not TaskExecution: a record deleted by retention must not wake the capture up.
    watches: CHILDREN.filter((t) => t.kind === "Job" || t.kind === "Pod").map((type) => ({
      type,
      map: toTask,
      labelSelector: MANAGED,
    })),
    reconciler: new TaskExecutionReconciler(opts.config, opts.logs, cached, {
      secrets: opts.secrets,
      archive: opts.archive,
    }),
    workers,
  });
}
