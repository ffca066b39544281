import { planResources, TASK_PLANS } from "../../api/task-plans.ts";
import { TASK_LANGUAGES } from "../../api/v1alpha1/scheduledtask.ts";
import { validateTimezone } from "../../cron/index.ts";
import { GO_ZONE_NAMES } from "../../cron/zones.generated.ts";
import type { Session } from "../sessions.ts";
import { cronReading, previewRuns, type TaskForm } from "../task-model.ts";
import { html, type VNode } from "./html.ts";
import { Csrf, TASKS_PATH } from "./layout.ts";

const ZONES = [...GO_ZONE_NAMES].filter((z) => validateTimezone(z).length === 0).sort();
const ENV_BLANK_ROWS = 3;

/** The next-five-runs box (also served alone as the live preview). */
export function RunPreview({
  schedule,
  timezone,
  now,
}: {
  schedule: string;
  timezone: string;
  now: Date;
}): VNode {
  const p = previewRuns(schedule, timezone || "UTC", now, 5);
  if ("error" in p) return html`<p class="muted">No preview: ${p.error}</p>`;
  return html`<p>${cronReading(schedule)} (${timezone || "UTC"}). Next five runs:</p>
    <ol>${p.runs.map((r) => html`<li>${r}</li>`)}</ol>`;
}

type Errors = Record<string, string[]>;

function Field(p: {
  id: keyof TaskForm | string;
  label: string;
  hint?: string;
  errors: Errors;
  children: (describedBy: string | undefined, invalid: boolean) => VNode;
}): VNode {
  const errs = p.errors[p.id] ?? [];
  const ids = [p.hint ? `${p.id}-hint` : "", errs.length ? `${p.id}-error` : ""].filter(Boolean).join(" ");
  return html`<div class="field">
    <label for=${p.id}>${p.label}</label>
    ${p.children(ids || undefined, errs.length > 0)}
    ${p.hint && html`<p class="hint" id=${`${p.id}-hint`}>${p.hint}</p>`}
    ${errs.length > 0 && html`<p class="field-error" id=${`${p.id}-error`}>${errs.join(" · ")}</p>`}
  </div>`;
}

const inv = (b: boolean) => (b ? "true" : undefined);

