import { planResources } from "../../api/task-plans.ts";
import { EXECUTION_RESULTS, type ScheduledTask } from "../../api/v1alpha1/scheduledtask.ts";
import type { TaskExecution, TaskExecutionSpec } from "../../api/v1alpha1/taskexecution.ts";
import type { UsageRow } from "../../archive/store.ts";
import type { HistoryPage } from "../archive.ts";
import type { Session } from "../sessions.ts";
import { cronReading, previewRuns } from "../task-model.ts";
import { html, type VNode } from "./html.ts";
import { Csrf } from "./layout.ts";
import { Badge, Time, taskHref } from "./tasks-list.ts";

/** What the viewer may do on this task (hidden otherwise; the API server decides anyway). */
export interface TaskPermissions {
  update: boolean;
  delete: boolean;
  /** May rename (create and delete tasks, create execution records, list pods). */
  rename: boolean;
  readSecrets: boolean;
  /** May follow a running pod's output (pods, pods/log and Secrets: the raw log is unmasked). */
  followLogs: boolean;
}

function ActionButton(p: { session: Session; href: string; label: string; cls?: string }): VNode {
  return html`<form method="post" action=${p.href}><${Csrf} session=${p.session} /><button type="submit" class=${p.cls ?? "secondary"}>${p.label}</button></form>`;
}

function EnvTable(p: {
  task: ScheduledTask;
  session: Session;
  canReveal: boolean;
  revealed?: { name: string; value: string };
}): VNode {
  const env = p.task.spec.env ?? [];
  if (env.length === 0) return html`<p class="muted">No environment variables.</p>`;
  const href = taskHref(p.task.metadata.namespace ?? "", p.task.metadata.name ?? "");
  return html`<div class="table-wrap"><table class="stack">
    <thead><tr><th scope="col">Name</th><th scope="col">Value</th><th scope="col">Source</th></tr></thead>
    <tbody>${env.map((e) => {
      const shown = p.revealed?.name === e.name;
      const source = e.valueFrom
        ? `Secret ${e.valueFrom.secretKeyRef.name}, key ${e.valueFrom.secretKeyRef.key}`
        : "inline";
      return html`<tr>
        <th scope="row"><code>${e.name}</code></th>
        <td class="secret" data-label="Value">${
          shown
            ? html`<output aria-label=${`Value of ${e.name}`}>${p.revealed?.value}</output>`
            : html`<span aria-label="hidden value">••••••••</span> ${
                p.canReveal &&
                html`<form method="post" action=${`${href}/env/${encodeURIComponent(e.name)}/reveal`} class="inline">
                  <${Csrf} session=${p.session} /><button type="submit" class="link" aria-label=${`Reveal ${e.name}`}>Reveal</button></form>`
              }`
        }</td>
        <td class="muted" data-label="Source">${source}</td>
      </tr>`;
    })}</tbody></table></div>`;
}

/** The archive's part of a task's page: a page of its history and the month's usage, or why not. */
export type ArchiveView = { query: { result?: string; cursor?: string } } & (
  | { page: HistoryPage; usage: UsageRow[]; month: string; problem?: undefined }
  | { problem: string; page?: undefined }
);

/** A run's page of output. */
export const runOutputHref = (ns: string, task: string, run: string) =>
  `${taskHref(ns, task)}/runs/${encodeURIComponent(run)}/output`;

