import { CRON_FIELDS, type CronField, type CronSchedule, type ValidationIssue } from "./types.ts";

// Accepted grammar (per field): a comma list of items, each item one of
//   *        */n        v        a-b        a-b/n
// This is the spec's list (`*`, `*/n`, single values, comma lists, ranges) plus `a-b/n`, which
// robfig/cron v3, Vixie cron and every crontab man page accept. Everything else robfig would also
// take (names, `?`, `v/n`, descriptors, `TZ=`, empty list items, `*-5`, `+5`) is refused with a
// message saying what to write instead; see README.md "Accepted syntax".

interface FieldSpec {
  field: CronField;
  min: number;
  max: number;
  /** Upper end of `*` (robfig's day-of-week star is 0-6 even though 7 is accepted). */
  starMax: number;
  names?: readonly string[];
}

const FIELD_SPECS: readonly FieldSpec[] = [
  { field: "minute", min: 0, max: 59, starMax: 59 },
  { field: "hour", min: 0, max: 23, starMax: 23 },
  { field: "day-of-month", min: 1, max: 31, starMax: 31 },
  {
    field: "month",
    min: 1,
    max: 12,
    starMax: 12,
    names: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
  },
  {
    field: "day-of-week",
    min: 0,
    max: 7,
    starMax: 6,
    names: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
  },
];

const DESCRIPTORS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

const DAYS_IN_MONTH = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** One item of a field after parsing, kept so normalize() can rebuild it canonically. */
interface Item {
  kind: "star" | "value" | "range";
  start: number;
  end: number;
  step: number;
}

interface ParsedField {
  items: Item[];
  values: boolean[];
  star: boolean;
}

type Parsed = { ok: true; fields: ParsedField[] } | { ok: false; issues: ValidationIssue[] };

function issue(field: ValidationIssue["field"], value: string, rule: string, text: string): ValidationIssue {
  return { field, path: "spec.schedule", value, rule, message: `spec.schedule: ${text}` };
}

const NUMBER = /^[0-9]+$/;

