import { describe, expect, it } from "vitest";
import { normalize, parseSchedule, ScheduleError, validateSchedule } from "./index.ts";

describe("validateSchedule refuses invalid expressions, naming the field and the rule", () => {
  // [expression, field, rule, message without the "spec.schedule: " prefix]
  const table: [string, string, string, string][] = [
    ["", "schedule", "required", "must not be empty"],
    ["   ", "schedule", "required", "must not be empty"],
    [
      "* * * *",
      "schedule",
      "field-count",
      "expected exactly 5 fields (minute hour day-of-month month day-of-week), found 4",
    ],
    [
      "0 * * * * *",
      "schedule",
      "field-count",
      "expected exactly 5 fields (minute hour day-of-month month day-of-week), found 6",
    ],
    ["@hourly", "schedule", "descriptor", 'descriptor "@hourly" is not supported; write "0 * * * *" instead'],
    ["@every 5m", "schedule", "descriptor", 'descriptor "@every 5m" is not supported'],
    [
      "TZ=UTC 0 0 * * *",
      "schedule",
      "timezone-in-schedule",
      "TZ= is not allowed in the schedule; set spec.timezone",
    ],
    ["60 * * * *", "minute", "range", "minute value 60 is out of range 0-59"],
    ["0-60 * * * *", "minute", "range", "minute value 60 is out of range 0-59"],
    ["*/0 * * * *", "minute", "step", 'minute step 0 in "*/0" is out of range 1-59'],
    ["*/60 * * * *", "minute", "step", 'minute step 60 in "*/60" is out of range 1-59'],
    ["*/x * * * *", "minute", "syntax", 'minute value "*/x" is not a number, range, list, "*" or "*/n"'],
    [
      "5/15 * * * *",
      "minute",
      "step-base",
      'minute value "5/15": a step needs "*" or a range before "/" (write "*/15" or "5-59/15")',
    ],
    ["1,,2 * * * *", "minute", "syntax", "minute has an empty list element"],
    ["1, * * * *", "minute", "syntax", "minute has an empty list element"],
    ["-5 * * * *", "minute", "syntax", 'minute value "-5" is not a number, range, list, "*" or "*/n"'],
    ["+5 * * * *", "minute", "syntax", 'minute value "+5" is not a number, range, list, "*" or "*/n"'],
    ["*-5 * * * *", "minute", "syntax", 'minute value "*-5" is not a number, range, list, "*" or "*/n"'],
    ["1-2-3 * * * *", "minute", "syntax", 'minute value "1-2-3" is not a number, range, list, "*" or "*/n"'],
    ["*/2/3 * * * *", "minute", "syntax", 'minute value "*/2/3" has more than one "/"'],
    ["? * * * *", "minute", "question-mark", 'minute value "?" is not supported; use "*"'],
    ["0 24 * * *", "hour", "range", "hour value 24 is out of range 0-23"],
    ["0 5-3 * * *", "hour", "range-order", "hour range 5-3 is reversed (the start must not exceed the end)"],
    ["0 */24 * * *", "hour", "step", 'hour step 24 in "*/24" is out of range 1-23'],
    ["0 0 0 * *", "day-of-month", "range", "day-of-month value 0 is out of range 1-31"],
    ["0 0 32 * *", "day-of-month", "range", "day-of-month value 32 is out of range 1-31"],
    [
      "0 0 L * *",
      "day-of-month",
      "unsupported-special",
      'day-of-month value "L" is not supported (L, W and # are not standard cron)',
    ],
    [
      "0 0 15W * *",
      "day-of-month",
      "unsupported-special",
      'day-of-month value "15W" is not supported (L, W and # are not standard cron)',
    ],
    ["0 0 ? * 1", "day-of-month", "question-mark", 'day-of-month value "?" is not supported; use "*"'],
    [
      "0 0 30 2 *",
      "day-of-month",
      "never-fires",
      "day-of-month 30 never occurs in the chosen months; the schedule would never run",
    ],
    [
      "0 0 31 4,6,9,11 *",
      "day-of-month",
      "never-fires",
      "day-of-month 31 never occurs in the chosen months; the schedule would never run",
    ],
    ["0 0 1 0 *", "month", "range", "month value 0 is out of range 1-12"],
    ["0 0 1 13 *", "month", "range", "month value 13 is out of range 1-12"],
    ["0 0 1 JAN *", "month", "names", 'month value "JAN" uses a name; write numbers (JAN = 1)'],
    ["0 0 1 jan-mar *", "month", "names", 'month value "jan-mar" uses a name; write numbers (JAN = 1)'],
    ["0 0 * * 8", "day-of-week", "range", "day-of-week value 8 is out of range 0-7"],
    ["0 0 * * MON", "day-of-week", "names", 'day-of-week value "MON" uses a name; write numbers (MON = 1)'],
    [
      "0 0 * * 5L",
      "day-of-week",
      "unsupported-special",
      'day-of-week value "5L" is not supported (L, W and # are not standard cron)',
    ],
    [
      "0 0 * * 5#2",
      "day-of-week",
      "unsupported-special",
      'day-of-week value "5#2" is not supported (L, W and # are not standard cron)',
    ],
    [
      "0 0 * * 6-1",
      "day-of-week",
      "range-order",
      "day-of-week range 6-1 is reversed (the start must not exceed the end)",
    ],
    ["0 0 * * */8", "day-of-week", "step", 'day-of-week step 8 in "*/8" is out of range 1-7'],
    ["0 0 * * 1-5/0", "day-of-week", "step", 'day-of-week step 0 in "1-5/0" is out of range 1-7'],
  ];

  it.each(table)("%j → %s (%s)", (expr, field, rule, message) => {
    const issues = validateSchedule(expr);
    expect(issues[0]).toEqual({
      field,
      path: "spec.schedule",
      value: expect.any(String),
      rule,
      message: `spec.schedule: ${message}`,
    });
  });

  it("reports every bad field, not just the first", () => {
    const issues = validateSchedule("60 24 0 13 8");
    expect(issues.map((i) => i.field)).toEqual(["minute", "hour", "day-of-month", "month", "day-of-week"]);
  });

  it("throws a ScheduleError carrying the issues from parseSchedule and normalize", () => {
    expect(() => parseSchedule("0 0 * * 8")).toThrow(ScheduleError);
    expect(() => normalize("x")).toThrow(/expected exactly 5 fields/);
  });
});

