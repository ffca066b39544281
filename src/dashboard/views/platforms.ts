import {
  type CustomFigures,
  INCLUDED_FEATURES,
  PLAN_TABLE,
  type PlatformPlan,
  planBudget,
} from "../../api/plans.ts";
import { monthlyPrice, type PlatformPrices } from "../../api/platform-prices.ts";
import { BackupReason, CONDITION_BACKUP_HEALTHY } from "../../api/v1alpha1/conditions.ts";
import { PLATFORM_STEPS, type ScalePlatform } from "../../api/v1alpha1/scaleplatform.ts";
import type { Session } from "../sessions.ts";
import { html, type VNode } from "./html.ts";
import { Csrf, PLATFORMS_PATH, platformHref } from "./layout.ts";
import { type ConfigState, ConfigurationGroups } from "./platform-config.ts";
import { Upgrade, Webhooks } from "./platform-manage.ts";
import { HealthAndUsage, type LiveUsage } from "./platform-status.ts";
import { Badge } from "./tasks-list.ts";

/** The fixed plans of the deploy page's table; Custom follows with the resources typed in. */
export const DEPLOY_PLANS = ["Standard", "Professional", "Enterprise"] as const;

/** The installation's prices for the estimate before launch: per fixed plan, and per unit for Custom. */
export type DeployPrices = PlatformPrices;

const cpu = (m: number) => `${m / 1000} vCPU`;
const gb = (mib: number) => `${mib / 1024} GB`;

/** What the deploy form holds, as typed. */
export interface DeployForm {
  name: string;
  plan: string;
  domain: string;
  storeName: string;
  contactEmail: string;
  /** Custom plan only: Kubernetes quantities, as spec.resources takes them. */
  cpu: string;
  memory: string;
  storage: string;
}

/** An empty deploy form (Standard selected). */
export const EMPTY_DEPLOY_FORM: DeployForm = {
  name: "",
  plan: "Standard",
  domain: "",
  storeName: "",
  contactEmail: "",
  cpu: "",
  memory: "",
  storage: "",
};

const STEP_LABELS: Record<(typeof PLATFORM_STEPS)[number], string> = {
  InfrastructureProvisioned: "Infrastructure provisioned",
  SoftwareInstalled: "Software installed",
  DatabaseConfigured: "Database configured",
  LoadBalancerSetUp: "Load balancer set up",
  CertificatesGenerated: "Certificates generated",
  InitialConfigurationApplied: "Initial configuration applied",
  HealthChecksPerformed: "Health checks performed",
};

/** The platforms page: plan, status, step n/7, URLs; Deploy. */
export function PlatformsPage(p: {
  namespace: string;
  namespaces: string[];
  platforms: readonly ScalePlatform[];
  canCreate: boolean;
  /** Server-Sent Events of the cards (when the namespace's list is followed live). */
  liveHref?: string;
}): VNode {
  return html`<h1>Platforms</h1>
    <form class="bar" method="get" action=${PLATFORMS_PATH}>
      <div><label for="namespace">Namespace</label>
        <select id="namespace" name="namespace">${p.namespaces.map((n) => html`<option value=${n} selected=${n === p.namespace}>${n}</option>`)}</select></div>
      <button type="submit" class="secondary">Show</button>
      ${p.canCreate && html`<a class="button" href=${`${PLATFORMS_PATH}/deploy?namespace=${encodeURIComponent(p.namespace)}`}>Deploy</a>`}
    </form>
    <div id="platform-cards" aria-live="polite" data-sse=${p.liveHref} data-sse-event="platforms"><${PlatformCards} platforms=${p.platforms} /></div>`;
}

