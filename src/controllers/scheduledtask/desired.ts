import { planResources } from "../../api/task-plans.ts";
import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import {
  ANNOTATION_CONFIG_REVISION,
  ANNOTATION_TASK_LANGUAGE,
  ANNOTATION_TASK_PLAN,
  ANNOTATION_TIMEOUT_SECONDS,
  LABEL_MANAGED_BY,
  LABEL_TASK,
  LABEL_TRIGGER,
  MANAGED_BY,
} from "../../api/v1alpha1/labels.ts";
import {
  taskCronJobName,
  taskEnvSecretName,
  taskManualJobName,
  taskScriptConfigMapName,
} from "../../api/v1alpha1/names.ts";
import type { ScheduledTask, ScheduledTaskSpec } from "../../api/v1alpha1/scheduledtask.ts";
import { normalize } from "../../cron/index.ts";
import type { KubeObject, OwnerReference } from "../../runtime/types.ts";
import type { TaskControllerConfig } from "./config.ts";
import { LANGUAGE_RUNTIMES, SCRIPT_DIR, WORK_DIR } from "./runtimes.ts";

// Pure builders: task (+ config) → the children it should have. No clock, no client.
//
// Updates: the ConfigMap and Secret are named per configuration revision (the task's
// metadata.generation) and immutable. The CronJob's Job template points at the current revision;
// a Job already created keeps its copy of the old template, so a running execution keeps reading
// the old script and env while the next one uses the new. Old revisions are pruned once no
// unfinished Job refers to them (see prune.ts). The CronJob itself is updated in place, so the
// schedule has no gap.

/** UID of the unprivileged user every task runs as (the "nonroot" convention of distroless). */
export const TASK_UID = 65532;
/** Name of the script container. */
export const SCRIPT_CONTAINER = "script";

/** Configuration revision of a task: its generation (names children, marks Jobs). */
export function configRevision(task: ScheduledTask): string {
  return String(task.metadata.generation ?? 1);
}

/** Controller owner reference to the task (deleting the task deletes the child). */
export function ownerRef(task: ScheduledTask): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: "ScheduledTask",
    name: task.metadata.name ?? "",
    uid: task.metadata.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Labels of every child of the task. */
export function taskLabels(task: ScheduledTask): Record<string, string> {
  return { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_TASK]: task.metadata.name ?? "" };
}

function meta(task: ScheduledTask, name: string, extra: Record<string, string> = {}) {
  return {
    name,
    namespace: task.metadata.namespace,
    labels: taskLabels(task),
    annotations: { [ANNOTATION_CONFIG_REVISION]: configRevision(task), ...extra },
    ownerReferences: [ownerRef(task)],
  };
}

/** Env entries with an inline value (stored in the revision's Secret). */
export function inlineEnv(spec: ScheduledTaskSpec): { name: string; value: string }[] {
  return (spec.env ?? [])
    .filter((e) => e.valueFrom === undefined)
    .map((e) => ({ name: e.name, value: e.value ?? "" }));
}

/** The immutable ConfigMap holding the script of the current revision. */
export function desiredScriptConfigMap(task: ScheduledTask, spec: ScheduledTaskSpec): KubeObject {
  const name = taskScriptConfigMapName(task.metadata.name ?? "", configRevision(task));
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: meta(task, name),
    immutable: true,
    data: {
      [LANGUAGE_RUNTIMES[spec.language].file]: spec.script,
      ...LANGUAGE_RUNTIMES[spec.language].extraFiles,
    },
  };
}

/** The immutable Secret with the inline env values of the current revision; undefined when there are none. */
export function desiredEnvSecret(task: ScheduledTask, spec: ScheduledTaskSpec): KubeObject | undefined {
  const env = inlineEnv(spec);
  if (env.length === 0) return undefined;
  const name = taskEnvSecretName(task.metadata.name ?? "", configRevision(task));
  // `data` (base64), not stringData: the server stores only data, so compare-before-apply works.
  const data: Record<string, string> = {};
  for (const e of env) data[e.name] = Buffer.from(e.value, "utf8").toString("base64");
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: meta(task, name),
    type: "Opaque",
    immutable: true,
    data,
  };
}

function containerEnv(task: ScheduledTask, spec: ScheduledTaskSpec): unknown[] {
  const secret = taskEnvSecretName(task.metadata.name ?? "", configRevision(task));
  const base = [
    { name: "HOME", value: WORK_DIR },
    { name: "TMPDIR", value: WORK_DIR },
    { name: "CRONSCALE_TASK", value: task.metadata.name ?? "" },
    ...LANGUAGE_RUNTIMES[spec.language].env,
  ];
  const user = (spec.env ?? []).map((e) =>
    e.valueFrom
      ? {
          name: e.name,
          valueFrom: {
            secretKeyRef: { name: e.valueFrom.secretKeyRef.name, key: e.valueFrom.secretKeyRef.key },
          },
        }
      : { name: e.name, valueFrom: { secretKeyRef: { name: secret, key: e.name } } },
  );
  return [...base, ...user];
}

/** What a run is recorded with, copied into each Job (a Job keeps them when the task changes). */
function runAnnotations(spec: ScheduledTaskSpec): Record<string, string> {
  return {
    [ANNOTATION_TIMEOUT_SECONDS]: String(spec.timeoutSeconds),
    [ANNOTATION_TASK_LANGUAGE]: spec.language,
    [ANNOTATION_TASK_PLAN]: spec.plan,
  };
}

