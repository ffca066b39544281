import type { TaskLanguage } from "../../api/v1alpha1/scheduledtask.ts";
import { type BillingConfig, DEFAULT_BILLING, parseDecimal } from "./billing.ts";

/** Operator settings the ScheduledTask controllers need (wired from the operator config). */
export interface TaskControllerConfig {
  /** Image per language; production defaults are public images, tests use the locally built ones. */
  images: Record<TaskLanguage, string>;
  /** Pull policy of task pods (IfNotPresent for pinned tags, Never for images imported locally). */
  imagePullPolicy: "IfNotPresent" | "Always" | "Never";
  /**
   * Seconds a Job may spend before the script's own timeout starts (image pull, container
   * start, compiling Go): the Job's activeDeadlineSeconds is timeoutSeconds + this.
   */
  startupAllowanceSeconds: number;
  /** Seconds a finished Job (and its pod and logs) lingers before Kubernetes deletes it. */
  jobTtlSecondsAfterFinished: number;
  /** Days a TaskExecution is kept after completion (7 by default: docs/scheduled-tasks.md, "What is kept where"). */
  executionRetentionDays: number;
  /** Most TaskExecutions kept per task; older ones are deleted first. */
  maxExecutionsPerTask: number;
  /** Most characters of console output kept per execution. */
  outputMaxChars: number;
  /** Prices of billed seconds per plan. */
  billing: BillingConfig;
  /** With an execution archive: TaskExecutions kept per task (the recent window). */
  archiveWindow: number;
  /** With an execution archive: most characters of console output archived per run. */
  archiveOutputMaxChars: number;
}

/** Defaults: public images named by tag (override per installation in the chart values). */
export const DEFAULT_TASK_CONTROLLER_CONFIG: TaskControllerConfig = {
  images: {
    Bash: "docker.io/library/bash:5.2",
    Python: "docker.io/library/python:3.13-slim",
    Go: "docker.io/library/golang:1.25",
    Bun: "docker.io/oven/bun:1",
  },
  imagePullPolicy: "IfNotPresent",
  startupAllowanceSeconds: 120,
  // One hour: ample time to capture the output even across an operator restart, while a task
  // running every minute keeps at most ~60 finished Jobs (and the CronJob's history limit
  // usually removes them sooner).
  jobTtlSecondsAfterFinished: 3600,
  executionRetentionDays: 7,
  // A task running every minute makes ~10,000 records a week; 100 keeps the last 100 minutes of
  // such a task and a week of anything running at most every ~100 minutes, and bounds etcd use
  // to ~100 × 64 KiB = 6.4 MiB per task in the worst case.
  maxExecutionsPerTask: 100,
  outputMaxChars: 65536,
  billing: DEFAULT_BILLING,
  // `kubectl get texec` shows the last 10 runs of each task; everything else is in the archive.
  archiveWindow: 10,
  // 1 MiB of text, gzip-compressed in the archive (typically 5-20x smaller).
  archiveOutputMaxChars: 1_048_576,
};

/** The operator configuration's `controllers` section, as far as tasks are concerned. */
export interface TaskControllersSettings {
  scheduledTask: {
    images: Record<string, string>;
    imagePullPolicy: TaskControllerConfig["imagePullPolicy"];
    startupAllowanceSeconds: number;
    jobTtlSecondsAfterFinished: number;
  };
  taskExecution: {
    retentionDays: number;
    maxPerTask: number;
    outputMaxChars: number;
    billing: { currency: string; pricePerSecond: Record<"micro" | "small" | "medium" | "large", string> };
  };
  archive?: { window: number; outputMaxChars: number };
}

/** Builds the controllers' config from the operator config (an empty image means the default). */
export function taskControllerConfigFrom(c: TaskControllersSettings): TaskControllerConfig {
  const d = DEFAULT_TASK_CONTROLLER_CONFIG;
  const img = c.scheduledTask.images;
  return {
    images: {
      Bash: img.bash || d.images.Bash,
      Python: img.python || d.images.Python,
      Go: img.go || d.images.Go,
      Bun: img.bun || d.images.Bun,
    },
    imagePullPolicy: c.scheduledTask.imagePullPolicy,
    startupAllowanceSeconds: c.scheduledTask.startupAllowanceSeconds,
    jobTtlSecondsAfterFinished: c.scheduledTask.jobTtlSecondsAfterFinished,
    executionRetentionDays: c.taskExecution.retentionDays,
    maxExecutionsPerTask: c.taskExecution.maxPerTask,
    outputMaxChars: c.taskExecution.outputMaxChars,
    billing: billingFrom(c.taskExecution.billing),
    archiveWindow: c.archive?.window ?? d.archiveWindow,
    archiveOutputMaxChars: c.archive?.outputMaxChars ?? d.archiveOutputMaxChars,
  };
}

/** Prices from the config (keys in camelCase as flags and env give them); refuses a bad number. */
function billingFrom(b: TaskControllersSettings["taskExecution"]["billing"]): BillingConfig {
  const p = b.pricePerSecond;
  const prices = { Micro: p.micro, Small: p.small, Medium: p.medium, Large: p.large };
  for (const [plan, price] of Object.entries(prices)) {
    try {
      parseDecimal(price);
    } catch (err) {
      throw new Error(
        `controllers.taskExecution.billing.pricePerSecond.${plan.toLowerCase()}: ${String(err)}`,
      );
    }
  }
  return { currency: b.currency, pricePerSecond: prices };
}
