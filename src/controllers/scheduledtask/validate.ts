import { TaskReason } from "../../api/v1alpha1/conditions.ts";
import {
  type ScheduledTask,
  type ScheduledTaskSpec,
  scheduledTaskSpecSchema,
  TASK_NAME_MAX_LENGTH,
} from "../../api/v1alpha1/scheduledtask.ts";
import { validateSchedule, validateTimezone } from "../../cron/index.ts";

// The apiserver's CEL rules already refuse all of this at apply; the operator checks again so a
// task stored before a CRD upgrade (or with validation bypassed) can never produce children.

/** A valid spec (defaults applied), or why the task is refused. */
export type Validation = { spec: ScheduledTaskSpec } | { invalid: { reason: string; message: string } };

/** Validates a task's name and spec with the same rules as the CRD. */
export function validateTask(task: ScheduledTask): Validation {
  const name = task.metadata.name ?? "";
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) || name.length > TASK_NAME_MAX_LENGTH) {
    return {
      invalid: {
        reason: TaskReason.InvalidSpec,
        message: `metadata.name must be lowercase letters, digits and hyphens, at most ${TASK_NAME_MAX_LENGTH} characters`,
      },
    };
  }
  const parsed = scheduledTaskSpecSchema.safeParse(task.spec ?? {});
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const path = ["spec", ...(first?.path ?? [])].join(".");
    return {
      invalid: { reason: TaskReason.InvalidSpec, message: `${path}: ${first?.message ?? "invalid"}` },
    };
  }
  const spec = parsed.data;
  const scheduleIssue = validateSchedule(spec.schedule)[0];
  if (scheduleIssue)
    return { invalid: { reason: TaskReason.InvalidSchedule, message: scheduleIssue.message } };
  const zoneIssue = validateTimezone(spec.timezone)[0];
  if (zoneIssue) return { invalid: { reason: TaskReason.InvalidTimezone, message: zoneIssue.message } };
  return { spec };
}