/** New Task / edit form: every field of the task, the API server's messages beside them. */
export function TaskFormPage(p: {
  session: Session;
  namespace: string;
  form: TaskForm;
  editing: boolean;
  errors: Errors;
  general: string[];
  now: Date;
}): VNode {
  const { form: f, errors, editing, namespace } = p;
  const action = editing
    ? `${TASKS_PATH}/${encodeURIComponent(namespace)}/${encodeURIComponent(f.name)}/edit`
    : `${TASKS_PATH}/new?namespace=${encodeURIComponent(namespace)}`;
  const rows = [...f.env, ...Array.from({ length: ENV_BLANK_ROWS }, () => ({ name: "", value: "" }))];
  const text = (id: keyof TaskForm, label: string, hint?: string, type = "text") =>
    html`<${Field} id=${id} label=${label} hint=${hint} errors=${errors}>${(
      d: string | undefined,
      bad: boolean,
    ) =>
      html`<input id=${id} name=${id} type=${type} value=${String(f[id])} aria-describedby=${d} aria-invalid=${inv(bad)} />`}</${Field}>`;
  const select = (
    id: keyof TaskForm,
    label: string,
    options: readonly (readonly [string, string])[],
    hint?: string,
  ) =>
    html`<${Field} id=${id} label=${label} hint=${hint} errors=${errors}>${(
      d: string | undefined,
      bad: boolean,
    ) =>
      html`<select id=${id} name=${id} aria-describedby=${d} aria-invalid=${inv(bad)}>
        ${options.map(([v, l]) => html`<option value=${v} selected=${f[id] === v}>${l}</option>`)}</select>`}</${Field}>`;
  return html`<p><a href=${`${TASKS_PATH}?namespace=${encodeURIComponent(namespace)}`}>← Tasks</a></p>
    <h1>${editing ? `Edit ${f.name}` : "New Task"}</h1>
    ${
      p.general.length > 0 &&
      html`<div class="panel error" role="alert"><p>The API server refused the task:</p><ul>${p.general.map((g) => html`<li>${g}</li>`)}</ul></div>`
    }
    ${
      Object.keys(errors).length > 0 &&
      p.general.length === 0 &&
      html`<p class="panel error" role="alert">Please correct the fields marked below.</p>`
    }
    <form method="post" action=${action} novalidate>
      <${Csrf} session=${p.session} />
      <fieldset><legend>Task</legend>
        <p class="muted">Namespace: <strong>${namespace}</strong></p>
        ${
          editing
            ? html`<p>Name: <strong>${f.name}</strong></p><input type="hidden" name="name" value=${f.name} />`
            : text("name", "Name", "Lowercase letters, digits and hyphens, at most 52 characters.")
        }
        ${select(
          "language",
          "Language",
          TASK_LANGUAGES.map((l) => [l, l] as const),
          editing ? "Changing the language needs a new script." : undefined,
        )}
        <${Field} id="script" label="Script" errors=${errors}>${(d: string | undefined, bad: boolean) =>
          html`<textarea id="script" name="script" spellcheck="false" aria-describedby=${d} aria-invalid=${inv(bad)}>${f.script}</textarea>`}</${Field}>
      </fieldset>
      <fieldset><legend>Schedule</legend>
        <div class="grid">
          <${Field} id="schedule" label="Cron expression" hint="minute hour day-of-month month day-of-week, e.g. */5 * * * *" errors=${errors}>${(
            d: string | undefined,
            bad: boolean,
          ) =>
            html`<input id="schedule" name="schedule" value=${f.schedule} autocomplete="off" aria-describedby=${d} aria-invalid=${inv(bad)}
              data-partial=${`${TASKS_PATH}/preview`} data-target="run-preview" data-watch="#timezone" data-fields="schedule,timezone" />`}</${Field}>
          <${Field} id="timezone" label="Time zone" hint="IANA name, e.g. Europe/Paris" errors=${errors}>${(
            d: string | undefined,
            bad: boolean,
          ) =>
            html`<input id="timezone" name="timezone" value=${f.timezone} list="zones" autocomplete="off" aria-describedby=${d} aria-invalid=${inv(bad)} />`}</${Field}>
        </div>
        <datalist id="zones">${ZONES.map((z) => html`<option value=${z} />`)}</datalist>
        <div id="run-preview" aria-live="polite"><${RunPreview} schedule=${f.schedule} timezone=${f.timezone} now=${p.now} /></div>
        <button type="submit" name="intent" value="preview" class="secondary" data-js-hide="">Preview runs</button>
        <div class="field"><label><input type="checkbox" name="suspend" value="true" checked=${f.suspend} class="check" /> Suspended (no scheduled runs)</label></div>
      </fieldset>
      <fieldset><legend>Resources and limits</legend>
        <div class="grid">
          ${select(
            "plan",
            "Plan",
            TASK_PLANS.map(
              (pl) =>
                [
                  pl,
                  `${pl} — ${planResources(pl).vcpu} vCPU, ${planResources(pl).memoryDisplay} RAM`,
                ] as const,
            ),
          )}
          ${text("timeoutSeconds", "Timeout (seconds)", "10 to 3600.", "text")}
          ${select("concurrencyPolicy", "When a run is due while one runs", [
            ["Forbid", "Skip the new run (Forbid)"],
            ["Allow", "Run both (Allow)"],
            ["Replace", "Stop the old run (Replace)"],
          ])}
          ${text("retries", "Retries after a failure", "0 to 5.")}
          ${text("startingDeadlineSeconds", "Start deadline (seconds, optional)", "Skip a run that cannot start within this time.")}
          ${text("successfulJobsHistoryLimit", "Succeeded Jobs kept", "1 to 10.")}
          ${text("failedJobsHistoryLimit", "Failed Jobs kept", "1 to 10.")}
        </div>
      </fieldset>
      <fieldset><legend>Environment variables</legend>
        <p class="hint">Values are stored in a Secret owned by the task, never in the task itself; they are not shown again after saving.${editing ? " Leave a value empty to keep the current one." : ""}</p>
        ${(errors.env ?? []).length > 0 && html`<p class="field-error" id="env-error">${(errors.env ?? []).join(" · ")}</p>`}
        ${rows.map(
          (r, i) => html`<div class="env-row">
            <div><label for=${`env-name-${i}`}>Name ${i + 1}</label><input id=${`env-name-${i}`} name="env_name" value=${r.name} autocomplete="off" /></div>
            <div><label for=${`env-value-${i}`}>Value ${i + 1}</label><input id=${`env-value-${i}`} name="env_value" type="password" autocomplete="off" value=${r.value}
              placeholder=${editing && r.name ? "unchanged" : ""} /></div></div>`,
        )}
      </fieldset>
      <div class="actions"><button type="submit" name="intent" value="save">${editing ? "Save Changes" : "Create Task"}</button>
        <a class="button secondary" href=${`${TASKS_PATH}?namespace=${encodeURIComponent(namespace)}`}>Cancel</a></div>
    </form>`;
}