/** The history from the archive: the result filter, a page of runs, links to older pages. */
function ArchiveHistory(p: { task: ScheduledTask; view: ArchiveView & { page: HistoryPage } }): VNode {
  const { task, view } = p;
  const ns = task.metadata.namespace ?? "";
  const name = task.metadata.name ?? "";
  const href = taskHref(ns, name);
  const zone = task.spec.timezone;
  const result = view.query.result ?? "";
  const withResult = (extra: string) =>
    `${href}?${result ? `result=${encodeURIComponent(result)}&` : ""}${extra}#history`;
  return html`<form method="get" action=${`${href}#history`} class="bar" aria-label="Filter runs">
      <label for="history-result">Result</label>
      <select id="history-result" name="result">
        <option value="" selected=${!result}>All</option>
        ${EXECUTION_RESULTS.map((r) => html`<option value=${r} selected=${r === result}>${r}</option>`)}
      </select>
      <button type="submit" class="secondary">Show</button>
    </form>
    ${
      view.page.items.length === 0
        ? html`<p class="muted">${result ? `No ${result} runs in the last 7 days.` : "No runs in the last 7 days."}</p>`
        : html`<div class="table-wrap"><table class="stack">
      <thead><tr><th scope="col">Finished</th><th scope="col">Result</th><th scope="col">Trigger</th><th scope="col">Duration</th><th scope="col">Billed</th><th scope="col">Output</th></tr></thead>
      <tbody>${view.page.items.map(
        (x) => html`<tr>
          <td data-label="Finished"><${Time} iso=${x.spec.completionTime} zone=${zone} /></td>
          <td data-label="Result"><${Badge} value=${x.spec.result} /> <span class="muted">${x.spec.message}</span></td>
          <td data-label="Trigger">${x.spec.trigger}</td>
          <td data-label="Duration">${x.spec.durationSeconds} s</td>
          <td data-label="Billed">${x.spec.billedSeconds ?? 0} s</td>
          <td data-label="Output"><a href=${runOutputHref(ns, name, x.name)} aria-label=${`Output of the run finished ${x.spec.completionTime}`}>Output</a></td>
        </tr>`,
      )}</tbody></table></div>`
    }
    <nav class="actions" aria-label="History pages">
      ${view.query.cursor && html`<a class="button secondary" href=${withResult("")}>Newest runs</a>`}
      ${view.page.next && html`<a class="button secondary" href=${withResult(`cursor=${encodeURIComponent(view.page.next)}`)} rel="next">Older runs</a>`}
    </nav>`;
}

/** The month's billed time and cost of the task (the archive's usage). */
function Billed({ view }: { view?: ArchiveView }): VNode {
  if (!view?.page) return html`<span class="muted">—</span>`;
  if (view.usage.length === 0) return html`0 s <span class="muted">(no runs in ${view.month})</span>`;
  return html`${view.usage.map(
    (u) =>
      html`<span>${u.billedSeconds.toLocaleString("en")} s <span class="muted">(${u.runs.toLocaleString("en")} runs, ${u.cost} ${u.currency})</span></span> `,
  )}`;
}

function History({ executions, zone }: { executions: TaskExecution[]; zone: string }): VNode {
  if (executions.length === 0) return html`<p class="muted">No finished runs yet.</p>`;
  return html`<div class="table-wrap"><table class="stack">
    <thead><tr><th scope="col">Started</th><th scope="col">Result</th><th scope="col">Trigger</th><th scope="col">Duration</th><th scope="col">Output</th></tr></thead>
    <tbody>${executions.map(
      (x) => html`<tr>
        <td data-label="Started"><${Time} iso=${x.spec.startTime ?? x.spec.scheduledTime ?? x.spec.completionTime} zone=${zone} /></td>
        <td data-label="Result"><${Badge} value=${x.spec.result} /> <span class="muted">${x.spec.message}</span></td>
        <td data-label="Trigger">${x.spec.trigger}</td>
        <td data-label="Duration">${x.spec.durationSeconds} s</td>
        <td><details><summary>Output${x.spec.outputTruncated ? " (start cut)" : ""}</summary><pre>${x.spec.output || "(no output)"}</pre></details></td>
      </tr>`,
    )}</tbody></table></div>`;
}

/** A task's page. */
export function TaskPage(p: {
  task: ScheduledTask;
  executions: TaskExecution[];
  /** The archive's history and usage; undefined when the dashboard has no archive. */
  archive?: ArchiveView;
  session: Session;
  can: TaskPermissions;
  now: Date;
  revealed?: { name: string; value: string };
  flash?: string;
  /** Pods of runs in progress, when the viewer may follow their output. */
  running?: string[];
}): VNode {
  const { task, session, can } = p;
  const s = task.spec;
  const ns = task.metadata.namespace ?? "";
  const name = task.metadata.name ?? "";
  const href = taskHref(ns, name);
  const plan = planResources(s.plan);
  const preview = s.suspend ? undefined : previewRuns(s.schedule, s.timezone, p.now, 5);
  const ready = task.status?.conditions?.find((c) => c.type === "Ready");
  return html`<p><a href=${`/dashboard/compute/serverless/tasks?namespace=${encodeURIComponent(ns)}`}>← Tasks</a></p>
    <h1>${name} <${Badge} value=${task.status?.phase ?? "Pending"} /></h1>
    ${p.flash && html`<p class="panel notice" role="status">${p.flash}</p>`}
    <div class="actions">
      ${can.update && html`<${ActionButton} session=${session} href=${`${href}/run`} label="Run now" cls="primary" />`}
      ${can.update && (s.suspend ? html`<${ActionButton} session=${session} href=${`${href}/resume`} label="Resume" />` : html`<${ActionButton} session=${session} href=${`${href}/suspend`} label="Suspend" />`)}
      ${can.update && html`<a class="button secondary" href=${`${href}/edit`}>Edit</a>`}
      ${can.rename && html`<a class="button secondary" href=${`${href}/rename`}>Rename…</a>`}
      ${can.delete && html`<a class="button secondary" href=${`${href}/delete`}>Delete…</a>`}
    </div>
    <div class="grid">
      <section class="panel" aria-labelledby="h-status"><h2 id="h-status">Status</h2>
        <dl class="facts">
          <dt>Status</dt><dd><${Badge} value=${task.status?.phase ?? "Pending"} /> <span class="muted">${ready?.message ?? ""}</span></dd>
          <dt>Last run</dt><dd><${Time} iso=${task.status?.lastRunTime} zone=${s.timezone} /></dd>
          <dt>Last result</dt><dd>${task.status?.lastResult ?? "—"}</dd>
          <dt>Next run</dt><dd>${s.suspend ? "suspended" : html`<${Time} iso=${task.status?.nextRunTime} zone=${s.timezone} />`}</dd>
          <dt>Created</dt><dd><${Time} iso=${task.metadata.creationTimestamp} zone=${s.timezone} /></dd>
          ${p.archive && html`<dt>Billed this month</dt><dd><${Billed} view=${p.archive} /></dd>`}
        </dl></section>
      <section class="panel" aria-labelledby="h-schedule"><h2 id="h-schedule">Schedule</h2>
        <p><code>${s.schedule}</code> in ${s.timezone}<br /><span class="muted">${cronReading(s.schedule)}</span></p>
        ${preview && "runs" in preview && html`<p>Next five runs (${s.timezone}):</p><ol>${preview.runs.map((r) => html`<li>${r}</li>`)}</ol>`}
      </section>
      <section class="panel" aria-labelledby="h-config"><h2 id="h-config">Configuration</h2>
        <dl class="facts">
          <dt>Language</dt><dd>${s.language}</dd>
          <dt>Timeout</dt><dd>${s.timeoutSeconds} s</dd>
          <dt>Overlapping runs</dt><dd>${s.concurrencyPolicy}</dd>
          <dt>Retries</dt><dd>${s.retries}</dd>
          <dt>Start deadline</dt><dd>${s.startingDeadlineSeconds === undefined ? "none" : `${s.startingDeadlineSeconds} s`}</dd>
          <dt>Jobs kept</dt><dd>${s.successfulJobsHistoryLimit} succeeded, ${s.failedJobsHistoryLimit} failed</dd>
        </dl></section>
      <section class="panel" aria-labelledby="h-res"><h2 id="h-res">Resources</h2>
        <dl class="facts"><dt>Plan</dt><dd>${s.plan}</dd><dt>vCPU</dt><dd>${plan.vcpu}</dd><dt>RAM</dt><dd>${plan.memoryDisplay}</dd></dl>
      </section>
    </div>
    <section class="panel" aria-labelledby="h-script"><h2 id="h-script">Script</h2><pre aria-label="Script (read-only)">${s.script}</pre></section>
    <section class="panel" aria-labelledby="h-env"><h2 id="h-env">Environment variables</h2>
      <${EnvTable} task=${task} session=${session} canReveal=${can.readSecrets} revealed=${p.revealed} /></section>
    ${
      (p.running ?? []).length > 0 &&
      html`<section class="panel" aria-labelledby="h-running"><h2 id="h-running">Running now</h2>
        ${(p.running ?? []).map(
          (pod) => html`<p class="muted">Pod ${pod}, output as it is written:</p>
            <pre class="live-log" data-sse-log=${`${href}/runs/${encodeURIComponent(pod)}/log`} role="log" aria-label=${`Live output of ${pod}`}></pre>`,
        )}</section>`
    }
    <section class="panel" id="history" aria-labelledby="h-history"><h2 id="h-history">Execution history</h2>
      ${p.archive?.problem && html`<p class="panel notice" role="status">${p.archive.problem}</p>`}
      ${
        p.archive?.page
          ? html`<p class="muted">Every run of the last 7 days, newest first, from the execution archive.</p>
            <${ArchiveHistory} task=${task} view=${p.archive} />`
          : html`<${History} executions=${p.executions} zone=${s.timezone} />`
      }</section>`;
}

/** One run's whole output (from the archive, or its TaskExecution while it is still kept). */
export function RunOutputPage(p: { task: ScheduledTask; run: string; spec: TaskExecutionSpec }): VNode {
  const { task, run, spec } = p;
  const ns = task.metadata.namespace ?? "";
  const name = task.metadata.name ?? "";
  const zone = task.spec.timezone;
  return html`<p><a href=${`${taskHref(ns, name)}#history`}>← ${name}</a></p>
    <h1>Run of ${name} <${Badge} value=${spec.result} /></h1>
    <section class="panel" aria-labelledby="h-run"><h2 id="h-run">Run</h2>
      <dl class="facts">
        <dt>Run</dt><dd><code>${run}</code></dd>
        <dt>Started</dt><dd><${Time} iso=${spec.startTime ?? spec.scheduledTime} zone=${zone} /></dd>
        <dt>Finished</dt><dd><${Time} iso=${spec.completionTime} zone=${zone} /></dd>
        <dt>Result</dt><dd>${spec.result} <span class="muted">${spec.message}</span></dd>
        <dt>Exit code</dt><dd>${spec.exitCode ?? "—"}</dd>
        <dt>Trigger</dt><dd>${spec.trigger}</dd>
        <dt>Duration</dt><dd>${spec.durationSeconds} s</dd>
        <dt>Billed</dt><dd>${spec.billedSeconds ?? 0} s${spec.cost ? ` (${spec.cost} ${spec.currency ?? ""})` : ""}</dd>
      </dl></section>
    <section class="panel" aria-labelledby="h-output"><h2 id="h-output">Output${spec.outputTruncated ? " (start cut)" : ""}</h2>
      <pre aria-label=${`Output of run ${run}`} tabindex="0">${spec.output || "(no output)"}</pre></section>`;
}

/** Confirmation before a delete (works without script). */
export function DeletePage({ task, session }: { task: ScheduledTask; session: Session }): VNode {
  const name = task.metadata.name ?? "";
  const href = taskHref(task.metadata.namespace ?? "", name);
  return html`<section class="panel error">
    <h1>Delete task ${name}?</h1>
    <p>The task, its schedule and its execution history are deleted. Runs in progress finish.</p>
    <div class="actions">
      <${ActionButton} session=${session} href=${`${href}/delete`} label=${`Delete ${name}`} cls="danger" />
      <a class="button secondary" href=${href}>Cancel</a>
    </div>
  </section>`;
}
