import { API_VERSION } from "../api/v1alpha1/kind.ts";
import { LABEL_TASK } from "../api/v1alpha1/labels.ts";
import type { ExecutionArchive } from "../archive/store.ts";
import type { SecretRegistry } from "../log.ts";
import type { CacheOptions } from "../runtime/controller.ts";
import type { Manager } from "../runtime/manager.ts";
import type { KubeObject, ObjectKey, ResourceType } from "../runtime/types.ts";
import {
  CRONJOB_CACHE,
  EXECUTION_CACHE,
  JOB_CACHE,
  POD_CACHE,
  SCRIPT_AND_SECRET_CACHE,
  TASK_CACHE,
} from "./scheduledtask/cache.ts";
import type { TaskControllerConfig } from "./scheduledtask/config.ts";
import { ScheduledTaskReconciler } from "./scheduledtask/reconciler.ts";
import type { PodLogReader } from "./taskexecution/logs.ts";
import { TaskExecutionReconciler } from "./taskexecution/reconciler.ts";

export {
  DEFAULT_TASK_CONTROLLER_CONFIG,
  type TaskControllerConfig,
  taskControllerConfigFrom,
} from "./scheduledtask/config.ts";

const TASK: ResourceType = {
  apiVersion: API_VERSION,
  kind: "ScheduledTask",
  plural: "scheduledtasks",
  namespaced: true,
};
const CRONJOB: ResourceType = {
  apiVersion: "batch/v1",
  kind: "CronJob",
  plural: "cronjobs",
  namespaced: true,
};
const JOB: ResourceType = { apiVersion: "batch/v1", kind: "Job", plural: "jobs", namespaced: true };
const CONFIGMAP: ResourceType = {
  apiVersion: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
};
const SECRET: ResourceType = { apiVersion: "v1", kind: "Secret", plural: "secrets", namespaced: true };
const POD: ResourceType = { apiVersion: "v1", kind: "Pod", plural: "pods", namespaced: true };
const EXECUTION: ResourceType = {
  apiVersion: API_VERSION,
  kind: "TaskExecution",
  plural: "taskexecutions",
  namespaced: true,
};

// What each informer keeps and selects: see cache.ts.
const CHILDREN: [ResourceType, CacheOptions][] = [
  [CRONJOB, CRONJOB_CACHE],
  [JOB, JOB_CACHE],
  [CONFIGMAP, SCRIPT_AND_SECRET_CACHE],
  [SECRET, SCRIPT_AND_SECRET_CACHE],
  [POD, POD_CACHE],
  [EXECUTION, EXECUTION_CACHE],
];

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
  const cached = new Set([TASK, ...CHILDREN.map(([t]) => t)].map((t) => `${t.apiVersion}|${t.kind}`));
  const workers = opts.workers ?? 4;
  manager.addController({
    name: "scheduledtask",
    for: TASK,
    forCache: TASK_CACHE,
    // Its own status write would otherwise bring every task back once more for nothing.
    ignoreStatusOnlyUpdates: true,
    // The ConfigMap, Secret and CronJob a pass applies would bring the task back once more: the
    // pass takes the CronJob's status from the apply's answer, and nothing it decides depends on
    // the others' later state (a run-now Job is created, not applied, so its event still counts).
    skipOwnApplyEchoes: true,
    watches: CHILDREN.filter(([t]) => t.kind !== "Pod").map(([type, cache]) => ({
      type,
      map: toTask,
      ...cache,
    })),
    reconciler: new ScheduledTaskReconciler(opts.config, cached, opts.archive),
    workers,
  });
  manager.addController({
    name: "taskexecution",
    for: TASK,
    forCache: TASK_CACHE,
    // Driven by Jobs and Pods; the task's status says nothing it acts on.
    ignoreStatusOnlyUpdates: true,
    watches: [
      ...CHILDREN.filter(([t]) => t.kind === "Job" || t.kind === "Pod").map(([type, cache]) => ({
        type,
        map: toTask,
        ...cache,
      })),
      // Read from the cache but never a reason to run: a record deleted by retention must not wake
      // the capture up. Listed so the workers wait for this cache to sync too.
      { type: EXECUTION, map: () => [], ...EXECUTION_CACHE },
    ],
    reconciler: new TaskExecutionReconciler(opts.config, opts.logs, cached, {
      secrets: opts.secrets,
      archive: opts.archive,
    }),
    workers,
  });
}