/** The platform cards (sent again live when the list changes). */
export function PlatformCards({ platforms }: { platforms: readonly ScalePlatform[] }): VNode {
  return platforms.length === 0
    ? html`<p>No platforms in this namespace yet.</p>`
    : html`<ul class="cards" aria-label="Platforms">${platforms.map((x) => {
        const { name = "", namespace = "" } = x.metadata;
        const u = x.status?.urls ?? {};
        return html`<li class="card" data-platform=${name}>
              <header><h2><a href=${platformHref(namespace, name)}>${name}</a></h2><${Badge} value=${x.status?.phase ?? "Pending"} /></header>
              <dl class="facts">
                <dt>Plan</dt><dd>${x.spec.plan}</dd>
                <dt>Steps</dt><dd>${x.status?.stepSummary ?? "0/7"}</dd>
                <dt>Store</dt><dd>${u.platform ? html`<a href=${u.platform}>${u.platform}</a>` : x.spec.domains.platform}</dd>
                ${u.admin && html`<dt>Admin</dt><dd><a href=${u.admin}>${u.admin}</a></dd>`}
              </dl></li>`;
      })}</ul>`;
}

/** The plans with their resources and limits. */
function PlanTable({ selected }: { selected: string }): VNode {
  // On phones the table stacks (one block per plan, each figure labelled) instead of scrolling
  // sideways: see table.stack in assets.ts.
  return html`<fieldset><legend>Plan</legend><div class="table-wrap"><table class="stack plans">
    <thead><tr><th scope="col">Plan</th><th scope="col">vCPU</th><th scope="col">RAM</th><th scope="col">Storage</th><th scope="col">Products</th><th scope="col">Concurrent users</th><th scope="col">App replicas</th></tr></thead>
    <tbody>${DEPLOY_PLANS.map((plan) => {
      const f = PLAN_TABLE[plan];
      return html`<tr>
        <th scope="row"><label class="plan-choice"><input type="radio" name="plan" value=${plan} checked=${selected === plan} class="check" /> ${plan}</label></th>
        <td data-label="vCPU">${f.cpuMillis / 1000}</td><td data-label="RAM">${gb(f.memoryMiB)}</td><td data-label="Storage">${f.storageGiB} GB</td>
        <td data-label="Products">${f.maxProducts?.toLocaleString("en-US") ?? "unlimited"}</td><td data-label="Concurrent users">${f.concurrentUsers}</td><td data-label="App replicas">${f.minReplicas}–${f.maxReplicas}</td></tr>`;
    })}
    <tr><th scope="row"><label class="plan-choice"><input type="radio" name="plan" value="Custom" checked=${selected === "Custom"} class="check" /> Custom</label></th>
      <td data-label="vCPU">as agreed</td><td data-label="RAM">as agreed</td><td data-label="Storage">as agreed</td>
      <td data-label="Products">unlimited</td><td data-label="Concurrent users">dedicated</td><td data-label="App replicas">1–3</td></tr>
    </tbody></table></div></fieldset>`;
}

/**
 * The Custom plan's figures as the summary can show them, or undefined while one is missing or
 * not a quantity (the API server's own message comes on launch).
 */
export function customFiguresOf(
  form: DeployForm,
  parse: (r: { cpu: string; memory: string; storage: string }) => CustomFigures,
): CustomFigures | undefined {
  const quantity = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;
  if (![form.cpu, form.memory, form.storage].every((q) => quantity.test(q))) return undefined;
  const f = parse({ cpu: form.cpu, memory: form.memory, storage: form.storage });
  return f.cpuMillis > 0 && f.memoryMiB > 0 && f.storageGiB > 0 ? f : undefined;
}

/**
 * What a plan includes before its platform reports (status.features): the plan's features but
 * backups, which are in force only when the operator says so (the installation's backup settings
 * and the platform's spec decide; the operator's status is the one place that knows).
 */
function promised(plan: PlatformPlan): string[] {
  const list: string[] = INCLUDED_FEATURES.filter((f) => !/backup/i.test(f));
  return plan === "Custom" ? [...list, "Dedicated resources by agreement"] : list;
}

