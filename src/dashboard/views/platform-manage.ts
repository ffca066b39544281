import { PLATFORM_PLANS, planRank } from "../../api/plans.ts";
import { type ScalePlatform, WEBHOOK_EVENTS } from "../../api/v1alpha1/scaleplatform.ts";
import type { Session } from "../sessions.ts";
import { html, type VNode } from "./html.ts";
import { Csrf, PLATFORMS_PATH } from "./layout.ts";

// Changes to a running platform: Upgrade Now (higher tiers only; the CRD refuses downgrades
// anyway) and Add Webhook. Both are merge patches made as the viewer.

const base = (p: ScalePlatform) =>
  `${PLATFORMS_PATH}/${encodeURIComponent(p.metadata.namespace ?? "")}/${encodeURIComponent(p.metadata.name ?? "")}`;

/** Fixed plans above the platform's current one. */
export function higherPlans(p: ScalePlatform): string[] {
  return PLATFORM_PLANS.filter((x) => x !== "Custom" && planRank(x) > planRank(p.spec.plan));
}

/** Upgrade Now: offered only when a higher plan exists and the viewer may patch. */
export function Upgrade({ platform, session }: { platform: ScalePlatform; session: Session }): VNode | null {
  const plans = higherPlans(platform);
  if (plans.length === 0) return null;
  return html`<form method="post" action=${`${base(platform)}/upgrade`} class="bar">
    <${Csrf} session=${session} />
    <div><label for="upgrade-plan">Upgrade to</label>
      <select id="upgrade-plan" name="plan">${plans.map((x) => html`<option value=${x}>${x}</option>`)}</select></div>
    <button type="submit">Upgrade Now</button>
  </form>`;
}

/** The platform's webhooks, and the Add Webhook form when the viewer may patch. */
export function Webhooks(p: { platform: ScalePlatform; session: Session; canPatch: boolean }): VNode {
  const hooks = p.platform.spec.webhooks ?? [];
  return html`${
    hooks.length === 0
      ? html`<p class="muted">No webhooks.</p>`
      : html`<div class="table-wrap"><table class="stack">
        <thead><tr><th scope="col">Name</th><th scope="col">Endpoint</th><th scope="col">Events</th></tr></thead>
        <tbody>${hooks.map(
          (w) =>
            html`<tr data-webhook=${w.name}><th scope="row">${w.name}</th><td data-label="Endpoint">${w.url}</td><td data-label="Events">${w.events.join(", ")}</td></tr>`,
        )}</tbody></table></div>`
  }
  ${
    p.canPatch &&
    html`<form method="post" action=${`${base(p.platform)}/webhooks`}>
      <${Csrf} session=${p.session} />
      <h3>Add Webhook</h3>
      <div class="grid">
        <div class="field"><label for="wh-name">Webhook name</label><input id="wh-name" name="name" autocomplete="off" /></div>
        <div class="field"><label for="wh-url">Endpoint URL</label><input id="wh-url" name="url" type="url" autocomplete="off" /></div>
      </div>
      <fieldset><legend>Events</legend>
        ${WEBHOOK_EVENTS.map((e) => html`<label class="plan-choice"><input type="checkbox" name="events" value=${e} /> ${e}</label>`)}
      </fieldset>
      <button type="submit">Add Webhook</button>
    </form>`
  }`;
}
