import type { Session } from "../sessions.ts";
import { html, type VNode } from "./html.ts";
import { Csrf } from "./layout.ts";
import { taskHref } from "./tasks-list.ts";

/** The rename form: the new name, what happens, and the API server's refusal if any. */
export function RenamePage(p: {
  session: Session;
  namespace: string;
  name: string;
  to: string;
  errors: string[];
  general: string[];
}): VNode {
  const href = taskHref(p.namespace, p.name);
  const d = ["to-hint", p.errors.length ? "to-error" : ""].filter(Boolean).join(" ");
  return html`<p><a href=${href}>← ${p.name}</a></p>
    <h1>Rename task ${p.name}</h1>
    ${p.general.length > 0 && html`<div class="panel error" role="alert"><p>Nothing was renamed:</p><ul>${p.general.map((g) => html`<li>${g}</li>`)}</ul></div>`}
    <form method="post" action=${`${href}/rename`} novalidate class="panel">
      <${Csrf} session=${p.session} />
      <div class="field"><label for="to">New name</label>
        <input id="to" name="to" value=${p.to} autocomplete="off" aria-describedby=${d} aria-invalid=${p.errors.length ? "true" : undefined} />
        <p class="hint" id="to-hint">Lowercase letters, digits and hyphens. The task is created under the new name with its execution history, then the old one is deleted. The task is paused for the switch; a run in progress makes the rename wait for it.</p>
        ${p.errors.length > 0 && html`<p class="field-error" id="to-error">${p.errors.join(" · ")}</p>`}</div>
      <div class="actions"><button type="submit">Rename</button><a class="button secondary" href=${href}>Cancel</a></div>
    </form>`;
}