/** The deployment summary of a plan (before launch, from the plan table and list prices). */
export function Summary(p: {
  name: string;
  plan: string;
  prices: DeployPrices;
  /** The Custom plan's figures, when the form holds valid ones. */
  custom?: CustomFigures;
  /** The operator's estimate once the platform exists (its installation's price table). */
  estimate?: { amount: string; currency: string };
  /** The operator's list of what the running platform has (status.features), once it exists. */
  features?: readonly string[];
}): VNode {
  const plan: PlatformPlan =
    p.plan === "Custom" || (DEPLOY_PLANS as readonly string[]).includes(p.plan)
      ? (p.plan as PlatformPlan)
      : "Standard";
  const b = plan === "Custom" ? (p.custom ? planBudget(plan, p.custom) : undefined) : planBudget(plan);
  const listPrice = (): string => {
    if (plan !== "Custom") return `${p.prices[plan]} ${p.prices.currency}`;
    if (!b) return "—";
    const { amount, currency } = monthlyPrice(plan, b, p.prices);
    return `${amount} ${currency}`;
  };
  return html`<section class="panel" aria-labelledby="h-summary"><h2 id="h-summary">Deployment summary</h2>
    <dl class="facts">
      <dt>Platform</dt><dd>Commerce</dd>
      <dt>Instance</dt><dd>${p.name || "—"}</dd>
      <dt>Plan</dt><dd>${plan}</dd>
      <dt>Resources</dt><dd>${
        b
          ? `${cpu(b.total.cpuMillis)}, ${gb(b.total.memoryMiB)} RAM, ${b.total.storageGiB} GB storage; app ${b.app.minReplicas}–${b.app.maxReplicas} replicas of ${cpu(b.app.cpuMillis)} / ${gb(b.app.memoryMiB)}, database ${cpu(b.database.cpuMillis)} / ${gb(b.database.memoryMiB)}`
          : "enter the Custom plan's vCPU, memory and storage"
      }</dd>
      <dt>Monthly cost</dt><dd>${p.estimate ? `${p.estimate.amount} ${p.estimate.currency} (estimate)` : `${listPrice()} (list price estimate)`}</dd>
      <dt>Included</dt><dd>${(p.features ?? promised(plan)).join(", ")}</dd>
    </dl></section>`;
}

/**
 * Whether the operator reports backups in force for the platform: a BackupHealthy condition
 * other than NotConfigured (whatever made them so: the platform's spec or the installation's default).
 */
export function backupsInForce(x: ScalePlatform): boolean {
  return Boolean(
    x.status?.conditions?.some(
      (c) => c.type === CONDITION_BACKUP_HEALTHY && c.reason !== BackupReason.NotConfigured,
    ),
  );
}

/** The deploy form. */
export function DeployPage(p: {
  session: Session;
  namespace: string;
  form: DeployForm;
  errors: Record<string, string[]>;
  general: string[];
  prices: DeployPrices;
  /** The Custom plan's figures, when the form holds valid ones. */
  custom?: CustomFigures;
}): VNode {
  const f = p.form;
  const field = (id: keyof DeployForm, label: string, hint: string, type = "text") => {
    const errs = p.errors[id] ?? [];
    const d = [`${id}-hint`, errs.length ? `${id}-error` : ""].filter(Boolean).join(" ");
    return html`<div class="field"><label for=${id}>${label}</label>
      <input id=${id} name=${id} type=${type} value=${f[id]} autocomplete="off" aria-describedby=${d} aria-invalid=${errs.length ? "true" : undefined} />
      <p class="hint" id=${`${id}-hint`}>${hint}</p>
      ${errs.length > 0 && html`<p class="field-error" id=${`${id}-error`}>${errs.join(" · ")}</p>`}</div>`;
  };
  return html`<p><a href=${`${PLATFORMS_PATH}?namespace=${encodeURIComponent(p.namespace)}`}>← Platforms</a></p>
    <h1>Deploy a platform</h1>
    ${p.general.length > 0 && html`<div class="panel error" role="alert"><p>The API server refused the platform:</p><ul>${p.general.map((g) => html`<li>${g}</li>`)}</ul></div>`}
    ${Object.keys(p.errors).length > 0 && p.general.length === 0 && html`<p class="panel error" role="alert">Please correct the fields marked below.</p>`}
    <form method="post" action=${`${PLATFORMS_PATH}/deploy?namespace=${encodeURIComponent(p.namespace)}`} novalidate>
      <${Csrf} session=${p.session} />
      <p class="muted">Namespace: <strong>${p.namespace}</strong></p>
      <div class="grid">
        ${field("name", "Instance name", "Lowercase letters, digits and hyphens, at most 40 characters.")}
        ${field("domain", "Store domain", "Host name of the store, e.g. shop.example.com.")}
        ${field("storeName", "Store name", "Shown to customers (optional).")}
        ${field("contactEmail", "Contact email", "Required with a store name.", "email")}
      </div>
      <${PlanTable} selected=${f.plan} />
      <fieldset><legend>Custom plan resources</legend>
        <p class="hint">Only with the Custom plan, as agreed with sales; Kubernetes quantities. They can only grow later.</p>
        <div class="grid">
          ${field("cpu", "vCPU", "Total vCPU, e.g. 24.")}
          ${field("memory", "Memory", "Total memory, e.g. 48Gi.")}
          ${field("storage", "Storage", "Database storage, e.g. 1Ti.")}
        </div>
      </fieldset>
      <${Summary} name=${f.name} plan=${f.plan} prices=${p.prices} custom=${p.custom} />
      <div class="actions">
        <button type="submit" name="intent" value="summary" class="secondary">Update summary</button>
        <button type="submit" name="intent" value="launch">Launch Platform</button>
      </div>
    </form>`;
}

