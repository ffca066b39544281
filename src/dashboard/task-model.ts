import cronstrue from "cronstrue";
import { API_VERSION } from "../api/v1alpha1/kind.ts";
import { taskDashboardEnvSecretName } from "../api/v1alpha1/names.ts";
import type { ScheduledTask, ScheduledTaskSpec } from "../api/v1alpha1/scheduledtask.ts";
import { formatInZone, nextRuns, validateSchedule, validateTimezone } from "../cron/index.ts";
import { ApiError } from "../runtime/errors.ts";
import type { KubeObject } from "../runtime/types.ts";

// Pure translation between what the pages show or submit and ScheduledTask objects. Validation
// is the API server's (a dry run); this module only shapes input and maps its answers to fields.

// Readings by expression: thousands of tasks share a few dozen schedules.
const readings = new Map<string, string>();

/** Plain-language reading of a cron expression ("Every 5 minutes, Monday through Friday"). */
export function cronReading(expr: string): string {
  let r = readings.get(expr);
  if (r !== undefined) return r;
  try {
    r = cronstrue.toString(expr, { use24HourTimeFormat: true, verbose: false });
  } catch {
    r = "";
  }
  if (readings.size > 10_000) readings.clear();
  readings.set(expr, r);
  return r;
}

/** A time in `zone`, as people read it: "2026-11-23 10:05:00 +01:00". */
export function formatTime(iso: string | undefined, zone: string): string {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  try {
    return formatInZone(d, zone)
      .replace("T", " ")
      .replace(/([+-]\d\d:\d\d)$/, " $1");
  } catch {
    return d.toISOString();
  }
}

/** Most cards on one page: past this, the page asks for a narrower search. */
export const CARDS_LIMIT = 100;

/** Tasks whose name contains `q` (case-insensitive), by name. */
export function filterTasks<T extends { metadata: { name?: string } }>(tasks: readonly T[], q: string): T[] {
  const needle = q.trim().toLowerCase();
  const out = needle ? tasks.filter((t) => (t.metadata.name ?? "").includes(needle)) : [...tasks];
  return out.sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
}

