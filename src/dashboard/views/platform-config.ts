import { CONDITION_CONFIGURATION_READY } from "../../api/v1alpha1/conditions.ts";
import type { ScalePlatform } from "../../api/v1alpha1/scaleplatform.ts";
import { CONFIG_GROUPS, formOf } from "../config-model.ts";
import type { Session } from "../sessions.ts";
import { type ConfigState, dash, GroupForm, shown } from "./config-form.ts";
import { html, type VNode } from "./html.ts";
import { ConfigLists } from "./platform-config-lists.ts";

export type { ConfigState } from "./config-form.ts";

// The platform's configuration groups (spec §2.3): each group's values, and for viewers who may
// patch the platform a form per group saved as a server-side apply of that group's fields
// (routes-config.ts). Secrets appear only as a Secret's name and key. Below them, whether the
// operator has taken up the saved spec, updated live.

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
        ${p.canPatch && html`<${GroupForm} platform=${p.platform} group=${g} session=${p.session} state=${p.state?.group === g.id && p.state.entry === undefined ? p.state : undefined} />`}`;
    })}
    <${ConfigLists} platform=${p.platform} session=${p.session} canPatch=${p.canPatch} state=${p.state?.entry === undefined ? undefined : p.state} />
  </section>`;
}