/** The seven steps of a platform (also the body of each live update). */
export function Steps({ platform }: { platform: ScalePlatform }): VNode {
  const steps = platform.status?.steps ?? [];
  return html`<p>Status: <${Badge} value=${platform.status?.phase ?? "Pending"} /> · ${platform.status?.stepSummary ?? "0/7"} steps done</p>
    <ol class="steps">${PLATFORM_STEPS.map((name) => {
      const s = steps.find((x) => x.name === name);
      const state = s?.state ?? "Pending";
      return html`<li data-step=${name} data-state=${state}><span class="badge ${state === "Done" ? "Succeeded" : state === "InProgress" ? "Pending" : state === "Failed" ? "Failed" : "Unknown"}">${state}</span> ${STEP_LABELS[name]}${s?.message ? html` <span class="muted">— ${s.message}</span>` : ""}</li>`;
    })}</ol>`;
}

/** Keys of the generated credentials Secret, in the order shown. */
export const CREDENTIAL_ROWS = [
  ["admin-username", "Admin user"],
  ["admin-password", "Admin password"],
  ["api-key", "API key"],
] as const;

function Credentials(p: {
  platform: ScalePlatform;
  session: Session;
  canReveal: boolean;
  revealed?: Record<string, string>;
}): VNode {
  const secret = p.platform.status?.credentialsSecretName;
  if (!secret) return html`<p class="muted">Generated when the platform is installed.</p>`;
  const { namespace = "", name = "" } = p.platform.metadata;
  return html`<dl class="facts">${CREDENTIAL_ROWS.map(
    ([key, label]) =>
      html`<dt>${label}</dt><dd class="secret">${
        p.revealed
          ? html`<output aria-label=${label}>${p.revealed[key] ?? "—"}</output>`
          : html`<span aria-label="hidden value">••••••••</span>`
      }</dd>`,
  )}</dl>
    ${
      !p.revealed &&
      p.canReveal &&
      html`<form method="post" action=${`${PLATFORMS_PATH}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/credentials`}>
        <${Csrf} session=${p.session} /><button type="submit" class="secondary">Reveal credentials</button></form>`
    }`;
}

