import type { CelRule } from "./kind.ts";

// The cron grammar of spec 2.1 as regular expressions that both the CRD's CEL rules (RE2, in the
// apiserver) and the unit tests (JS) evaluate, written to accept exactly what src/cron's
// validateSchedule() accepts (a unit test compares the two over thousands of expressions):
// per field a comma list of `*`, `*/n`, `v`, `a-b`, `a-b/n`; numbers may carry leading zeros
// (robfig reads them with Atoi); a step between 1 and the field's span.
// Names (MON, JAN), `?`, `L`, `v/n` and `@hourly` are refused.

/** Longest schedule accepted; bounds the CEL cost of the per-field checks. */
export const SCHEDULE_MAX_LENGTH = 100;

/** One of the five cron fields. */
export interface CronFieldRule {
  /** Name used in messages. */
  name: string;
  /** Position, for messages ("1st"). */
  ordinal: string;
  /** Allowed values, for messages. */
  range: string;
  /** Allowed steps, for messages. */
  steps: string;
  /** Regex of one value inside the range (no anchors, non-capturing). */
  value: string;
  /** Regex of one step inside 1..span. */
  step: string;
}

/** The five fields in order. */
export const CRON_FIELD_RULES: readonly CronFieldRule[] = [
  {
    name: "minute",
    ordinal: "1st",
    range: "0-59",
    steps: "1-59",
    value: "0*(?:[1-5]?[0-9])",
    step: "0*(?:[1-9]|[1-5][0-9])",
  },
  {
    name: "hour",
    ordinal: "2nd",
    range: "0-23",
    steps: "1-23",
    value: "0*(?:1?[0-9]|2[0-3])",
    step: "0*(?:[1-9]|1[0-9]|2[0-3])",
  },
  {
    name: "day-of-month",
    ordinal: "3rd",
    range: "1-31",
    steps: "1-30",
    value: "0*(?:[1-9]|[12][0-9]|3[01])",
    step: "0*(?:[1-9]|[12][0-9]|30)",
  },
  {
    name: "month",
    ordinal: "4th",
    range: "1-12",
    steps: "1-11",
    value: "0*(?:[1-9]|1[0-2])",
    step: "0*(?:[1-9]|1[01])",
  },
  {
    name: "day-of-week",
    ordinal: "5th",
    range: "0-7 (0 and 7 are Sunday)",
    steps: "1-7",
    value: "0*[0-7]",
    step: "0*[1-7]",
  },
];

/** Anchored regex a whole field must match (a comma list of elements). */
export function fieldPattern(field: CronFieldRule): string {
  const v = field.value;
  const s = field.step;
  const element = `(?:\\*(?:/${s})?|${v}(?:-${v}(?:/${s})?)?)`;
  return `^${element}(?:,${element})*$`;
}

/** Characters a schedule may contain at all. */
export const SCHEDULE_CHARSET = "^[0-9*/,\\- \\t]*$";
/** Exactly five fields separated by blanks (leading/trailing blanks tolerated). */
export const FIVE_FIELDS = "^[ \\t]*[^ \\t]+(?:[ \\t]+[^ \\t]+){4}[ \\t]*$";

// CEL: the fields of the schedule, whatever the blanks between them.
const F = "self.findAll('[^ \\\\t]+')";

// Never-fires (a day-of-month that no chosen month has, with day-of-week `*`), for the forms CEL
// can decide cheaply: day-of-month items that are values or step-less ranges (their first day is
// the smallest), and months that are plain values. Other forms are left to the operator's check.
// Written without nested loops over the fields to keep the CEL cost estimate small.
const NEVER_FIRES =
  `${F}[2].matches('^[0-9,-]+$') && ${F}[3].matches('^[0-9,]+$')` +
  ` && ${F}[4].split(',').exists(i, i == '*' || i.matches('^\\\\*/0*1$'))` +
  ` && ${F}[2].split(',').all(d, int(d.split('-')[0]) >= 30)` +
  ` && (${F}[3].split(',').all(m, int(m) == 2)` +
  ` || (${F}[2].split(',').all(d, int(d.split('-')[0]) == 31)` +
  ` && ${F}[3].split(',').all(m, [2, 4, 6, 9, 11].exists(x, x == int(m)))))`;

function cel(re: string): string {
  return re.replaceAll("\\", "\\\\");
}

/** CEL rules for `spec.schedule`, each with a message that names the field and the rule. */
export function scheduleCelRules(): CelRule[] {
  const rules: CelRule[] = [
    {
      rule: `self.matches('${cel(SCHEDULE_CHARSET)}')`,
      message:
        "spec.schedule may contain only digits, '*', '/', ',', '-' and blanks (names like MON, '?' and @hourly are not supported)",
    },
    {
      rule: `self.matches('${cel(FIVE_FIELDS)}')`,
      message:
        "spec.schedule must have exactly five space-separated fields: minute hour day-of-month month day-of-week",
    },
  ];
  CRON_FIELD_RULES.forEach((field, i) => {
    rules.push({
      rule: `size(${F}) != 5 || ${F}[${i}].matches('${cel(fieldPattern(field))}')`,
      message: `spec.schedule: the ${field.name} field (${field.ordinal}) must be *, */n, a value ${field.range}, a range a-b or a-b/n (step n ${field.steps}), or a comma list of those`,
    });
  });
  rules.push(
    {
      rule: "self.findAll('[0-9]+-[0-9]+').all(r, int(r.split('-')[0]) <= int(r.split('-')[1]))",
      message: "spec.schedule: a range a-b must have a ≤ b",
    },
    {
      rule: `!self.matches('${cel(SCHEDULE_CHARSET)}') || size(${F}) != 5 || !(${NEVER_FIRES})`,
      message:
        "spec.schedule: the day-of-month never occurs in the chosen months; the schedule would never run",
    },
  );
  return rules;
}

/** Same checks as the CEL rules, in JS: the first failing message, or undefined when valid. */
export function checkScheduleShape(schedule: string): string | undefined {
  const rules = scheduleCelRules();
  const msg = (i: number) => rules[i]?.message ?? "invalid";
  if (schedule.length > SCHEDULE_MAX_LENGTH)
    return `spec.schedule must be at most ${SCHEDULE_MAX_LENGTH} characters`;
  if (!new RegExp(SCHEDULE_CHARSET).test(schedule)) return msg(0);
  if (!new RegExp(FIVE_FIELDS).test(schedule)) return msg(1);
  const fields = schedule.match(/[^ \t]+/g) ?? [];
  for (const [i, field] of CRON_FIELD_RULES.entries()) {
    if (!new RegExp(fieldPattern(field)).test(fields[i] ?? "")) return msg(2 + i);
  }
  for (const r of schedule.match(/[0-9]+-[0-9]+/g) ?? []) {
    const [lo = 0, hi = 0] = r.split("-").map(Number);
    if (lo > hi) return msg(7);
  }
  const [, , dom = "", month = "", dow = ""] = fields;
  const first = (d: string) => Number(d.split("-")[0]);
  const never =
    /^[0-9,-]+$/.test(dom) &&
    /^[0-9,]+$/.test(month) &&
    dow.split(",").some((i) => i === "*" || /^\*\/0*1$/.test(i)) &&
    dom.split(",").every((d) => first(d) >= 30) &&
    month
      .split(",")
      .every(
        (m) =>
          Number(m) === 2 ||
          ([4, 6, 9, 11].includes(Number(m)) && dom.split(",").every((d) => first(d) === 31)),
      );
  if (never) return msg(8);
  return undefined;
}
