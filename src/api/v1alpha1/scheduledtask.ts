import { z } from "zod";
import { validateTimezoneName } from "../../cron/index.ts";
import { GO_ZONE_NAMES } from "../../cron/zones.generated.ts";
import type { KubeObject } from "../../runtime/types.ts";
import { TASK_PLANS } from "../task-plans.ts";
import { conditionsSchema, objectName, observedGenerationSchema, timestamp } from "./common.ts";
import { defineKind } from "./kind.ts";
import { taskNotificationsSchema } from "./notification.ts";
import { SCHEDULE_MAX_LENGTH, scheduleCelRules } from "./schedule-rules.ts";

// ScheduledTask (spec 2.1, 3.1, 8.1). Every rule of the spec is checked by the apiserver at
// `kubectl apply` (OpenAPI bounds + CEL below), so there is no admission webhook to operate:
// the cron grammar is a per-field regex, the timezone an enumerated list generated from Go's
// tzdata that the cron module's validateTimezoneName() also accepts (one source of truth). The operator re-validates anyway (defence in depth).

/** Longest task name: the CronJob carries it and Kubernetes limits CronJob names to 52. */
export const TASK_NAME_MAX_LENGTH = 52;
/** Largest script, in characters: well inside a ConfigMap (1 MiB) even at 4 bytes a character. */
export const SCRIPT_MAX_LENGTH = 65536;
/** Most env entries per task. */
export const ENV_MAX_ITEMS = 64;
/** Longest inline env value: 64 × 4096 × 4 bytes stays inside one Secret (1 MiB). */
export const ENV_VALUE_MAX_LENGTH = 4096;
/** Env var names the pod accepts: a POSIX-shell-safe identifier, case-sensitive. */
export const ENV_NAME_PATTERN = "^[A-Za-z_][A-Za-z0-9_]*$";

/** Languages a task may be written in. */
export const TASK_LANGUAGES = ["Bash", "Python", "Go", "Bun"] as const;
/** One of the task languages. */
export type TaskLanguage = (typeof TASK_LANGUAGES)[number];

/** Task phases as users see them (spec 3.1). */
export const TASK_PHASES = ["Pending", "Running", "Failed", "Stopped"] as const;
/** One of the task phases. */
export type TaskPhase = (typeof TASK_PHASES)[number];

/** Results of one execution. */
export const EXECUTION_RESULTS = ["Succeeded", "Failed", "TimedOut"] as const;
/** One execution result. */
export type ExecutionResult = (typeof EXECUTION_RESULTS)[number];

// A CEL `in` over ~600 string literals: estimated cost is a few thousand units, far under the
// per-rule budget (1,000,000), and measured by the CRD install in the integration tests.
const TIMEZONES = [...GO_ZONE_NAMES].filter((z) => validateTimezoneName(z).length === 0).sort();
const timezoneRule = `self in [${TIMEZONES.map((z) => `'${z}'`).join(", ")}]`;

const envVarSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .max(128)
      .meta({
        "x-kubernetes-validations": [
          {
            rule: `self.matches('${ENV_NAME_PATTERN}')`,
            message:
              "env name must start with a letter or '_' and contain only letters, digits and '_' (case-sensitive)",
          },
        ],
      })
      .describe("Name of the environment variable, case-sensitive (FOO and foo are different variables)."),
    value: z
      .string()
      .max(ENV_VALUE_MAX_LENGTH)
      .optional()
      .describe(
        "Value, written in plain text in this ScheduledTask: etcd stores it unencrypted (Secret encryption at rest does not cover custom resources), anyone who can read the task can read it, and captured output shows it as written. Fine for plain configuration; for a secret use valueFrom.secretKeyRef (the condition EnvValuesInSecrets=False and a Warning Event say when inline values are used). Omit when valueFrom is set.",
      ),
    valueFrom: z
      .object({
        secretKeyRef: z
          .object({
            name: objectName("Name of an existing Secret in the task's namespace."),
            key: z
              .string()
              .min(1)
              .max(253)
              .regex(/^[-._a-zA-Z0-9]+$/)
              .describe("Key inside the Secret whose value is used."),
          })
          .describe(
            "A key of an existing Secret in the task's namespace; its value is masked (****) in captured output and never copied out of the Secret.",
          ),
      })
      .optional()
      .describe("Take the value from an existing Secret instead of writing it here."),
  })
  .meta({
    "x-kubernetes-validations": [
      {
        rule: "!(has(self.value) && has(self.valueFrom))",
        message: "env: set either value or valueFrom, not both",
      },
    ],
  })
  .describe("One environment variable of the script.");