/** The Pod template of every execution (Pod Security "restricted", plan resources, no token). */
export function desiredPodTemplate(
  task: ScheduledTask,
  spec: ScheduledTaskSpec,
  config: TaskControllerConfig,
  trigger: "Schedule" | "Manual",
): Record<string, unknown> {
  const plan = planResources(spec.plan);
  const runtime = LANGUAGE_RUNTIMES[spec.language];
  const resources = { cpu: plan.cpu, memory: plan.memory };
  return {
    metadata: {
      labels: { ...taskLabels(task), [LABEL_TRIGGER]: trigger },
      annotations: {
        [ANNOTATION_CONFIG_REVISION]: configRevision(task),
        ...runAnnotations(spec),
      },
    },
    spec: {
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      // The runner passes SIGTERM on to the script; the timeout already SIGKILLs it (runtimes.ts).
      terminationGracePeriodSeconds: 5,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: TASK_UID,
        runAsGroup: TASK_UID,
        fsGroup: TASK_UID,
        seccompProfile: { type: "RuntimeDefault" },
      },
      containers: [
        {
          name: SCRIPT_CONTAINER,
          image: config.images[spec.language],
          imagePullPolicy: config.imagePullPolicy,
          command: runtime.command(spec.timeoutSeconds),
          workingDir: WORK_DIR,
          env: containerEnv(task, spec),
          // requests = limits: Guaranteed QoS, the whole plan reserved (see task-plans.ts).
          resources: { requests: resources, limits: resources },
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            runAsNonRoot: true,
            runAsUser: TASK_UID,
            capabilities: { drop: ["ALL"] },
            seccompProfile: { type: "RuntimeDefault" },
          },
          volumeMounts: [
            { name: "script", mountPath: SCRIPT_DIR, readOnly: true },
            { name: "tmp", mountPath: WORK_DIR },
          ],
        },
      ],
      volumes: [
        {
          name: "script",
          configMap: {
            name: taskScriptConfigMapName(task.metadata.name ?? "", configRevision(task)),
            defaultMode: 0o444,
          },
        },
        // Go's build cache needs room; the limit keeps a runaway script from filling the node.
        { name: "tmp", emptyDir: { sizeLimit: "1Gi" } },
      ],
    },
  };
}

/** The Job spec every execution runs with. */
export function desiredJobSpec(
  task: ScheduledTask,
  spec: ScheduledTaskSpec,
  config: TaskControllerConfig,
  trigger: "Schedule" | "Manual",
): Record<string, unknown> {
  return {
    backoffLimit: spec.retries,
    activeDeadlineSeconds:
      spec.timeoutSeconds +
      config.startupAllowanceSeconds +
      LANGUAGE_RUNTIMES[spec.language].extraStartupSeconds,
    ttlSecondsAfterFinished: config.jobTtlSecondsAfterFinished,
    template: desiredPodTemplate(task, spec, config, trigger),
  };
}

function jobMeta(task: ScheduledTask, spec: ScheduledTaskSpec, trigger: "Schedule" | "Manual") {
  return {
    labels: { ...taskLabels(task), [LABEL_TRIGGER]: trigger },
    annotations: {
      [ANNOTATION_CONFIG_REVISION]: configRevision(task),
      ...runAnnotations(spec),
    },
  };
}

/** The CronJob: Kubernetes' scheduler fires it (robfig/cron v3, same as status.nextRunTime). */
export function desiredCronJob(
  task: ScheduledTask,
  spec: ScheduledTaskSpec,
  config: TaskControllerConfig,
): KubeObject {
  const cronSpec: Record<string, unknown> = {
    // robfig rejects day-of-week 7 and Kubernetes with it; normalize() rewrites it to 0.
    schedule: normalize(spec.schedule),
    timeZone: spec.timezone,
    concurrencyPolicy: spec.concurrencyPolicy,
    suspend: spec.suspend,
    successfulJobsHistoryLimit: spec.successfulJobsHistoryLimit,
    failedJobsHistoryLimit: spec.failedJobsHistoryLimit,
    jobTemplate: {
      metadata: jobMeta(task, spec, "Schedule"),
      spec: desiredJobSpec(task, spec, config, "Schedule"),
    },
  };
  if (spec.startingDeadlineSeconds !== undefined)
    cronSpec.startingDeadlineSeconds = spec.startingDeadlineSeconds;
  const m = meta(task, taskCronJobName(task.metadata.name ?? ""));
  return {
    apiVersion: "batch/v1",
    kind: "CronJob",
    metadata: { ...m, annotations: undefined },
    spec: cronSpec,
  };
}

/** A run-now Job: the CronJob's template, named after the token, recorded as Manual. */
export function desiredManualJob(
  task: ScheduledTask,
  spec: ScheduledTaskSpec,
  config: TaskControllerConfig,
  token: string,
): KubeObject {
  const jm = jobMeta(task, spec, "Manual");
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: taskManualJobName(task.metadata.name ?? "", token),
      namespace: task.metadata.namespace,
      labels: jm.labels,
      annotations: jm.annotations,
      ownerReferences: [ownerRef(task)],
    },
    spec: desiredJobSpec(task, spec, config, "Manual"),
  };
}
