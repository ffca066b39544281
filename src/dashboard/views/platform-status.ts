import type { ScalePlatform } from "../../api/v1alpha1/scaleplatform.ts";
import { type PodUsage, quantity } from "../kube.ts";
import type { PlatformPerformance } from "../platform-metrics.ts";
import { zoneOf } from "../restore-model.ts";
import { html, type VNode } from "./html.ts";
import { Time } from "./tasks-list.ts";

// The platform page's system values (spec §2.3). Every figure is the operator's status, the
// cluster's metrics API or the platform's own /metrics, read as the viewer; a figure nobody
// measures is said to be missing, never made up.

const none = html`<span class="muted">not reported</span>`;

/** Uptime, last restart, health check (status), then the live usage and performance. */
export function HealthAndUsage({
  platform,
  live,
  liveHref,
}: {
  platform: ScalePlatform;
  live: LiveUsage;
  /** Server-Sent Events of the live part (usage and performance, re-read every refresh). */
  liveHref: string;
}): VNode {
  const st = platform.status ?? {};
  const zone = zoneOf(platform);
  const hc = st.healthCheck;
  return html`<section class="panel" aria-labelledby="h-health"><h2 id="h-health">Health</h2>
      <dl class="facts" id="platform-health">
        <dt>Health check</dt><dd>${hc ? html`<span class="badge ${hc.status === "Healthy" ? "Succeeded" : hc.status === "Unhealthy" ? "Failed" : "Unknown"}">${hc.status}</span>${hc.message ? html` <span class="muted">— ${hc.message}</span>` : ""}` : none}</dd>
        ${hc?.lastTransitionTime && html`<dt>Result since</dt><dd><${Time} iso=${hc.lastTransitionTime} zone=${zone} /></dd>`}
        <dt>Uptime</dt><dd>${st.uptimePercent !== undefined ? html`${st.uptimePercent.toFixed(2)} %${st.uptimeSince ? html` since <${Time} iso=${st.uptimeSince} zone=${zone} />` : ""}` : none}</dd>
        <dt>Last restart</dt><dd>${st.lastRestartTime ? html`<${Time} iso=${st.lastRestartTime} zone=${zone} />` : none}</dd>
        <dt>Deployed</dt><dd>${st.deployedTime ? html`<${Time} iso=${st.deployedTime} zone=${zone} />` : none}</dd>
      </dl></section>
    <div id="platform-live" data-sse=${liveHref} data-sse-event="usage"><${UsageAndPerformance} platform=${platform} live=${live} /></div>`;
}

/**
 * Resources and usage, Performance: allocation (status), CPU and memory (metrics API), and the
 * platform's own figures (its pods' /metrics through the API server). Sent again on every refresh.
 */
