import type { TaskExecutionSpec } from "../../src/api/v1alpha1/taskexecution.ts";
import type { ArchivedRun } from "../../src/archive/store.ts";

// Archived runs of a task run on a fixed period, as tests and benchmarks of the history fill the
// archive with them: run i completed i + 1 periods before `end`, one in 20 failed (i % 20 === 7).
// Names sort newest first, as the operator's do.

/** Run `i` of `task` in `namespace`, `everyMinutes` apart, the newest (i = 0) a period before `end`. */
export function periodicRun(
  namespace: string,
  task: string,
  i: number,
  end: Date,
  everyMinutes = 1,
): ArchivedRun {
  const t = new Date(end.getTime() - (i + 1) * everyMinutes * 60_000).toISOString();
  const failed = i % 20 === 7;
  const spec: TaskExecutionSpec = {
    taskName: task,
    trigger: "Schedule",
    jobName: `${task}-${i}`,
    language: "Bash",
    plan: "Micro",
    completionTime: t,
    durationSeconds: 2,
    billedSeconds: 2,
    cost: "0.000008",
    currency: "USD",
    result: failed ? "Failed" : "Succeeded",
    exitCode: failed ? 1 : 0,
    reason: failed ? "Error" : "Completed",
    message: failed ? "exit code 1" : "exit code 0",
    output: `run ${i}: ${failed ? "connection refused" : "ok"}\n`,
    outputTruncated: false,
    expiresAt: t,
  };
  return { namespace, name: `${task}-${9_999_999_999 - i}`, taskUid: `uid-${task}`, spec };
}
