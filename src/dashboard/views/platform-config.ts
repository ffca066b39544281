import { CONDITION_CONFIGURATION_READY } from "../../api/v1alpha1/conditions.ts";
import type { ScalePlatform } from "../../api/v1alpha1/scaleplatform.ts";
import {
  CONFIG_GROUPS,
  type ConfigField,
  type ConfigForm,
  type ConfigGroupDef,
  formOf,
} from "../config-model.ts";
import type { Session } from "../sessions.ts";
import { html, type VNode } from "./html.ts";
import { Csrf, PLATFORMS_PATH } from "./layout.ts";

// The platform's configuration groups (spec §2.3): each group's values, and for viewers who may
// patch the platform a form per group saved as a server-side apply of that group's fields
// (routes-config.ts). Secrets appear only as a Secret's name and key. Below them, whether the
// operator has taken up the saved spec, updated live.

/** What was posted to one group and what the API server said about it. */
export interface ConfigState {
  group: string;
  form: ConfigForm;
  errors: Record<string, string[]>;
  general: string[];
  /** The apply was refused for fields another manager set: offer to save anyway (force). */
  conflict: boolean;
}

const dash = "—";

const shown = (fd: ConfigField, v: string | string[] | undefined) => {
  if (Array.isArray(v)) return v.join(", ") || dash;
  if (fd.kind === "checkbox") return v === "on" ? "yes" : "no";
  return v || (fd.byDefault ? `${fd.byDefault} (default)` : dash);
};

function Input({
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
      : fd.kind === "lines"
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

function GroupForm(p: {
  platform: ScalePlatform;
  group: ConfigGroupDef;
  session: Session;
  state?: ConfigState;
}) {
  const { group: g, state } = p;
  const form = state?.form ?? formOf(g, p.platform);
  const { namespace = "", name = "" } = p.platform.metadata;
  const action = `${PLATFORMS_PATH}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/config/${g.id}`;
  return html`<details class="edit" id=${`edit-${g.id}`} open=${state ? true : undefined}>
    <summary>Edit ${g.title.toLowerCase()}</summary>
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
          ? html`<div class="panel error" role="alert"><p>The API server refused the ${g.title.toLowerCase()}; nothing was saved.</p>
            ${state.general.length > 0 && html`<ul>${state.general.map((m) => html`<li>${m}</li>`)}</ul>`}</div>`
          : ""
      }
      <div class="grid">${g.fields.map((fd) => html`<${Input} fd=${fd} value=${form[fd.id]} errors=${state?.errors[fd.id] ?? []} />`)}</div>
      <button type="submit">Save ${g.title.toLowerCase()}</button>
    </form></details>`;
}

/** The read-only lists (payment gateways, shipping methods). */
function Lists({ platform }: { platform: ScalePlatform }): VNode {
  const s = platform.spec;
  return html`<h3>Payment gateways</h3>
    ${
      s.paymentGateways?.length
        ? html`<div class="table-wrap"><table class="stack" id="config-payments">
        <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Provider</th><th scope="col">Mode</th><th scope="col">Enabled</th><th scope="col">Credentials</th></tr></thead>
        <tbody>${s.paymentGateways.map(
          (
            g,
          ) => html`<tr><th scope="row">${g.name}</th><td data-label="Type">${g.type}</td><td data-label="Provider">${g.provider}</td>
            <td data-label="Mode">${g.mode}</td><td data-label="Enabled">${g.enabled ? "yes" : "no"}</td><td data-label="Credentials">${g.credentialsSecretRef ? `Secret ${g.credentialsSecretRef.name}` : dash}</td></tr>`,
        )}</tbody></table></div>`
        : html`<p class="muted">None.</p>`
    }
    <h3>Shipping methods</h3>
    ${
      s.shippingMethods?.length
        ? html`<div class="table-wrap"><table class="stack" id="config-shipping">
        <thead><tr><th scope="col">Name</th><th scope="col">Carrier</th><th scope="col">Zones</th><th scope="col">Rate</th><th scope="col">Fulfillment</th><th scope="col">Enabled</th></tr></thead>
        <tbody>${s.shippingMethods.map(
          (
            m,
          ) => html`<tr><th scope="row">${m.name}</th><td data-label="Carrier">${m.carrier}</td><td data-label="Zones">${m.zones.join(", ")}</td>
            <td data-label="Rate">${m.rate.calculation}${m.rate.amount ? ` ${m.rate.amount} ${m.rate.currency ?? ""}` : ""}</td><td data-label="Fulfillment">${m.fulfillment}</td><td data-label="Enabled">${m.enabled ? "yes" : "no"}</td></tr>`,
        )}</tbody></table></div>`
        : html`<p class="muted">None.</p>`
    }
    <p class="muted">Payment gateways and shipping methods are changed with the platform's spec (for example <code>kubectl edit splat ${platform.metadata.name}</code>).</p>`;
}

/** Whether the operator has taken up the current spec, and its ConfigurationReady condition (also each live update). */
export function ConfigStatus({ platform }: { platform: ScalePlatform }): VNode {
  const gen = platform.metadata.generation ?? 0;
  const seen = platform.status?.observedGeneration ?? 0;
  const cond = platform.status?.conditions?.find((c) => c.type === CONDITION_CONFIGURATION_READY);
  const current = cond && (cond.observedGeneration ?? 0) >= gen;
  return html`<dl class="facts">
    <dt>Spec</dt><dd data-generation=${gen}>generation ${gen}</dd>
    <dt>Operator</dt><dd data-observed=${seen >= gen ? "true" : "false"}>${
      seen >= gen
        ? html`<span class="badge Succeeded">Taken up</span> has reconciled generation ${seen}`
        : html`<span class="badge Pending">Waiting</span> has reconciled generation ${seen || dash} so far`
    }</dd>
    <dt>Configuration ready</dt><dd data-config-ready=${cond?.status ?? ""}>${
      cond
        ? html`<span class="badge ${cond.status === "True" ? "Succeeded" : cond.status === "False" ? "Failed" : "Unknown"}">${cond.status}</span> ${cond.reason}${cond.message ? html` <span class="muted">— ${cond.message}</span>` : ""}${current ? "" : html` <span class="muted">(for an earlier generation)</span>`}`
        : html`<span class="muted">not reported</span>`
    }</dd></dl>`;
}

/** The configuration groups: values, the edit forms when the viewer may patch, the live status. */
export function ConfigurationGroups(p: {
  platform: ScalePlatform;
  session: Session;
  canPatch: boolean;
  state?: ConfigState;
  eventsHref: string;
}): VNode {
  return html`<section class="panel" id="configuration" aria-labelledby="h-config"><h2 id="h-config">Configuration</h2>
    <h3>Applied by the operator</h3>
    <div id="config-status" aria-live="polite" data-sse=${p.eventsHref} data-sse-event="configuration"><${ConfigStatus} platform=${p.platform} /></div>
    ${CONFIG_GROUPS.map((g) => {
      const values = formOf(g, p.platform);
      return html`<h3>${g.title}</h3>
        <dl class="facts" id=${`config-${g.id}`}>${g.fields.map((fd) => html`<dt>${fd.label}</dt><dd data-field=${fd.id}>${shown(fd, values[fd.id])}</dd>`)}</dl>
        ${p.canPatch && html`<${GroupForm} platform=${p.platform} group=${g} session=${p.session} state=${p.state?.group === g.id ? p.state : undefined} />`}`;
    })}
    <${Lists} platform=${p.platform} />
  </section>`;
}
