import { CONDITION_BACKUP_HEALTHY, CONDITION_BACKUP_OFFSITE } from "../../api/v1alpha1/conditions.ts";
import type { ScalePlatform } from "../../api/v1alpha1/scaleplatform.ts";
import type { BackupRef } from "../../api/v1alpha1/scaleplatform-backup.ts";
import type { ScalePlatformBackup } from "../../api/v1alpha1/scaleplatformbackup.ts";
import { zoneOf } from "../restore-model.ts";
import type { Session } from "../sessions.ts";
import { html, type VNode } from "./html.ts";
import { backupsHref, Csrf, platformHref } from "./layout.ts";
import { Badge, Time } from "./tasks-list.ts";

// The backups page of a platform (spec §4.3 Manual backup and Recovery): what the operator reports in
// status.backup and the BackupHealthy/BackupOffsite conditions, the on-demand backups
// (ScalePlatformBackup) with their progress, Back up now, and the Recovery section. Nothing here is computed by the
// dashboard: every figure is the operator's.

/** Bytes as MiB/GiB with one decimal. */
export function formatBytes(n: number | undefined): string {
  if (n === undefined) return "—";
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(1)} GiB`;
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024).toFixed(1)} KiB`;
}

/** The on-demand backups of one platform, newest first. */
export function backupsOf(all: readonly ScalePlatformBackup[], platform: string): ScalePlatformBackup[] {
  return all
    .filter((b) => b.spec.platformName === platform)
    .sort((a, b) => (b.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? ""));
}

function Condition({ platform, type }: { platform: ScalePlatform; type: string }): VNode {
  const c = platform.status?.conditions?.find((x) => x.type === type);
  if (!c) return html`<span class="muted">not reported yet</span>`;
  const value = c.status === "True" ? "Succeeded" : c.status === "False" ? "Failed" : "Unknown";
  const word = c.status === "True" ? "Yes" : c.status === "False" ? "No" : "Unknown";
  return html`<span class="badge ${value}">${word}</span> ${c.reason}${c.message ? html` <span class="muted">— ${c.message}</span>` : ""}`;
}

function RecentBackups({ backups, zone }: { backups: BackupRef[]; zone: string }): VNode {
  if (backups.length === 0) return html`<p class="muted">No backups in the repository yet.</p>`;
  return html`<div class="table-wrap"><table class="stack">
    <thead><tr><th scope="col">Backup</th><th scope="col">Type</th><th scope="col">Started</th><th scope="col">Finished</th><th scope="col">Database size</th><th scope="col">Added to repository</th></tr></thead>
    <tbody>${backups.map(
      (b) => html`<tr data-backup-label=${b.label}><th scope="row"><code>${b.label}</code></th>
        <td data-label="Type">${b.type}</td>
        <td data-label="Started"><${Time} iso=${b.startTime} zone=${zone} /></td>
        <td data-label="Finished"><${Time} iso=${b.stopTime} zone=${zone} /></td>
        <td data-label="Database size">${formatBytes(b.sizeBytes)}</td>
        <td data-label="Added to repository">${formatBytes(b.repoSizeBytes)}</td></tr>`,
    )}</tbody></table></div>`;
}

/** The on-demand backups (also the body of each live update). */
export function ManualBackups(p: {
  platform: ScalePlatform;
  backups: ScalePlatformBackup[] | undefined;
  session: Session;
  canCancel: boolean;
}): VNode {
  if (!p.backups) return html`<p class="muted">You may not list on-demand backups here.</p>`;
  if (p.backups.length === 0) return html`<p class="muted">No on-demand backups.</p>`;
  const zone = zoneOf(p.platform);
  const base = backupsHref(p.platform.metadata.namespace ?? "", p.platform.metadata.name ?? "");
  return html`<div class="table-wrap"><table class="stack">
    <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Phase</th><th scope="col">Started</th><th scope="col">Finished</th><th scope="col">Backup</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${p.backups.map((b) => {
      const name = b.metadata.name ?? "";
      const phase = b.status?.phase ?? "Pending";
      const active = phase === "Pending" || phase === "Running";
      return html`<tr data-manual-backup=${name} data-phase=${phase}><th scope="row">${name}</th>
        <td data-label="Type">${b.spec.type}</td>
        <td data-label="Phase"><${Badge} value=${phase} />${b.status?.message ? html` <span class="muted">${b.status.message}</span>` : ""}</td>
        <td data-label="Started"><${Time} iso=${b.status?.startTime} zone=${zone} /></td>
        <td data-label="Finished"><${Time} iso=${b.status?.completionTime} zone=${zone} /></td>
        <td data-label="Backup">${b.status?.backupLabel ? html`<code>${b.status.backupLabel}</code>` : "—"}</td>
        <td>${
          active &&
          p.canCancel &&
          html`<form method="post" action=${`${base}/${encodeURIComponent(name)}/cancel`}>
            <${Csrf} session=${p.session} /><button type="submit" class="danger" aria-label=${`Cancel ${name}`}>Cancel</button></form>`
        }</td></tr>`;
    })}</tbody></table></div>`;
}