function parseItem(spec: FieldSpec, raw: string, out: ValidationIssue[]): Item | undefined {
  const f = spec.field;
  const bad = (rule: string, text: string) => {
    out.push(issue(f, raw, rule, text));
    return undefined;
  };
  if (raw === "") return bad("syntax", `${f} has an empty list element`);
  if (raw.includes("?")) return bad("question-mark", `${f} value "${raw}" is not supported; use "*"`);
  if (/[a-z]/i.test(raw)) {
    const name = raw
      .toLowerCase()
      .split(/[-/,]/)
      .find((p) => spec.names?.includes(p));
    if (name !== undefined) {
      const n = spec.names?.indexOf(name) ?? 0;
      const num = spec.field === "month" ? n + 1 : n;
      return bad("names", `${f} value "${raw}" uses a name; write numbers (${name.toUpperCase()} = ${num})`);
    }
    if (/[LW#]/i.test(raw) && /^[0-9LW#]+$/i.test(raw)) {
      return bad(
        "unsupported-special",
        `${f} value "${raw}" is not supported (L, W and # are not standard cron)`,
      );
    }
    return bad("syntax", `${f} value "${raw}" is not a number, range, list, "*" or "*/n"`);
  }
  if (raw.includes("#")) {
    return bad(
      "unsupported-special",
      `${f} value "${raw}" is not supported (L, W and # are not standard cron)`,
    );
  }
  const slash = raw.split("/");
  if (slash.length > 2) return bad("syntax", `${f} value "${raw}" has more than one "/"`);
  const [base = "", stepText] = slash;
  let step = 1;
  if (stepText !== undefined) {
    const span = spec.max - spec.min;
    if (!NUMBER.test(stepText)) return bad("step", `${f} step "${stepText}" in "${raw}" is not a number`);
    step = Number(stepText);
    if (step < 1 || step > span) {
      return bad("step", `${f} step ${step} in "${raw}" is out of range 1-${span}`);
    }
  }
  if (base === "*") return { kind: "star", start: spec.min, end: spec.starMax, step };
  const dash = base.split("-");
  if (dash.length > 2) return bad("syntax", `${f} value "${raw}" is not a number, range, list, "*" or "*/n"`);
  for (const part of dash) {
    if (!NUMBER.test(part)) {
      return bad("syntax", `${f} value "${raw}" is not a number, range, list, "*" or "*/n"`);
    }
  }
  const start = Number(dash[0]);
  const end = dash.length === 2 ? Number(dash[1]) : start;
  for (const v of dash.length === 2 ? [start, end] : [start]) {
    if (v < spec.min || v > spec.max) {
      return bad("range", `${f} value ${v} is out of range ${spec.min}-${spec.max}`);
    }
  }
  if (dash.length === 1 && stepText !== undefined) {
    return bad(
      "step-base",
      `${f} value "${raw}": a step needs "*" or a range before "/" (write "*/${step}" or "${start}-${spec.max}/${step}")`,
    );
  }
  if (start > end) {
    return bad("range-order", `${f} range ${start}-${end} is reversed (the start must not exceed the end)`);
  }
  return { kind: dash.length === 2 ? "range" : "value", start, end, step };
}

function parseField(spec: FieldSpec, text: string, out: ValidationIssue[]): ParsedField | undefined {
  const before = out.length;
  const items: Item[] = [];
  for (const raw of text.split(",")) {
    const item = parseItem(spec, raw, out);
    if (item) items.push(item);
  }
  if (out.length > before) return undefined;
  const values: boolean[] = new Array(spec.max + 1).fill(false);
  let star = false;
  for (const it of items) {
    for (let v = it.start; v <= it.end; v += it.step) values[spec.field === "day-of-week" ? v % 7 : v] = true;
    // robfig keeps its "star bit" only for `*` and `*/1`: `*/2` counts as a restriction.
    if (it.kind === "star" && it.step === 1) star = true;
  }
  if (spec.field === "day-of-week") values.length = 7;
  return { items, values, star };
}

function wholeExpressionIssues(expr: string): ValidationIssue[] | undefined {
  const trimmed = expr.trim();
  if (trimmed === "") return [issue("schedule", expr, "required", "must not be empty")];
  if (trimmed.startsWith("@")) {
    const equivalent = DESCRIPTORS[trimmed.toLowerCase()];
    const hint = equivalent ? `; write "${equivalent}" instead` : "";
    return [issue("schedule", expr, "descriptor", `descriptor "${trimmed}" is not supported${hint}`)];
  }
  if (/^(CRON_)?TZ=/.test(trimmed)) {
    return [
      issue(
        "schedule",
        expr,
        "timezone-in-schedule",
        "TZ= is not allowed in the schedule; set spec.timezone",
      ),
    ];
  }
  const count = trimmed.split(/\s+/).length;
  if (count !== 5) {
    return [
      issue(
        "schedule",
        expr,
        "field-count",
        `expected exactly 5 fields (minute hour day-of-month month day-of-week), found ${count}`,
      ),
    ];
  }
  return undefined;
}

function neverFiresIssue(fields: ParsedField[]): ValidationIssue | undefined {
  const [, , dom, month, dow] = fields;
  if (!dom || !month || !dow || dom.star || !dow.star) return undefined;
  for (let m = 1; m <= 12; m++) {
    if (!month.values[m]) continue;
    for (let d = 1; d <= (DAYS_IN_MONTH[m] ?? 31); d++) if (dom.values[d]) return undefined;
  }
  const days = dom.items.map((i) => fmtItem(i)).join(",");
  return issue(
    "day-of-month",
    days,
    "never-fires",
    `day-of-month ${days} never occurs in the chosen months; the schedule would never run`,
  );
}

/** Parse results by expression: every reconcile of a task validates its schedule. */
const parsedByExpr = new Map<string, Parsed>();
const PARSED_MAX = 1024;

/** parseUncached, remembered (its results are never changed by callers). */
function parseAll(expr: string): Parsed {
  let p = parsedByExpr.get(expr);
  if (!p) {
    p = parseUncached(expr);
    // Bounded: many distinct schedules only cost re-parsing, never memory.
    if (parsedByExpr.size >= PARSED_MAX) parsedByExpr.clear();
    parsedByExpr.set(expr, p);
  }
  return p;
}

function parseUncached(expr: string): Parsed {
  const early = wholeExpressionIssues(expr);
  if (early) return { ok: false, issues: early };
  const texts = expr.trim().split(/\s+/);
  const issues: ValidationIssue[] = [];
  const fields: ParsedField[] = [];
  FIELD_SPECS.forEach((spec, i) => {
    const f = parseField(spec, texts[i] ?? "", issues);
    if (f) fields.push(f);
  });
  if (issues.length > 0) return { ok: false, issues };
  const never = neverFiresIssue(fields);
  if (never) return { ok: false, issues: [never] };
  return { ok: true, fields };
}

/** Validates a cron expression against the spec's rules; an empty list means it is valid. */
export function validateSchedule(expr: string): ValidationIssue[] {
  const p = parseAll(expr);
  return p.ok ? [] : [...p.issues];
}

/** Thrown by parseSchedule/normalize for an invalid expression; carries every issue. */
export class ScheduleError extends Error {
  readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[]) {
    super(issues.map((i) => i.message).join("; "));
    this.name = "ScheduleError";
    this.issues = issues;
  }
}

