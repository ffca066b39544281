import type { ScalePlatform } from "../../api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformRestore } from "../../api/v1alpha1/scaleplatformrestore.ts";
import {
  type RestoreErrors,
  type RestoreForm,
  restoreActive,
  wallToInstant,
  zoneOf,
} from "../restore-model.ts";
import type { Session } from "../sessions.ts";
import { formatTime } from "../task-model.ts";
import { html, type VNode } from "./html.ts";
import { Csrf } from "./layout.ts";
import { Badge, Time } from "./tasks-list.ts";

// The Recovery section of a platform's backups page (spec §4.3 "recovery to a selected backup
// point"): the recovery points the operator reports (recent backups, the recoverable window), the
// form (latest, a backup, or a point in time in the platform's timezone) and the restores with
// their progress and measured downtime, updated live.

export const EMPTY_RESTORE_FORM: RestoreForm = { target: "latest", at: "" };

/** Where a restore's old-volume release is confirmed. */
export const releaseHref = (backups: string, restore: string) =>
  `${backups}/restores/${encodeURIComponent(restore)}/release`;

/**
 * The volume a Succeeded restore keeps (the database as it was before), until released or its TTL
 * passes; "Release old volume…" goes to a confirmation page.
 */
function OldVolume(p: { r: ScalePlatformRestore; zone: string; canRelease: boolean; backups: string }) {
  const st = p.r.status;
  if (!st?.oldVolumeClaimName) return "—";
  if (st.oldVolumeReleased)
    return html`<span data-old-volume="released">${st.oldVolumeClaimName} released</span>`;
  if (p.r.spec.releaseOldVolume)
    return html`<span data-old-volume="requested">${st.oldVolumeClaimName}: release requested</span>`;
  return html`<span data-old-volume="kept"><code>${st.oldVolumeClaimName}</code> kept until <${Time} iso=${st.oldVolumeReleaseTime} zone=${p.zone} /></span>
    ${
      p.canRelease &&
      p.r.status?.phase === "Succeeded" &&
      html` <a class="button secondary" href=${releaseHref(p.backups, p.r.metadata.name ?? "")}>Release old volume…</a>`
    }`;
}

/** The restores of the platform (also the body of each live update). */
export function RestoreList(p: {
  restores: ScalePlatformRestore[] | undefined;
  zone: string;
  /** The viewer may patch restores (release an old volume). */
  canRelease: boolean;
  /** The platform's backups page. */
  backups: string;
}): VNode {
  if (!p.restores) return html`<p class="muted">You may not list restores here.</p>`;
  if (p.restores.length === 0) return html`<p class="muted">No restores.</p>`;
  return html`<div class="table-wrap"><table class="stack">
    <thead><tr><th scope="col">Name</th><th scope="col">Target</th><th scope="col">Phase</th><th scope="col">Started</th><th scope="col">Finished</th><th scope="col">Downtime</th><th scope="col">Old volume</th></tr></thead>
    <tbody>${p.restores.map((r) => {
      const name = r.metadata.name ?? "";
      const phase = r.status?.phase ?? "Pending";
      const target =
        r.status?.target ??
        (r.spec.backupLabel
          ? `backup ${r.spec.backupLabel}`
          : r.spec.targetTime
            ? `time ${r.spec.targetTime}`
            : "latest");
      const downtime = r.status?.downtimeSeconds;
      return html`<tr data-restore=${name} data-phase=${phase} data-active=${restoreActive(r) ? "true" : "false"}>
        <th scope="row">${name}</th>
        <td data-label="Target">${target}</td>
        <td data-label="Phase"><${Badge} value=${phase} />${r.status?.message ? html` <span class="muted">${r.status.message}</span>` : ""}</td>
        <td data-label="Started"><${Time} iso=${r.status?.startTime ?? r.metadata.creationTimestamp} zone=${p.zone} /></td>
        <td data-label="Finished"><${Time} iso=${r.status?.completionTime} zone=${p.zone} /></td>
        <td data-label="Downtime" data-downtime=${downtime ?? ""}>${downtime === undefined ? "—" : `${downtime.toFixed(1)} s`}</td>
        <td data-label="Old volume"><${OldVolume} r=${r} zone=${p.zone} canRelease=${p.canRelease} backups=${p.backups} /></td></tr>`;
    })}</tbody></table></div>`;
}

/** The wall time typed, read in the platform's zone: the instant, with the viewer's local time added by the script. */
export function AtPreview({ iso, zone, error }: { iso?: string; zone: string; error?: string }): VNode {
  if (error) return html`<span class="muted">${error}</span>`;
  if (!iso) return html`<span class="muted">Times are in ${zone}.</span>`;
  return html`Restores to <time datetime=${iso} data-local="">${formatTime(iso, zone)}</time>`;
}

function FieldErrors({ id, errors }: { id: string; errors: string[] }): VNode | string {
  return errors.length > 0 ? html`<p class="field-error" id=${id}>${errors.join(" · ")}</p>` : "";
}

