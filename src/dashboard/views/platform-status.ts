import type { ScalePlatform } from "../../api/v1alpha1/scaleplatform.ts";
import type { PodUsage } from "../kube.ts";
import { html, type VNode } from "./html.ts";
import { platformZone } from "./platform-backups.ts";
import { Time } from "./tasks-list.ts";

// The platform page's system values and configuration groups (spec §2.3). Every figure is the
// operator's status or the cluster's metrics API, read as the viewer; a figure nobody measures
// is said to be missing, never made up.

const none = html`<span class="muted">not reported</span>`;

/** Uptime, last restart, health check, replicas and allocation (status), usage (metrics API). */
export function HealthAndUsage({
  platform,
  usage,
}: {
  platform: ScalePlatform;
  usage?: PodUsage | null;
}): VNode {
  const st = platform.status ?? {};
  const r = st.resources ?? {};
  const zone = platformZone(platform);
  const hc = st.healthCheck;
  return html`<section class="panel" aria-labelledby="h-health"><h2 id="h-health">Health</h2>
      <dl class="facts" id="platform-health">
        <dt>Health check</dt><dd>${hc ? html`<span class="badge ${hc.status === "Healthy" ? "Succeeded" : hc.status === "Unhealthy" ? "Failed" : "Unknown"}">${hc.status}</span>${hc.message ? html` <span class="muted">— ${hc.message}</span>` : ""}` : none}</dd>
        ${hc?.lastTransitionTime && html`<dt>Result since</dt><dd><${Time} iso=${hc.lastTransitionTime} zone=${zone} /></dd>`}
        <dt>Uptime</dt><dd>${st.uptimePercent !== undefined ? html`${st.uptimePercent.toFixed(2)} %${st.uptimeSince ? html` since <${Time} iso=${st.uptimeSince} zone=${zone} />` : ""}` : none}</dd>
        <dt>Last restart</dt><dd>${st.lastRestartTime ? html`<${Time} iso=${st.lastRestartTime} zone=${zone} />` : none}</dd>
        <dt>Deployed</dt><dd>${st.deployedTime ? html`<${Time} iso=${st.deployedTime} zone=${zone} />` : none}</dd>
      </dl></section>
    <section class="panel" aria-labelledby="h-usage"><h2 id="h-usage">Resources and usage</h2>
      <dl class="facts" id="platform-usage">
        <dt>Allocated</dt><dd>${r.cpu ? `${r.cpu} vCPU, ${r.memory} memory, ${r.storage} storage` : none}${r.storageActual ? html` <span class="muted">(volume bound: ${r.storageActual})</span>` : ""}</dd>
        <dt>App replicas</dt><dd>${r.appReplicas !== undefined ? `${r.appReplicas} running (autoscaling ${r.minReplicas}–${r.maxReplicas})` : none}</dd>
        <dt>Scaling triggers</dt><dd>${st.activeScalingTriggers?.length ? st.activeScalingTriggers.join(", ") : none}</dd>
        <dt>CPU in use</dt><dd>${usage ? `${(usage.cpuMillis / 1000).toFixed(2)} vCPU over ${usage.pods} pods` : usageMissing(usage)}</dd>
        <dt>Memory in use</dt><dd>${usage ? `${Math.round(usage.memoryMiB)} MiB over ${usage.pods} pods` : usageMissing(usage)}</dd>
        <dt>Storage, network, requests</dt><dd>${none}</dd>
      </dl></section>
    <section class="panel" aria-labelledby="h-performance"><h2 id="h-performance">Performance</h2>
      <p class="muted">Average response time, requests per second, error rate and cache hit rate are not collected by the operator yet, so none is shown.</p></section>`;
}

function usageMissing(usage: PodUsage | null | undefined): VNode {
  return usage === null
    ? html`<span class="muted">you may not read the metrics API here</span>`
    : html`<span class="muted">the cluster serves no metrics API</span>`;
}

const dash = "—";

/** The configuration groups, read-only (changed with the platform's spec, e.g. kubectl apply). */
export function ConfigurationGroups({ platform }: { platform: ScalePlatform }): VNode {
  const s = platform.spec;
  const store = s.store;
  const loc = s.localization;
  const mail = s.email;
  return html`<section class="panel" aria-labelledby="h-config"><h2 id="h-config">Configuration</h2>
    <h3>Store information</h3>
    ${
      store
        ? html`<dl class="facts" id="config-store">
        <dt>Name</dt><dd>${store.name}</dd><dt>URL</dt><dd>${store.url ?? dash}</dd>
        <dt>Contact email</dt><dd>${store.contactEmail}</dd><dt>Support phone</dt><dd>${store.supportPhone ?? dash}</dd>
        <dt>Address</dt><dd>${store.address ? `${store.address.line1}, ${store.address.city}, ${store.address.country}` : dash}</dd></dl>`
        : html`<p class="muted">Not set.</p>`
    }
    <h3>Localization</h3>
    <dl class="facts" id="config-localization">
      <dt>Language</dt><dd>${loc?.defaultLanguage ?? "en"}</dd><dt>Currency</dt><dd>${loc?.currency ?? "USD"}</dd>
      <dt>Timezone</dt><dd>${loc?.timezone ?? "UTC"}</dd><dt>Date format</dt><dd>${loc?.dateFormat ?? "YYYY-MM-DD"}</dd>
      <dt>Default tax rate</dt><dd>${loc?.tax?.defaultRatePercent !== undefined ? `${loc.tax.defaultRatePercent} %` : dash}</dd></dl>
    <h3>Email</h3>
    ${
      mail
        ? html`<dl class="facts" id="config-email">
        <dt>SMTP</dt><dd>${mail.smtp ? `${mail.smtp.host}:${mail.smtp.port ?? ""} (${mail.smtp.security})${mail.smtp.username ? `, user ${mail.smtp.username}` : ""}` : dash}</dd>
        <dt>Password</dt><dd>${mail.smtp?.passwordSecretRef ? `Secret ${mail.smtp.passwordSecretRef.name}, key ${mail.smtp.passwordSecretRef.key}` : dash}</dd>
        <dt>From</dt><dd>${mail.fromName ? `${mail.fromName} <${mail.fromAddress}>` : mail.fromAddress}</dd>
        <dt>Notifications to</dt><dd>${mail.notificationRecipients?.join(", ") || dash}</dd>
        <dt>Transactional emails</dt><dd>${mail.transactional?.join(", ") || dash}</dd></dl>`
        : html`<p class="muted">Not set.</p>`
    }
    <h3>Payment gateways</h3>
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
    <p class="muted">Change these with the platform's spec (for example <code>kubectl edit splat ${platform.metadata.name}</code>); the API server validates each group.</p>
  </section>`;
}