function mustParse(expr: string): ParsedField[] {
  const p = parseAll(expr);
  if (!p.ok) throw new ScheduleError(p.issues);
  return p.fields;
}

/** Parses a valid expression into match sets (throws ScheduleError otherwise). */
export function parseSchedule(expr: string): CronSchedule {
  const [minute, hour, dom, month, dow] = mustParse(expr);
  if (!minute || !hour || !dom || !month || !dow) throw new Error("unreachable: five fields parsed");
  return {
    minute: minute.values,
    hour: hour.values,
    dom: dom.values,
    month: month.values,
    dow: dow.values,
    domStar: dom.star,
    dowStar: dow.star,
  };
}

function fmtItem(it: Item): string {
  const base = it.kind === "star" ? "*" : it.kind === "value" ? `${it.start}` : `${it.start}-${it.end}`;
  return it.step === 1 ? base : `${base}/${it.step}`;
}

/** Rewrites a day-of-week item that mentions 7 (robfig's range is 0-6) with the same days. */
function foldSeven(it: Item): string[] {
  if (it.kind === "star" || it.end < 7) return [fmtItem(it)];
  let hitsSeven = false;
  for (let v = it.start; v <= it.end; v += it.step) if (v === 7) hitsSeven = true;
  if (it.start === 7) return ["0"];
  const rest = fmtItem({
    kind: it.start === 6 && it.step === 1 ? "value" : "range",
    start: it.start,
    end: 6,
    step: it.step,
  });
  // A range starting at 0 already contains Sunday.
  return hitsSeven && it.start !== 0 ? [rest, "0"] : [rest];
}

/**
 * The schedule string to write into the CronJob: single spaces, numbers without leading zeros,
 * and day-of-week 7 rewritten to 0 (robfig/cron v3, and so Kubernetes, rejects 7). The result
 * parses in robfig to exactly the schedule parseSchedule() returns for the input.
 */
export function normalize(expr: string): string {
  const fields = mustParse(expr);
  return fields
    .map((f, i) => {
      const dow = CRON_FIELDS[i] === "day-of-week";
      return f.items.flatMap((it) => (dow ? foldSeven(it) : [fmtItem(it)])).join(",");
    })
    .join(" ");
}
