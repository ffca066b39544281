import type { ScalePlatform } from "../../api/v1alpha1/scaleplatform.ts";
import { type ConfigField, type ConfigForm, type ConfigGroupDef, formOf } from "../config-model.ts";
import type { Session } from "../sessions.ts";
import { html } from "./html.ts";
import { Csrf, PLATFORMS_PATH } from "./layout.ts";

// One configuration form (a group, or one entry of a list), saved as a server-side apply: its
// fields with the API server's messages beside them, and "Save anyway" after a conflict.

/** What was posted to one group and what the API server said about it. */
export interface ConfigState {
  group: string;
  form: ConfigForm;
  errors: Record<string, string[]>;
  general: string[];
  /** The apply was refused for fields another manager set: offer to save anyway (force). */
  conflict: boolean;
  /** For a list (payment gateways, shipping methods): the entry's name, "" for a new one. */
  entry?: string;
}

export const dash = "—";

export const shown = (fd: ConfigField, v: string | string[] | undefined) => {
  if (Array.isArray(v)) return v.join(", ") || dash;
  if (fd.kind === "checkbox") return v === "on" ? "yes" : "no";
  return v || (fd.byDefault ? `${fd.byDefault} (default)` : dash);
};

export function Input({
  fd,
  value,
  errors,
}: {
  fd: ConfigField;
  value: string | string[] | undefined;
  errors: string[];
}) {
  const described = [fd.hint ? `${fd.id}-hint` : "", errors.length ? `${fd.id}-error` : ""]
    .filter(Boolean)
    .join(" ");
  const common = {
    id: fd.id,
    name: fd.id,
    "aria-describedby": described || undefined,
    "aria-invalid": errors.length ? "true" : undefined,
  };
  const v = Array.isArray(value) ? value : [value ?? ""];
  const control =
    fd.kind === "select"
      ? html`<select ...${common}>${(fd.options ?? []).map((o) => html`<option value=${o} selected=${v[0] === o}>${o}</option>`)}</select>`
      : fd.kind === "lines" || fd.kind === "pairs"
        ? html`<textarea ...${common} rows="4" class="short">${v[0]}</textarea>`
        : fd.kind === "checkbox"
          ? html`<input ...${common} type="checkbox" class="check" checked=${v[0] === "on"} />`
          : html`<input ...${common} type=${fd.kind === "list" ? "text" : fd.kind === "number" ? "text" : fd.kind} inputmode=${fd.kind === "number" ? "numeric" : undefined} value=${v[0]} placeholder=${fd.byDefault} autocomplete="off" />`;
  if (fd.kind === "checks")
    return html`<fieldset class="field" aria-describedby=${errors.length ? `${fd.id}-error` : undefined}><legend>${fd.label}</legend>
      ${(fd.options ?? []).map((o) => html`<label class="plan-choice"><input type="checkbox" name=${fd.id} value=${o} checked=${v.includes(o)} /> ${o}</label>`)}
      ${errors.length > 0 && html`<p class="field-error" id=${`${fd.id}-error`}>${errors.join(" · ")}</p>`}</fieldset>`;
  return html`<div class="field"><label for=${fd.id}>${fd.label}</label>${control}
    ${fd.hint && html`<p class="hint" id=${`${fd.id}-hint`}>${fd.hint}</p>`}
    ${errors.length > 0 && html`<p class="field-error" id=${`${fd.id}-error`}>${errors.join(" · ")}</p>`}</div>`;
}

/** The config routes' base of a platform. */
export const configHref = (p: ScalePlatform) =>
  `${PLATFORMS_PATH}/${encodeURIComponent(p.metadata.namespace ?? "")}/${encodeURIComponent(p.metadata.name ?? "")}/config`;

/** A group's form (also one list entry's: `entry` gives its form, route, summary and button). */
export function GroupForm(p: {
  platform: ScalePlatform;
  group: ConfigGroupDef;
  session: Session;
  state?: ConfigState;
  entry?: { domId: string; form: ConfigForm; action: string; summary: string; submit: string; what: string };
}) {
  const { group: g, state, entry } = p;
  const form = state?.form ?? entry?.form ?? formOf(g, p.platform);
  const action = entry?.action ?? `${configHref(p.platform)}/${g.id}`;
  return html`<details class="edit" id=${entry?.domId ?? `edit-${g.id}`} open=${state ? true : undefined}>
    <summary>${entry?.summary ?? `Edit ${g.title.toLowerCase()}`}</summary>
    <form method="post" action=${action} novalidate>
      <${Csrf} session=${p.session} />
      ${
        state?.conflict &&
        html`<div class="panel error" role="alert"><p>Not saved: some of these fields were last set by another manager
          (for example <code>kubectl apply</code> or whoever created the platform) to a different value, as marked below.
          Save anyway to set your values and make the dashboard their manager, or reload to see the current values.</p>
          <button type="submit" name="force" value="true" class="danger">Save anyway</button></div>`
      }
      ${
        state && !state.conflict && (state.general.length > 0 || Object.keys(state.errors).length > 0)
          ? html`<div class="panel error" role="alert"><p>The API server refused the ${entry?.what ?? g.title.toLowerCase()}; nothing was saved.</p>
            ${state.general.length > 0 && html`<ul>${state.general.map((m) => html`<li>${m}</li>`)}</ul>`}</div>`
          : ""
      }
      <div class="grid">${g.fields.map((fd) => html`<${Input} fd=${fd} value=${form[fd.id]} errors=${state?.errors[fd.id] ?? []} />`)}</div>
      <button type="submit">${entry?.submit ?? `Save ${g.title.toLowerCase()}`}</button>
    </form></details>`;
}