export function UsageAndPerformance({ platform, live }: { platform: ScalePlatform; live: LiveUsage }): VNode {
  const r = platform.status?.resources ?? {};
  const { usage, perf } = live;
  const rates = perf?.intervalSeconds !== undefined;
  const has = perf && perf.pods > 0;
  const missing = perfMissing(perf);
  return html`<section class="panel" aria-labelledby="h-usage"><h2 id="h-usage">Resources and usage</h2>
      <dl class="facts" id="platform-usage">
        <dt>Allocated</dt><dd>${r.cpu ? `${r.cpu} vCPU, ${r.memory} memory, ${r.storage} storage` : none}${r.storageActual ? html` <span class="muted">(volume bound: ${r.storageActual})</span>` : ""}</dd>
        <dt>App replicas</dt><dd>${r.appReplicas !== undefined ? `${r.appReplicas} running (autoscaling ${r.minReplicas}–${r.maxReplicas})` : none}</dd>
        <dt>Scaling triggers</dt><dd>${platform.status?.activeScalingTriggers?.length ? platform.status.activeScalingTriggers.join(", ") : none}</dd>
        <dt>CPU in use</dt><dd>${usage ? `${(usage.cpuMillis / 1000).toFixed(2)} vCPU over ${usage.pods} pods${share(usage.cpuMillis / 1000, r.cpu, "vCPU")}` : usageMissing(usage)}</dd>
        <dt>Memory in use</dt><dd>${usage ? `${Math.round(usage.memoryMiB)} MiB over ${usage.pods} pods${share(usage.memoryMiB * 1024 ** 2, r.memory)}` : usageMissing(usage)}</dd>
        <dt>Storage in use</dt><dd data-figure="storage">${perf?.databaseBytes !== undefined ? storage(perf.databaseBytes, r.storage) : missing}</dd>
        <dt>Network (app pods)</dt><dd data-figure="network">${has && perf.receiveBytes !== undefined ? (rates ? `${bytes(perf.receiveBytes)}/s in, ${bytes(perf.transmitBytes ?? 0)}/s out` : `${bytes(perf.receiveBytes)} in, ${bytes(perf.transmitBytes ?? 0)} out since the pods started`) : missing}</dd>
        <dt>Request rate</dt><dd data-figure="request-rate">${has ? requests(perf) : missing}</dd>
      </dl></section>
    <section class="panel" aria-labelledby="h-performance"><h2 id="h-performance">Performance</h2>
      <p class="muted" id="performance-basis">${basis(live)}</p>
      <dl class="facts" id="platform-performance">
        <dt>Average response time</dt><dd data-figure="response-time">${has ? (perf.averageResponseMs !== undefined ? `${perf.averageResponseMs.toFixed(1)} ms` : quiet) : missing}</dd>
        <dt>Requests per second</dt><dd data-figure="requests-per-second">${has ? requests(perf) : missing}</dd>
        <dt>Error rate</dt><dd data-figure="error-rate">${has ? (perf.errorRate !== undefined ? `${percent(perf.errorRate)} answered 5xx` : quiet) : missing}</dd>
        <dt>Cache hit rate</dt><dd data-figure="cache-hit-rate">${has ? (perf.cacheHitRate !== undefined ? `${percent(perf.cacheHitRate)} of API product reads` : html`<span class="muted">no API product reads</span>`) : missing}</dd>
      </dl></section>`;
}

/** What the live part shows: metrics API usage and the platform's own figures. */
export interface LiveUsage {
  /** From the metrics API; undefined when not served, null when the viewer may not read it. */
  usage?: PodUsage | null;
  /** From the app pods' /metrics; undefined when no ready pod answered, null when RBAC refuses. */
  perf?: PlatformPerformance | null;
  /** How often the live part refreshes. */
  refreshSeconds: number;
}

const quiet = html`<span class="muted">no requests</span>`;

function basis({ perf, refreshSeconds }: LiveUsage): string {
  const every = `refreshed every ${refreshSeconds} s`;
  if (!perf?.pods) return `CPU and memory from the metrics API; ${every}.`;
  const pods = `${perf.pods} app pod${perf.pods === 1 ? "" : "s"}`;
  if (perf.intervalSeconds !== undefined)
    return `Rates over the last ${Math.round(perf.intervalSeconds)} s (${pods}), probes and metric reads left out; ${every}.`;
  return `Totals since the app pods started (${pods}); rates follow at the next refresh, in ${refreshSeconds} s.`;
}

function requests(perf: PlatformPerformance): string {
  return perf.intervalSeconds !== undefined
    ? `${perf.requests.toFixed(2)} requests/s`
    : `${perf.requests} requests since the pods started`;
}

const percent = (x: number) => `${(x * 100).toFixed(x > 0 && x < 0.1 ? 2 : 1)} %`;

function bytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? Math.round(n) : n.toFixed(1)} ${units[i]}`;
}

/** " (n % of <allocated>)" when the allocation is known: utilization of the plan's resources. */
function share(used: number, allocated: string | undefined, unit = ""): string {
  const of = allocated ? quantity(allocated) : Number.NaN;
  return Number.isFinite(of) && of > 0
    ? ` (${percent(used / of)} of ${allocated}${unit ? ` ${unit}` : ""})`
    : "";
}

function storage(db: number, allocated: string | undefined): string {
  const of = allocated ? quantity(allocated) : Number.NaN;
  return Number.isFinite(of) && of > 0
    ? `database ${bytes(db)} of ${allocated} (${percent(db / of)})`
    : `database ${bytes(db)}`;
}

function perfMissing(perf: PlatformPerformance | null | undefined): VNode {
  return perf === null
    ? html`<span class="muted">you may not read the platform's metrics</span>`
    : html`<span class="muted">not reported: no ready app pod answered</span>`;
}

function usageMissing(usage: PodUsage | null | undefined): VNode {
  return usage === null
    ? html`<span class="muted">you may not read the metrics API here</span>`
    : html`<span class="muted">the cluster serves no metrics API</span>`;
}