/** A launched platform: summary and the steps, updated live over Server-Sent Events. */
export function ProgressPage(p: {
  platform: ScalePlatform;
  session: Session;
  can: { patch: boolean; readSecrets: boolean };
  revealed?: Record<string, string>;
  /** A webhook's signing secret just made or rotated: shown this once. */
  webhookSecret?: { name: string; value: string };
  /** Usage (metrics API) and performance (the platform's /metrics), read as the viewer. */
  live: LiveUsage;
  /** The live part's Server-Sent Events. */
  liveHref: string;
  flash?: string;
  /** The API server's refusal of the last change, shown at the top. */
  problem?: string;
  eventsHref: string;
  /** The configuration groups' live status (Server-Sent Events). */
  configEventsHref: string;
  /** A configuration group as posted, with the API server's answer. */
  config?: ConfigState;
  prices: DeployPrices;
  /** A Custom platform's spec.resources, parsed. */
  custom?: CustomFigures;
}): VNode {
  const x = p.platform;
  const u = x.status?.urls ?? {};
  return html`<p><a href=${`${PLATFORMS_PATH}?namespace=${encodeURIComponent(x.metadata.namespace ?? "")}`}>← Platforms</a></p>
    <h1>${x.metadata.name}</h1>
    ${p.flash && html`<p class="panel notice" role="status">${p.flash}</p>`}
    ${p.problem && html`<p class="panel error" role="alert">The API server refused the change: ${p.problem}</p>`}
    ${
      p.can.patch &&
      html`<div class="actions"><form method="post" action=${`${PLATFORMS_PATH}/${encodeURIComponent(x.metadata.namespace ?? "")}/${encodeURIComponent(x.metadata.name ?? "")}/${x.spec.stopped ? "start" : "stop"}`}>
        <${Csrf} session=${p.session} /><button type="submit" class="secondary">${x.spec.stopped ? "Start" : "Stop"}</button></form></div>`
    }
    <section class="panel" aria-labelledby="h-steps"><h2 id="h-steps">Deployment progress</h2>
      <div id="steps" aria-live="polite" data-sse=${p.eventsHref}><${Steps} platform=${x} /></div>
    </section>
    ${
      (u.platform || u.admin || u.api) &&
      html`<section class="panel"><h2>URLs</h2><ul>
      ${u.platform && html`<li>Store: <a href=${u.platform}>${u.platform}</a></li>`}
      ${u.admin && html`<li>Admin: <a href=${u.admin}>${u.admin}</a></li>`}
      ${u.api && html`<li>API: <a href=${u.api}>${u.api}</a></li>`}</ul></section>`
    }
    <${HealthAndUsage} platform=${x} live=${p.live} liveHref=${p.liveHref} />
    <section class="panel" aria-labelledby="h-plan"><h2 id="h-plan">Plan: ${x.spec.plan}</h2>
      ${p.can.patch ? html`<${Upgrade} platform=${x} session=${p.session} />` : null}</section>
    <section class="panel" aria-labelledby="h-webhooks"><h2 id="h-webhooks">Webhooks</h2>
      <${Webhooks} platform=${x} session=${p.session} canPatch=${p.can.patch} secret=${p.webhookSecret} /></section>
    <section class="panel" aria-labelledby="h-backups"><h2 id="h-backups">Backups</h2>
      <p>${x.status?.backup?.lastSuccessfulBackup ? html`Last backup finished ${x.status.backup.lastSuccessfulBackup.stopTime}. ` : backupsInForce(x) ? "No backup yet. " : "Not configured. "}<a href=${`${PLATFORMS_PATH}/${encodeURIComponent(x.metadata.namespace ?? "")}/${encodeURIComponent(x.metadata.name ?? "")}/backups`}>Backups and recovery</a></p></section>
    <section class="panel" aria-labelledby="h-credentials"><h2 id="h-credentials">Admin credentials</h2>
      <${Credentials} platform=${x} session=${p.session} canReveal=${p.can.readSecrets} revealed=${p.revealed} /></section>
    <${ConfigurationGroups} platform=${x} session=${p.session} canPatch=${p.can.patch} state=${p.config} eventsHref=${p.configEventsHref} />
    <${Summary} name=${x.metadata.name ?? ""} plan=${x.spec.plan} prices=${p.prices} custom=${p.custom} estimate=${x.status?.monthlyCostEstimate} features=${x.status?.features} />`;
}
