// Public surface of the cron module: validation (shared by admission, reconciler and CLI),
// normalisation for the CronJob, and next-run times equal to the Kubernetes CronJob scheduler's.
export { formatInZone } from "./format.ts";
export { nextAfter, nextRuns } from "./next.ts";
export { normalize, parseSchedule, ScheduleError, validateSchedule } from "./parse.ts";
export { validateTimezone, validateTimezoneName } from "./timezone.ts";
export type { CronField, CronSchedule, ValidationIssue } from "./types.ts";
export { CRON_FIELDS } from "./types.ts";
