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
