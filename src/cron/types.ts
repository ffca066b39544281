/** The five fields of a cron expression, in order, as named in validation messages. */
export const CRON_FIELDS = ["minute", "hour", "day-of-month", "month", "day-of-week"] as const;

/** One of the five cron fields. */
export type CronField = (typeof CRON_FIELDS)[number];

/**
 * One reason an input is refused. `message` is complete and user-facing (it starts with the API
 * field path, e.g. `spec.schedule: day-of-week value 8 is out of range 0-7`), so the admission
 * webhook, the reconciler's condition and the CLI all print the same words.
 */
export interface ValidationIssue {
  /** The cron field at fault, `schedule` for the expression as a whole, or `timezone`. */
  field: CronField | "schedule" | "timezone";
  /** API path of the offending spec field. */
  path: "spec.schedule" | "spec.timezone";
  /** The offending text (the element of the field, or the whole input). */
  value: string;
  /** Short machine-readable rule id, e.g. `range`, `step`, `syntax`, `names`, `unknown-zone`. */
  rule: string;
  /** Full human-readable message naming the field and the rule. */
  message: string;
}

/**
 * A parsed schedule as value sets, mirroring robfig/cron v3's SpecSchedule: bit i set means value
 * i matches. `domStar`/`dowStar` record robfig's "star bit" (the field contained `*` without a
 * step greater than 1), which decides whether day-of-month and day-of-week are ANDed or ORed.
 */
export interface CronSchedule {
  /** minute[i] is true when minute i matches (0-59). */
  minute: readonly boolean[];
  /** Hours 0-23. */
  hour: readonly boolean[];
  /** Days of month, indexed 1-31 (index 0 unused). */
  dom: readonly boolean[];
  /** Months, indexed 1-12 (index 0 unused). */
  month: readonly boolean[];
  /** Days of week 0-6 (Sunday = 0); a 7 in the input is folded onto 0. */
  dow: readonly boolean[];
  domStar: boolean;
  dowStar: boolean;
}
