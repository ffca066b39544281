import {
  type CustomFigures,
  PLATFORM_PLANS,
  type PlanBudget,
  planBudget,
  planRank,
} from "../../api/plans.ts";
import { parseCustom } from "../../api/quantities.ts";
import { type ScalePlatform, WEBHOOK_EVENTS } from "../../api/v1alpha1/scaleplatform.ts";
import type { Session } from "../sessions.ts";
import { html, type VNode } from "./html.ts";
import { Csrf, PLATFORMS_PATH } from "./layout.ts";

// Changes to a running platform: Upgrade Now (higher tiers, or Custom with every resource above
// the current plan's; the CRD refuses downgrades anyway) and Add Webhook. Both are merge patches made as the viewer.

const base = (p: ScalePlatform) =>
  `${PLATFORMS_PATH}/${encodeURIComponent(p.metadata.namespace ?? "")}/${encodeURIComponent(p.metadata.name ?? "")}`;

/** Plans above the platform's current one, and Custom (with resources above the current plan's). */
export function higherPlans(p: ScalePlatform): string[] {
  return PLATFORM_PLANS.filter((x) => x === "Custom" || planRank(x) > planRank(p.spec.plan));
}

/** The platform's plan's totals (a Custom plan's from spec.resources). */
export function planTotals(p: ScalePlatform): PlanBudget["total"] {
  return planBudget(p.spec.plan, parseCustom(p.spec)).total;
}

/**
 * Why a Custom plan of `r` is not an upgrade of the platform's plan (each resource must be above
 * the current plan's), or undefined when it is one; `r` must hold quantities.
 */
export function customUpgradeProblem(p: ScalePlatform, r: CustomFigures): string | undefined {
  const now = planTotals(p);
  const low = [
    r.cpuMillis <= now.cpuMillis && `vCPU must be above ${now.cpuMillis / 1000}`,
    r.memoryMiB <= now.memoryMiB && `memory must be above ${now.memoryMiB / 1024} GB`,
    r.storageGiB <= now.storageGiB && `storage must be above ${now.storageGiB} GB`,
  ].filter(Boolean);
  return low.length > 0
    ? `A Custom upgrade raises every resource of ${p.spec.plan}: ${low.join(", ")}.`
    : undefined;
}

/** Upgrade Now: a higher fixed plan, or Custom with every resource above the current plan's. */
export function Upgrade({ platform, session }: { platform: ScalePlatform; session: Session }): VNode | null {
  const plans = higherPlans(platform);
  const now = planTotals(platform);
  return html`<form method="post" action=${`${base(platform)}/upgrade`}>
    <${Csrf} session=${session} />
    <div class="bar"><div><label for="upgrade-plan">Upgrade to</label>
      <select id="upgrade-plan" name="plan">${plans.map((x) => html`<option value=${x}>${x}</option>`)}</select></div></div>
    <fieldset><legend>Custom only: every resource above today's ${now.cpuMillis / 1000} vCPU, ${now.memoryMiB / 1024} GB memory and ${now.storageGiB} GB storage</legend>
      <div class="grid">
        <div class="field"><label for="up-cpu">vCPU</label><input id="up-cpu" name="cpu" inputmode="decimal" autocomplete="off" placeholder="e.g. 24" /></div>
        <div class="field"><label for="up-memory">Memory</label><input id="up-memory" name="memory" autocomplete="off" placeholder="e.g. 48Gi" /></div>
        <div class="field"><label for="up-storage">Storage</label><input id="up-storage" name="storage" autocomplete="off" placeholder="e.g. 1Ti" /></div>
      </div></fieldset>
    <button type="submit">Upgrade Now</button>
  </form>`;
}

/** The platform's webhooks with their events, signing secret, rotate and remove; the Add Webhook form. */
export function Webhooks(p: {
  platform: ScalePlatform;
  session: Session;
  canPatch: boolean;
  secret?: { name: string; value: string };
}): VNode {
  const hooks = p.platform.spec.webhooks ?? [];
  const at = (w: string) => `${base(p.platform)}/webhooks/${encodeURIComponent(w)}`;
  return html`${
    p.secret &&
    html`<div class="panel notice" role="status"><p>Signing secret of webhook <strong>${p.secret.name}</strong>, shown this once: give it to the receiver, which verifies each delivery with it (Standard Webhooks).</p>
      <p><output aria-label=${`Signing secret of ${p.secret.name}`}><code>${p.secret.value}</code></output></p></div>`
  }${
    hooks.length === 0
      ? html`<p class="muted">No webhooks.</p>`
      : html`<div class="table-wrap"><table class="stack">
        <thead><tr><th scope="col">Name</th><th scope="col">Endpoint</th><th scope="col">Events</th><th scope="col">Signed</th></tr></thead>
        <tbody>${hooks.map(
          (w) =>
            html`<tr data-webhook=${w.name}><th scope="row">${w.name}</th><td data-label="Endpoint">${w.url}</td><td data-label="Events">${w.events.join(", ")}</td>
              <td data-label="Signed">${w.signingSecretRef ? html`with Secret <code>${w.signingSecretRef.name}</code>` : html`<span class="muted">unsigned</span>`}</td></tr>`,
        )}</tbody></table></div>`
  }
  ${
    p.canPatch &&
    hooks.map(
      (w) => html`<details class="edit" data-webhook-edit=${w.name}><summary>Edit webhook ${w.name}</summary>
        <form method="post" action=${`${at(w.name)}/events`}>
          <${Csrf} session=${p.session} />
          <fieldset><legend>Events of ${w.name}</legend>
            ${WEBHOOK_EVENTS.map((e) => html`<label class="plan-choice"><input type="checkbox" name="events" value=${e} checked=${w.events.includes(e)} /> ${e}</label>`)}
          </fieldset>
          <button type="submit" class="secondary">Save events</button>
        </form>
        <div class="actions">
          <form method="post" action=${`${at(w.name)}/rotate`}><${Csrf} session=${p.session} /><button type="submit" class="secondary">${w.signingSecretRef ? "Rotate signing secret" : "Create signing secret"}</button></form>
          <form method="post" action=${`${at(w.name)}/remove`}><${Csrf} session=${p.session} /><button type="submit" class="danger">Remove webhook ${w.name}</button></form>
        </div></details>`,
    )
  }
  ${
    p.canPatch &&
    html`<form method="post" action=${`${base(p.platform)}/webhooks`}>
      <${Csrf} session=${p.session} />
      <h3>Add Webhook</h3>
      <p class="muted">A signing secret is made for it and shown once.</p>
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