describe("validateSchedule accepts the spec's forms", () => {
  it.each([
    "* * * * *",
    "*/5 * * * *",
    "0 9 * * 1-5",
    "0,15,30,45 8-18 * * *",
    "0 0 1 1 *",
    "59 23 31 12 7",
    "0 0 * * 0-7",
    "0-30/10 */2 1-15/7 */3 1-5/2",
    "00 09 * * *",
    "  0   9  * *  * ",
    "0 0 29 2 *",
    "0 0 31 2 1",
    "*/15,7 * * * *",
  ])("%j", (expr) => {
    expect(validateSchedule(expr)).toEqual([]);
  });
});

describe("normalize writes what the CronJob gets", () => {
  it.each([
    ["0 0 * * 7", "0 0 * * 0"],
    ["0 0 * * 5-7", "0 0 * * 5-6,0"],
    ["0 0 * * 6-7", "0 0 * * 6,0"],
    ["0 0 * * 7-7", "0 0 * * 0"],
    ["0 0 * * 0-7", "0 0 * * 0-6"],
    ["0 0 * * 1-7/2", "0 0 * * 1-6/2,0"],
    ["0 0 * * 0-7/2", "0 0 * * 0-6/2"],
    ["0 0 * * 0,7", "0 0 * * 0,0"],
    ["00 09 * * 01", "0 9 * * 1"],
    ["  */5\t1-5/2  * * *", "*/5 1-5/2 * * *"],
  ])("%j → %j", (expr, want) => {
    expect(normalize(expr)).toBe(want);
  });

  it("keeps day-of-week 7 and 0 the same day", () => {
    expect(parseSchedule("0 0 * * 7").dow).toEqual(parseSchedule("0 0 * * 0").dow);
  });

  it("follows robfig's star rule: only `*` and `*/1` leave day-of-month/day-of-week unrestricted", () => {
    expect(parseSchedule("0 0 * * 1")).toMatchObject({ domStar: true, dowStar: false });
    expect(parseSchedule("0 0 */1 * 1")).toMatchObject({ domStar: true });
    expect(parseSchedule("0 0 */2 * 1")).toMatchObject({ domStar: false, dowStar: false });
    expect(parseSchedule("0 0 1-31 * 1")).toMatchObject({ domStar: false });
  });
});
