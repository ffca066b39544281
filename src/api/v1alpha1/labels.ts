// Label and annotation keys, in one place; selectors use only these. Each kind has its own
// section; add to yours only.

/** Marks every object the operator creates. */
export const LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
/** Value of LABEL_MANAGED_BY. */
export const MANAGED_BY = "cronscale";

// --- ScheduledTask ---------------------------------------------------------------------------

/** Name of the ScheduledTask a child (ConfigMap, Secret, CronJob, Job, Pod, TaskExecution) belongs to. */
export const LABEL_TASK = "cronscale.io/task";
/** How a Job/Pod/TaskExecution was started: Schedule or Manual. */
export const LABEL_TRIGGER = "cronscale.io/trigger";
/** Result of a TaskExecution (Succeeded, Failed, TimedOut), for `kubectl get texec -l`. */
export const LABEL_RESULT = "cronscale.io/result";
/** On a ScheduledTask: any new value starts one run at once (run-now). */
export const ANNOTATION_RUN_NOW = "cronscale.io/run-now";
/** On a CronJob's Job template and Pod: the configuration revision it runs. */
export const ANNOTATION_CONFIG_REVISION = "cronscale.io/config-revision";
/** On a Job/Pod: the task's timeout in seconds, so a run is judged by the timeout it ran with. */
export const ANNOTATION_TIMEOUT_SECONDS = "cronscale.io/timeout-seconds";