/** spec of a ScheduledTask. */
export const scheduledTaskSpecSchema = z
  .object({
    schedule: z
      .string()
      .min(1)
      .max(SCHEDULE_MAX_LENGTH)
      .default("* * * * *")
      .meta({ "x-kubernetes-validations": scheduleCelRules() })
      .describe(
        "Cron expression of five space-separated fields: minute (0-59) hour (0-23) day-of-month (1-31) month (1-12) day-of-week (0-7, 0 and 7 are Sunday). Each field: *, */n, a value, a range a-b or a-b/n, or a comma list. When both day fields are restricted, a day matching either runs. Default every minute.",
      ),
    timezone: z
      .string()
      .min(1)
      .max(64)
      .default("UTC")
      .meta({
        "x-kubernetes-validations": [
          {
            rule: timezoneRule,
            message:
              "spec.timezone must be an IANA time zone name such as Europe/Paris, America/New_York or UTC",
          },
        ],
      })
      .describe(
        "IANA time zone the schedule is evaluated in (e.g. Europe/Paris). Default UTC. Across DST, a time that does not exist is skipped and a repeated time runs twice, as Kubernetes' CronJob scheduler does.",
      ),
    timeoutSeconds: z
      .int()
      .min(10)
      .max(3600)
      .default(300)
      .describe(
        "Longest run time of the script, in seconds (10-3600, default 300). The script is killed when it exceeds it and the execution is recorded as TimedOut.",
      ),
    language: z
      .enum(TASK_LANGUAGES)
      .describe(
        "Language of the script: Bash, Python (3.x), Go (package main) or Bun (JavaScript/TypeScript). Changing it requires a new spec.script in the same update.",
      ),
    script: z
      .string()
      .min(1)
      .max(SCRIPT_MAX_LENGTH)
      .describe(
        `Source of the script, run as-is by the language's runtime. At most ${SCRIPT_MAX_LENGTH} characters.`,
      ),
    plan: z
      .enum(TASK_PLANS)
      .describe(
        "Resource plan of each execution: Micro (0.25 vCPU, 256 MB), Small (0.5, 512 MB), Medium (1, 1 GB), Large (2, 2 GB).",
      ),
    env: z
      .array(envVarSchema)
      .max(ENV_MAX_ITEMS)
      .optional()
      .meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] })
      .describe(
        `Environment variables of the script; names are unique and case-sensitive. At most ${ENV_MAX_ITEMS}.`,
      ),
    suspend: z
      .boolean()
      .default(false)
      .describe(
        "Pause the schedule (status Stopped); executions already running finish. Set back to false to resume.",
      ),
    concurrencyPolicy: z
      .enum(["Forbid", "Allow", "Replace"])
      .default("Forbid")
      .describe(
        "What happens when a run is due while the previous one still runs: Forbid (default) skips the new run, so a slow task never piles up pods and bills; Allow runs both; Replace stops the old run and starts the new one.",
      ),
    retries: z
      .int()
      .min(0)
      .max(5)
      .default(0)
      .describe(
        "How many times a failed execution is retried (default 0: a failure is reported, not hidden).",
      ),
    startingDeadlineSeconds: z
      .int()
      .min(10)
      .max(86400)
      .optional()
      .describe(
        "A run that could not start within this many seconds of its scheduled time (e.g. controller down) is skipped.",
      ),
    successfulJobsHistoryLimit: z
      .int()
      .min(1)
      .max(10)
      .default(3)
      .describe(
        "Finished successful Jobs kept by Kubernetes (1-10, default 3). The durable history is TaskExecution.",
      ),
    failedJobsHistoryLimit: z
      .int()
      .min(1)
      .max(10)
      .default(3)
      .describe(
        "Finished failed Jobs kept by Kubernetes (1-10, default 3). The durable history is TaskExecution.",
      ),
    notifications: taskNotificationsSchema.optional(),
  })
  .meta({
    "x-kubernetes-validations": [
      {
        // A script is written for one language: a new language needs a new script (docs/scheduled-tasks.md).
        rule: "self.language == oldSelf.language || self.script != oldSelf.script",
        messageExpression:
          "'cannot change language from ' + oldSelf.language + ' to ' + self.language + ' without a new script: changing the language requires rewriting spec.script'",
        fieldPath: ".language",
        reason: "FieldValueForbidden",
      },
    ],
  })
  .describe("Desired state of the task: what runs, when, and with which resources.");

