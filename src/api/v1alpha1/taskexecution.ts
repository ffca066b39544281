import { z } from "zod";
import type { KubeObject } from "../../runtime/types.ts";
import { TASK_PLANS } from "../task-plans.ts";
import { observedGenerationSchema, timestamp } from "./common.ts";
import { defineKind } from "./kind.ts";
import { EXECUTION_RESULTS, TASK_LANGUAGES } from "./scheduledtask.ts";

// TaskExecution (spec 2.2): one record per run, written ONCE by the operator after the run
// finished (everything is in spec, so one create and no status write per execution — etcd is
// not a log store). Owned by its ScheduledTask: deleting the task deletes its history.

/** Most characters of console output kept per execution; the rest is cut and marked. */
export const OUTPUT_MAX_LENGTH = 65536;

/** How a run's execution time was measured. */
export const MEASURED_BY = ["Runner", "ContainerTimes", "None"] as const;

/** How an execution was started. */
export const EXECUTION_TRIGGERS = ["Schedule", "Manual"] as const;
/** One execution trigger. */
export type ExecutionTrigger = (typeof EXECUTION_TRIGGERS)[number];

/** spec of a TaskExecution: the immutable record of one run. */
export const taskExecutionSpecSchema = z
  .object({
    taskName: z.string().min(1).max(63).describe("Name of the ScheduledTask that ran."),
    trigger: z
      .enum(EXECUTION_TRIGGERS)
      .describe("Schedule for a run due by the cron schedule, Manual for a run-now."),
    jobName: z
      .string()
      .max(63)
      .describe("Name of the Kubernetes Job that ran the script (deleted soon after)."),
    language: z.enum(TASK_LANGUAGES).describe("Language of the script that ran."),
    plan: z.enum(TASK_PLANS).describe("Resource plan the run had."),
    configRevision: z
      .string()
      .max(64)
      .optional()
      .describe("Task configuration revision the run used (metadata.generation)."),
    scheduledTime: timestamp("When the run was due (the Job's creation for a manual run).").optional(),
    startTime: timestamp("When the script's container started.").optional(),
    completionTime: timestamp("When the run finished."),
    durationSeconds: z
      .int()
      .min(0)
      .describe(
        "Run time of the script in seconds, rounded to the nearest second (for Go without the compile step).",
      ),
    runMilliseconds: z
      .int()
      .min(0)
      .optional()
      .describe(
        "Run time of the script in milliseconds, script start to end, as measured inside the pod (measuredBy Runner), or the container's lifetime in whole seconds (ContainerTimes).",
      ),
    compileMilliseconds: z
      .int()
      .min(0)
      .optional()
      .describe("Go only: time spent compiling before the script started, in milliseconds (not billed)."),
    measuredBy: z
      .enum(MEASURED_BY)
      .optional()
      .describe(
        "Source of runMilliseconds: Runner (measured inside the pod), ContainerTimes (container start/finish, one-second granularity: the pod ended without the runner's report) or None (never ran).",
      ),
    billedSeconds: z
      .int()
      .min(0)
      .optional()
      .describe("Billed execution time: runMilliseconds rounded to the nearest second (half up)."),
    cost: z
      .string()
      .max(32)
      .regex(/^\d+\.\d+$/)
      .optional()
      .describe("Cost of the run: billedSeconds × the plan's price per second, a decimal in `currency`."),
    currency: z.string().max(8).optional().describe("ISO 4217 currency of cost, e.g. USD."),
    result: z.enum(EXECUTION_RESULTS).describe("Succeeded, Failed or TimedOut."),
    exitCode: z.int().optional().describe("Exit code of the script, when it exited."),
    reason: z
      .string()
      .max(64)
      .describe("CamelCase cause: Completed, Error, TimedOut, OOMKilled, DeadlineExceeded, StartFailed..."),
    message: z
      .string()
      .max(1024)
      .describe(
        'One line for humans, e.g. "exit code 3", "timed out after 30 s", "exceeded the plan\'s memory (256 MB)".',
      ),
    output: z
      .string()
      .max(OUTPUT_MAX_LENGTH + 256)
      .describe(
        `Console output (stdout and stderr interleaved), at most ${OUTPUT_MAX_LENGTH} characters: when longer, the first and the last halves are kept and the cut in the middle is marked. Values the task's env takes from Secrets (valueFrom.secretKeyRef) are replaced by ****; inline env values are shown as written.`,
      ),
    outputTruncated: z.boolean().default(false).describe("Whether the middle of the output was cut."),
    expiresAt: timestamp("When the operator deletes this record (7 days after completion)."),
  })
  .describe("The record of one run of a ScheduledTask.");

/** status of a TaskExecution (the record is complete at creation; status is reserved). */
export const taskExecutionStatusSchema = z
  .object({ observedGeneration: observedGenerationSchema.optional() })
  .describe("Reserved: a TaskExecution is complete when created.");

/** The TaskExecution kind (short name texec). */
export const taskExecutionKind = defineKind({
  kind: "TaskExecution",
  plural: "taskexecutions",
  singular: "taskexecution",
  shortNames: ["texec"],
  categories: ["cronscale"],
  scope: "Namespaced",
  description:
    "One run of a ScheduledTask: trigger, times, duration, result, exit code and console output. Names sort newest first; deleted 7 days after completion.",
  specSchema: taskExecutionSpecSchema,
  statusSchema: taskExecutionStatusSchema,
  printerColumns: [
    { name: "Task", type: "string", jsonPath: ".spec.taskName", description: "The task that ran." },
    { name: "Trigger", type: "string", jsonPath: ".spec.trigger", description: "Schedule or Manual." },
    {
      name: "Result",
      type: "string",
      jsonPath: ".spec.result",
      description: "Succeeded, Failed or TimedOut.",
    },
    { name: "Exit", type: "integer", jsonPath: ".spec.exitCode", description: "Exit code of the script." },
    {
      name: "Duration",
      type: "integer",
      jsonPath: ".spec.durationSeconds",
      description: "Run time in seconds.",
    },
    {
      name: "Billed",
      type: "integer",
      jsonPath: ".spec.billedSeconds",
      description: "Billed seconds.",
      priority: 1,
    },
    { name: "Cost", type: "string", jsonPath: ".spec.cost", description: "Cost of the run.", priority: 1 },
    { name: "Started", type: "date", jsonPath: ".spec.startTime", description: "Start of the run." },
    {
      name: "Message",
      type: "string",
      jsonPath: ".spec.message",
      description: "Outcome in words.",
      priority: 1,
    },
  ],
});

/** A TaskExecution as read from the apiserver. */
export type TaskExecution = KubeObject & { spec: TaskExecutionSpec };
/** The record's content. */
export type TaskExecutionSpec = z.output<typeof taskExecutionSpecSchema>;