/** The Recovery section: the recovery points, the form (when the viewer may create restores), the restores. */
export function Recovery(p: {
  platform: ScalePlatform;
  restores: ScalePlatformRestore[] | undefined;
  session: Session;
  canRestore: boolean;
  canRelease: boolean;
  backups: string;
  form: RestoreForm;
  errors: RestoreErrors;
  general: string[];
  action: string;
  atHref: string;
  eventsHref: string;
}): VNode {
  const x = p.platform;
  const zone = zoneOf(x);
  const st = x.status?.backup;
  const backups = st?.recentBackups ?? [];
  const { errors, form } = p;
  const pick = (v: string) => form.target === v;
  const atDescribed = ["restore-at-hint", errors.at.length ? "restore-at-error" : ""]
    .filter(Boolean)
    .join(" ");
  return html`<section class="panel" id="restore" aria-labelledby="h-restore"><h2 id="h-restore">Recovery</h2>
    <dl class="facts">
      <dt>Recoverable from</dt><dd id="recoverable-from"><${Time} iso=${st?.recoverableFrom} zone=${zone} /></dd>
      <dt>Recoverable until</dt><dd>now <span class="muted">(write-ahead log archived continuously; last archived <${Time} iso=${st?.lastArchivedTime} zone=${zone} />)</span></dd>
      <dt>Time zone</dt><dd>${zone}</dd>
    </dl>
    ${
      p.general.length > 0 &&
      html`<div class="panel error" role="alert"><p>The API server refused the restore:</p><ul>${p.general.map((g) => html`<li>${g}</li>`)}</ul></div>`
    }
    ${
      p.canRestore && x.spec.backup
        ? html`<form method="post" action=${p.action} id="restore-form">
        <${Csrf} session=${p.session} />
        <fieldset aria-describedby=${errors.target.length ? "restore-target-error" : undefined}><legend>Restore the database to</legend>
          <label class="plan-choice"><input type="radio" name="target" value="latest" checked=${pick("latest")} /> The latest state (every archived transaction)</label>
          ${backups.map(
            (b) =>
              html`<label class="plan-choice" data-recovery-point=${b.label}><input type="radio" name="target" value=${`backup:${b.label}`} checked=${pick(`backup:${b.label}`)} /> <span>Backup <code>${b.label}</code> (${b.type}), finished <${Time} iso=${b.stopTime} zone=${zone} /></span></label>`,
          )}
          <label class="plan-choice"><input type="radio" name="target" value="time" checked=${pick("time")} /> A point in time</label>
          <${FieldErrors} id="restore-target-error" errors=${errors.target} />
          <label for="restore-at">Point in time (${zone})</label>
          <input id="restore-at" name="at" type="datetime-local" step="1" value=${form.at}
            aria-describedby=${atDescribed} aria-invalid=${errors.at.length ? "true" : undefined}
            data-partial=${p.atHref} data-target="restore-at-hint" data-fields="at" />
          <p class="muted" id="restore-at-hint" aria-live="polite"><${AtPreview} zone=${zone} iso=${form.at ? wallToInstant(form.at, zone)?.toISOString() : undefined} /></p>
          <${FieldErrors} id="restore-at-error" errors=${errors.at} />
        </fieldset>
        <p class="muted">The database is restored into a new volume while the shop keeps serving; then it switches over (the downtime is measured and shown below). The volume used before is kept for 72 hours.</p>
        <button type="submit" class="danger">Restore</button></form>`
        : ""
    }
    <h3>Restores</h3>
    <div id="restores" aria-live="polite" data-sse=${p.eventsHref} data-sse-event="restores">
      <${RestoreList} restores=${p.restores} zone=${zone} canRelease=${p.canRelease} backups=${p.backups} /></div>
  </section>`;
}

/** Confirmation before an old volume is released (works without script). */
export function ReleasePage(p: {
  restore: ScalePlatformRestore;
  session: Session;
  zone: string;
  backups: string;
}): VNode {
  const name = p.restore.metadata.name ?? "";
  const st = p.restore.status;
  return html`<section class="panel error">
    <h1>Release the old volume of ${name}?</h1>
    <p>The volume <code>${st?.oldVolumeClaimName}</code> holds the database as it was before restore ${name}
      ${" "}(target ${st?.target ?? "latest"}). Releasing it deletes it: the platform can no longer go back to that state
      except through the backups. Otherwise it is kept until <${Time} iso=${st?.oldVolumeReleaseTime} zone=${p.zone} />.</p>
    <div class="actions">
      <form method="post" action=${releaseHref(p.backups, name)}><${Csrf} session=${p.session} />
        <button type="submit" class="danger">Release old volume</button></form>
      <a class="button secondary" href=${`${p.backups}#restore`}>Cancel</a>
    </div>
  </section>`;
}