/** status of a ScheduledTask. */
export const scheduledTaskStatusSchema = z
  .object({
    phase: z
      .enum(TASK_PHASES)
      .optional()
      .describe(
        "Pending while the task is being created, Running when scheduled, Failed when the last execution failed or timed out, Stopped when suspended.",
      ),
    lastRunTime: timestamp("When the last execution started.").optional(),
    nextRunTime: timestamp(
      "When the next execution is due (as Kubernetes' CronJob scheduler computes it).",
    ).optional(),
    lastResult: z.enum(EXECUTION_RESULTS).optional().describe("Result of the last finished execution."),
    lastExecution: z
      .string()
      .max(253)
      .optional()
      .describe("Name of the TaskExecution of the last finished run."),
    schedule: z
      .string()
      .max(SCHEDULE_MAX_LENGTH * 2)
      .optional()
      .describe("The normalised schedule written to the CronJob."),
    resources: z
      .object({
        vcpu: z.string().max(16).describe("vCPU of the plan, e.g. 0.25."),
        memory: z.string().max(16).describe("RAM of the plan, e.g. 256 MB."),
      })
      .optional()
      .describe("Resources of the plan, for display."),
    usage: z
      .object({
        month: z
          .string()
          .regex(/^\d{4}-\d{2}$/)
          .describe("Calendar month (UTC) the totals are for, e.g. 2026-11."),
        runs: z.int().min(0).describe("Runs that finished in the month."),
        billedSeconds: z.int().min(0).describe("Sum of the runs' billed seconds."),
        cost: z.string().max(32).describe("Sum of the runs' cost, a decimal in currency."),
        currency: z.string().max(8).describe("ISO 4217 currency of cost."),
      })
      .optional()
      .describe(
        "This month's usage of the task: runs, billed seconds and cost (from the execution archive when the operator has one, otherwise from the TaskExecutions still kept).",
      ),
    lastManualRunToken: z
      .string()
      .max(128)
      .optional()
      .describe("The cronscale.io/run-now annotation value last acted on (a new value starts a new run)."),
    conditions: conditionsSchema(
      "Ready summarises; LastRunSucceeded tells how the last run ended; EnvValuesInSecrets is False while env values are written inline in the task.",
    ).optional(),
    observedGeneration: observedGenerationSchema.optional(),
  })
  .describe("Observed state of the task, derived by the operator.");

/** The ScheduledTask kind (short name stask). */
export const scheduledTaskKind = defineKind({
  kind: "ScheduledTask",
  plural: "scheduledtasks",
  singular: "scheduledtask",
  shortNames: ["stask"],
  categories: ["cronscale"],
  scope: "Namespaced",
  description:
    "A script run on a cron schedule in a timezone, with a timeout and a resource plan. Each run is recorded as a TaskExecution. Annotate with cronscale.io/run-now=<token> to run it at once.",
  specSchema: scheduledTaskSpecSchema,
  statusSchema: scheduledTaskStatusSchema,
  // AGE is appended by the CRD generator for every kind.
  printerColumns: [
    { name: "Schedule", type: "string", jsonPath: ".spec.schedule", description: "Cron expression." },
    {
      name: "Timezone",
      type: "string",
      jsonPath: ".spec.timezone",
      description: "Time zone of the schedule.",
    },
    { name: "Language", type: "string", jsonPath: ".spec.language", description: "Script language." },
    { name: "Plan", type: "string", jsonPath: ".spec.plan", description: "Resource plan." },
    {
      name: "Status",
      type: "string",
      jsonPath: ".status.phase",
      description: "Pending, Running, Failed or Stopped.",
    },
    {
      name: "Last Run",
      type: "date",
      jsonPath: ".status.lastRunTime",
      description: "Start of the last execution.",
    },
    {
      name: "Next Run",
      type: "string",
      jsonPath: ".status.nextRunTime",
      description: "When the next execution is due.",
    },
  ],
  topLevelValidations: [
    {
      rule: "self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
      message:
        "metadata.name may contain only lowercase letters, digits and hyphens, and must start and end with a letter or digit",
    },
    {
      rule: `size(self.metadata.name) <= ${TASK_NAME_MAX_LENGTH}`,
      message: `metadata.name must be at most ${TASK_NAME_MAX_LENGTH} characters (the task's CronJob carries the name; Kubernetes limits CronJob names to 52)`,
    },
  ],
});

/** A ScheduledTask as read from the apiserver. */
export type ScheduledTask = KubeObject & { spec: ScheduledTaskSpec; status?: ScheduledTaskStatus };
/** Parsed spec with defaults applied. */
export type ScheduledTaskSpec = z.output<typeof scheduledTaskSpecSchema>;
/** Status as written by the operator. */
export type ScheduledTaskStatus = z.output<typeof scheduledTaskStatusSchema>;
