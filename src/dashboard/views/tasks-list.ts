import type { ScheduledTask } from "../../api/v1alpha1/scheduledtask.ts";
import { CARDS_LIMIT, cronReading, formatTime } from "../task-model.ts";
import { html, type VNode } from "./html.ts";
import { TASKS_PATH } from "./layout.ts";

/** Link to a task's page. */
export const taskHref = (ns: string, name: string) =>
  `${TASKS_PATH}/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;

/** Status badge of a task or run. */
export function Badge({ value }: { value: string | undefined }): VNode {
  const v = value ?? "Unknown";
  return html`<span class="badge ${v}">${v}</span>`;
}

/** A time in the task's zone, which the script annotates with the viewer's local time. */
export function Time({ iso, zone }: { iso: string | undefined; zone: string }): VNode {
  if (!iso) return html`<span class="muted">—</span>`;
  return html`<time datetime=${iso} data-local="">${formatTime(iso, zone)}</time>`;
}

function Card({ task }: { task: ScheduledTask }): VNode {
  const { name = "", namespace = "" } = task.metadata;
  const s = task.spec;
  return html`<li class="card" data-task=${name}>
    <header>
      <h2><a href=${taskHref(namespace, name)}>${name}</a></h2>
      <${Badge} value=${task.status?.phase ?? "Pending"} />
    </header>
    <dl class="facts">
      <dt>Schedule</dt><dd><code>${s.schedule}</code> <span class="muted">${cronReading(s.schedule)} (${s.timezone})</span></dd>
      <dt>Language</dt><dd>${s.language}</dd>
      <dt>Last run</dt><dd><${Time} iso=${task.status?.lastRunTime} zone=${s.timezone} /></dd>
      <dt>Next run</dt><dd>${s.suspend ? html`<span class="muted">suspended</span>` : html`<${Time} iso=${task.status?.nextRunTime} zone=${s.timezone} />`}</dd>
    </dl>
  </li>`;
}

/** The result area the search replaces: a count for screen readers and the cards (at most CARDS_LIMIT). */
export function TaskResults(props: { tasks: ScheduledTask[]; total: number; q: string }): VNode {
  const { total, q } = props;
  const tasks = props.tasks.slice(0, CARDS_LIMIT);
  const matched = props.tasks.length;
  const count =
    (q === "" ? `${total} task${total === 1 ? "" : "s"}` : `${matched} of ${total} tasks match “${q}”`) +
    (matched > tasks.length ? `; showing the first ${tasks.length} by name, type more to narrow` : "");
  return html`<p class="muted" role="status" aria-live="polite" id="task-count">${count}</p>
    ${
      tasks.length === 0
        ? html`<p>${total === 0 ? "No tasks in this namespace yet." : "No task name contains that text."}</p>`
        : html`<ul class="cards" aria-label="Tasks">${tasks.map((t) => html`<${Card} task=${t} key=${t.metadata.name} />`)}</ul>`
    }`;
}

/** The tasks page: namespace, search, New Task, the cards. */
export function TasksPage(props: {
  namespace: string;
  namespaces: string[];
  q: string;
  tasks: ScheduledTask[];
  total: number;
  canCreate: boolean;
  flash?: string;
}): VNode {
  const { namespace, namespaces, q, canCreate, flash } = props;
  return html`<h1>Tasks</h1>
    ${flash && html`<p class="panel notice" role="status">${flash}</p>`}
    <form class="bar" method="get" action=${TASKS_PATH} role="search">
      <div>
        <label for="namespace">Namespace</label>
        <select id="namespace" name="namespace">
          ${namespaces.map((n) => html`<option value=${n} selected=${n === namespace}>${n}</option>`)}
        </select>
      </div>
      <div class="grow">
        <label for="q">Search by name</label>
        <input id="q" name="q" type="search" value=${q} autocomplete="off"
          data-partial=${`${TASKS_PATH}/results`} data-target="task-results" data-push="" data-watch="#namespace" />
      </div>
      <button type="submit" class="secondary">Search</button>
      ${canCreate && html`<a class="button" href=${`${TASKS_PATH}/new?namespace=${encodeURIComponent(namespace)}`}>New Task</a>`}
    </form>
    <div id="task-results"><${TaskResults} tasks=${props.tasks} total=${props.total} q=${q} /></div>`;
}