/** The next `count` run times in `zone`, or the reason there are none. */
export function previewRuns(
  schedule: string,
  zone: string,
  from: Date,
  count = 5,
): { runs: string[] } | { error: string } {
  const issues = [...validateSchedule(schedule), ...validateTimezone(zone)];
  if (issues.length > 0) return { error: issues.map((i) => i.message).join("; ") };
  try {
    return { runs: nextRuns(schedule, zone, from, count).map((d) => formatTime(d.toISOString(), zone)) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** One env row of the form. An empty value on edit keeps the variable's current source. */
export interface EnvRow {
  name: string;
  value: string;
}

/** The task form as strings, exactly as submitted (so a refused form comes back as typed). */
export interface TaskForm {
  name: string;
  language: string;
  script: string;
  schedule: string;
  timezone: string;
  plan: string;
  timeoutSeconds: string;
  concurrencyPolicy: string;
  retries: string;
  startingDeadlineSeconds: string;
  successfulJobsHistoryLimit: string;
  failedJobsHistoryLimit: string;
  suspend: boolean;
  env: EnvRow[];
}

const str = (v: unknown): string => (Array.isArray(v) ? str(v[0]) : typeof v === "string" ? v : "");
const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(str) : v === undefined ? [] : [str(v)]);

/** Reads a submitted form body. */
export function formFromBody(body: Record<string, unknown>): TaskForm {
  const names = list(body.env_name);
  const values = list(body.env_value);
  const env = names
    .map((name, i) => ({ name: name.trim(), value: values[i] ?? "" }))
    .filter((r) => r.name !== "" || r.value !== "");
  return {
    name: str(body.name).trim(),
    language: str(body.language),
    script: str(body.script).replace(/\r\n/g, "\n"),
    schedule: str(body.schedule).trim(),
    timezone: str(body.timezone).trim(),
    plan: str(body.plan),
    timeoutSeconds: str(body.timeoutSeconds).trim(),
    concurrencyPolicy: str(body.concurrencyPolicy),
    retries: str(body.retries).trim(),
    startingDeadlineSeconds: str(body.startingDeadlineSeconds).trim(),
    successfulJobsHistoryLimit: str(body.successfulJobsHistoryLimit).trim(),
    failedJobsHistoryLimit: str(body.failedJobsHistoryLimit).trim(),
    suspend: str(body.suspend) === "true",
    env,
  };
}

/** The form of an existing task (env values are never put into a page: rows carry names only). */
export function formFromTask(task: ScheduledTask): TaskForm {
  const s = task.spec;
  const n = (v: number | undefined) => (v === undefined ? "" : String(v));
  return {
    name: task.metadata.name ?? "",
    language: s.language,
    script: s.script,
    schedule: s.schedule,
    timezone: s.timezone,
    plan: s.plan,
    timeoutSeconds: n(s.timeoutSeconds),
    concurrencyPolicy: s.concurrencyPolicy,
    retries: n(s.retries),
    startingDeadlineSeconds: n(s.startingDeadlineSeconds),
    successfulJobsHistoryLimit: n(s.successfulJobsHistoryLimit),
    failedJobsHistoryLimit: n(s.failedJobsHistoryLimit),
    suspend: s.suspend === true,
    env: (s.env ?? []).map((e) => ({ name: e.name, value: "" })),
  };
}

/** The form of a new task. */
export const NEW_TASK_FORM: TaskForm = {
  name: "",
  language: "Bash",
  script: "",
  schedule: "*/5 * * * *",
  timezone: "UTC",
  plan: "Micro",
  timeoutSeconds: "300",
  concurrencyPolicy: "Forbid",
  retries: "0",
  startingDeadlineSeconds: "",
  successfulJobsHistoryLimit: "3",
  failedJobsHistoryLimit: "3",
  suspend: false,
  env: [],
};

// A number typed as digits goes as a number; anything else goes as typed, so the API server's
// own message ("must be of type integer") names the field.
const num = (v: string): unknown => (/^-?\d+$/.test(v) ? Number(v) : v);

/** What a submitted form becomes: the task, and the env values its Secret must hold. */
export interface TaskPlanResult {
  task: KubeObject;
  secretName: string;
  /** Values entered now, by variable name (written to the Secret). */
  secretValues: Record<string, string>;
  /** Errors found before asking the API server (only what it cannot say: missing env values). */
  fieldErrors: Record<string, string[]>;
}

/**
 * Builds the ScheduledTask of a form. `existing` (edit) supplies metadata and the current source
 * of env rows left empty. Env values typed here go to the task's dashboard Secret.
 */
export function taskFromForm(form: TaskForm, namespace: string, existing?: ScheduledTask): TaskPlanResult {
  const name = existing?.metadata.name ?? form.name;
  const secretName = taskDashboardEnvSecretName(name);
  const fieldErrors: Record<string, string[]> = {};
  const secretValues: Record<string, string> = {};
  const env: NonNullable<ScheduledTaskSpec["env"]> = [];
  for (const row of form.env) {
    const current = existing?.spec.env?.find((e) => e.name === row.name);
    if (row.value === "" && current) {
      env.push(current);
      continue;
    }
    if (row.value === "") {
      addTo(fieldErrors, "env", `env ${row.name || "(no name)"}: enter a value`);
      continue;
    }
    env.push({ name: row.name, valueFrom: { secretKeyRef: { name: secretName, key: row.name } } });
    secretValues[row.name] = row.value;
  }
  if (existing && form.language !== existing.spec.language && form.script === existing.spec.script) {
    fieldErrors.script = [`the language changed to ${form.language}: write the script for it`];
  }
  const spec: Record<string, unknown> = {
    schedule: form.schedule,
    timezone: form.timezone,
    language: form.language,
    script: form.script,
    plan: form.plan,
    suspend: form.suspend,
    concurrencyPolicy: form.concurrencyPolicy,
  };
  const numbers = [
    "timeoutSeconds",
    "retries",
    "startingDeadlineSeconds",
    "successfulJobsHistoryLimit",
    "failedJobsHistoryLimit",
  ] as const;
  for (const k of numbers) if (form[k] !== "") spec[k] = num(form[k]);
  if (env.length > 0) spec.env = env;
  const metadata = existing ? { ...existing.metadata, managedFields: undefined } : { name, namespace };
  return {
    task: { apiVersion: API_VERSION, kind: "ScheduledTask", metadata, spec },
    secretName,
    secretValues,
    fieldErrors,
  };
}

function addTo(errors: Record<string, string[]>, field: string, message: string): void {
  errors[field] = [...(errors[field] ?? []), message];
}

/** Form field a path of an API error points at ("spec.env[0].name" → "env"). */
export function formFieldOf(path: string): string {
  if (path.startsWith("metadata.name") || path === "metadata") return "name";
  const m = /^spec\.([A-Za-z]+)/.exec(path);
  return m?.[1] ?? "";
}

/** Splits an API server refusal into messages per form field and the rest. */
export function apiErrorsByField(
  err: unknown,
  fieldOf: (path: string) => string = formFieldOf,
): { fields: Record<string, string[]>; general: string[] } {
  const fields: Record<string, string[]> = {};
  const general: string[] = [];
  if (!(err instanceof ApiError)) return { fields, general: [(err as Error).message] };
  const body = err.body as
    | { message?: string; details?: { causes?: { field?: string; message?: string }[] } }
    | undefined;
  const causes = body?.details?.causes ?? [];
  for (const c of causes) {
    const field = fieldOf(c.field ?? "");
    // Schema messages name the field themselves ("spec.x in body should be ..."); CEL ones may not.
    const message = c.message ?? "";
    const text = c.field && !message.includes(c.field) ? `${c.field}: ${message}` : message;
    if (field) addTo(fields, field, text);
    else general.push(text);
  }
  if (causes.length === 0) general.push(body?.message ?? err.message);
  return { fields, general };
}