/** The backups page of a platform. */
export function BackupsPage(p: {
  platform: ScalePlatform;
  backups: ScalePlatformBackup[] | undefined;
  session: Session;
  can: { create: boolean; cancel: boolean };
  flash?: string;
  problem?: string;
  eventsHref: string;
  /** The Recovery section (views/platform-restore.ts). */
  recovery: VNode;
}): VNode {
  const x = p.platform;
  const { namespace = "", name = "" } = x.metadata;
  const st = x.status?.backup;
  const spec = x.spec.backup;
  const zone = zoneOf(x);
  const last = st?.lastSuccessfulBackup;
  const failed = st?.lastFailedBackup;
  return html`<p><a href=${platformHref(namespace, name)}>← ${name}</a></p>
    <h1>Backups of ${name}</h1>
    ${p.flash && html`<p class="panel notice" role="status">${p.flash}</p>`}
    ${p.problem && html`<p class="panel error" role="alert">The API server refused the change: ${p.problem}</p>`}
    <section class="panel" aria-labelledby="h-backup-health"><h2 id="h-backup-health">Health</h2>
      ${!spec && html`<p>Backups are not configured for this platform (<code>spec.backup</code>).</p>`}
      <dl class="facts">
        <dt>Backups healthy</dt><dd id="backup-healthy"><${Condition} platform=${x} type=${CONDITION_BACKUP_HEALTHY} /></dd>
        <dt>Off-site copy</dt><dd><${Condition} platform=${x} type=${CONDITION_BACKUP_OFFSITE} /></dd>
        <dt>Repository</dt><dd>${st?.repository ?? "—"}</dd>
        <dt>Last success</dt><dd id="last-success">${last ? html`<code>${last.label}</code> (${last.type}), finished <${Time} iso=${last.stopTime} zone=${zone} />` : html`<span class="muted">none yet</span>`}</dd>
        <dt>Last failure</dt><dd id="last-failure">${failed ? html`<${Time} iso=${failed.time} zone=${zone} />: ${failed.message}` : html`<span class="muted">none since the last success</span>`}</dd>
        <dt>Recoverable window</dt><dd id="recovery-window">${st?.recoverableFrom ? html`<${Time} iso=${st.recoverableFrom} zone=${zone} /> to <${Time} iso=${st.recoverableUntil} zone=${zone} />` : html`<span class="muted">—</span>`}</dd>
        <dt>Last WAL archived</dt><dd><${Time} iso=${st?.lastArchivedTime} zone=${zone} /></dd>
        <dt>Next full backup</dt><dd><${Time} iso=${st?.nextFullBackup} zone=${zone} />${spec ? html` <span class="muted">(<code>${spec.schedules.full}</code>)</span>` : ""}</dd>
        <dt>Next incremental</dt><dd><${Time} iso=${st?.nextIncrementalBackup} zone=${zone} />${spec ? html` <span class="muted">(<code>${spec.schedules.incremental}</code>)</span>` : ""}</dd>
        ${spec && html`<dt>Retention</dt><dd>${spec.retentionDays} days</dd>`}
      </dl></section>
    <section class="panel" aria-labelledby="h-recent"><h2 id="h-recent">Recent backups</h2>
      <${RecentBackups} backups=${st?.recentBackups ?? []} zone=${zone} /></section>
    <section class="panel" aria-labelledby="h-manual"><h2 id="h-manual">On-demand backups</h2>
      ${
        p.can.create &&
        spec &&
        html`<form method="post" action=${backupsHref(namespace, name)} class="bar">
          <${Csrf} session=${p.session} />
          <fieldset><legend>Type</legend>
            <label class="plan-choice"><input type="radio" name="type" value="full" checked /> Full</label>
            <label class="plan-choice"><input type="radio" name="type" value="incr" /> Incremental (changes since the last backup)</label>
          </fieldset>
          <button type="submit">Back up now</button></form>`
      }
      <div id="manual-backups" aria-live="polite" data-sse=${p.eventsHref} data-sse-event="backups">
        <${ManualBackups} platform=${x} backups=${p.backups} session=${p.session} canCancel=${p.can.cancel} /></div>
    </section>
    ${p.recovery}`;
}
