import type { ScalePlatform } from "../../api/v1alpha1/scaleplatform.ts";
import {
  CONFIG_LISTS,
  type ConfigListDef,
  entriesOf,
  entryForm,
  entryGroup,
  otherOwners,
} from "../config-lists.ts";
import type { Session } from "../sessions.ts";
import { type ConfigState, configHref, dash, GroupForm } from "./config-form.ts";
import { html, type VNode } from "./html.ts";
import { Csrf } from "./layout.ts";

// The platform's payment gateways and shipping methods (lists keyed by name): a table each, and
// for viewers who may patch the platform an edit form per entry, an Add form and Remove…, which
// asks for confirmation first (routes-config-lists.ts). Gateway credentials appear only as the
// name of a Secret.

type Entry = Record<string, unknown> & { name: string };

/** Where an entry is added (`entry` undefined), saved or removed. */
export const entryHref = (p: ScalePlatform, list: ConfigListDef, entry?: string) =>
  `${configHref(p)}/${list.id}/entries${entry === undefined ? "" : `/${encodeURIComponent(entry)}`}`;

const yes = (v: unknown) => (v === false ? "no" : "yes");

/** The cells of one entry (label → text). */
function cells(list: ConfigListDef, e: Entry): [string, string][] {
  const rate = (e.rate ?? {}) as { calculation?: string; amount?: string; currency?: string };
  const secret = (e.credentialsSecretRef as { name?: string } | undefined)?.name;
  const settings = Object.entries((e.settings ?? {}) as Record<string, string>);
  return list.id === "payments"
    ? [
        ["Type", String(e.type ?? dash)],
        ["Provider", String(e.provider ?? dash)],
        ["Mode", String(e.mode ?? "Test")],
        ["Enabled", yes(e.enabled)],
        ["Credentials", secret ? `Secret ${secret}` : dash],
        ["Settings", settings.map(([k, v]) => `${k}=${v}`).join(", ") || dash],
      ]
    : [
        ["Carrier", String(e.carrier ?? dash)],
        ["Zones", ((e.zones ?? []) as string[]).join(", ") || dash],
        [
          "Rate",
          `${rate.calculation ?? dash}${rate.amount ? ` ${rate.amount} ${rate.currency ?? ""}` : ""}`.trim(),
        ],
        ["Fulfillment", String(e.fulfillment ?? "Ship")],
        ["Enabled", yes(e.enabled)],
      ];
}

function ListTable(p: { platform: ScalePlatform; list: ConfigListDef; canPatch: boolean }): VNode {
  const { list } = p;
  const entries = entriesOf(list, p.platform);
  if (entries.length === 0) return html`<p class="muted" id=${`config-${list.id}`}>None.</p>`;
  const heads = cells(list, entries[0] as Entry).map(([label]) => label);
  return html`<div class="table-wrap"><table class="stack" id=${`config-${list.id}`}>
    <thead><tr><th scope="col">Name</th>${heads.map((h) => html`<th scope="col">${h}</th>`)}${
      p.canPatch && html`<th scope="col"><span class="visually-hidden">Actions</span></th>`
    }</tr></thead>
    <tbody>${entries.map(
      (e) =>
        html`<tr data-entry=${e.name}><th scope="row">${e.name}</th>${cells(list, e).map(
          ([label, text]) => html`<td data-label=${label}>${text}</td>`,
        )}${
          p.canPatch &&
          html`<td data-label="Actions"><a class="button secondary" href=${`${entryHref(p.platform, list, e.name)}/remove`}
          aria-label=${`Remove ${list.one} ${e.name}…`}>Remove…</a></td>`
        }</tr>`,
    )}</tbody></table></div>`;
}

/** Payment gateways and shipping methods: tables, and edit/add forms when the viewer may patch. */
export function ConfigLists(p: {
  platform: ScalePlatform;
  session: Session;
  canPatch: boolean;
  /** A list entry's form as posted, with the API server's answer. */
  state?: ConfigState;
}): VNode {
  return html`${CONFIG_LISTS.map((list) => {
    const mine = (entry: string) =>
      p.state?.group === list.id && p.state.entry === entry ? p.state : undefined;
    const form = (entry: string | undefined, e?: Entry) => {
      const g = entryGroup(list, entry);
      return html`<${GroupForm} platform=${p.platform} group=${g} session=${p.session} state=${mine(entry ?? "")}
        entry=${{
          domId: `edit-${list.id}-${entry === undefined ? "add" : `e-${entry}`}`,
          form: entryForm(g, e),
          action: entryHref(p.platform, list, entry),
          summary: entry === undefined ? `Add ${list.one}` : `Edit ${list.one} ${entry}`,
          submit: entry === undefined ? `Add ${list.one}` : `Save ${list.one} ${entry}`,
          what: entry === undefined ? `new ${list.one}` : `${list.one} ${entry}`,
        }} />`;
    };
    return html`<h3>${list.title}</h3>
      <${ListTable} platform=${p.platform} list=${list} canPatch=${p.canPatch} />
      ${p.canPatch && entriesOf(list, p.platform).map((e) => form(e.name, e as Entry))}
      ${p.canPatch && form(undefined)}`;
  })}`;
}

/**
 * Confirmation before an entry is removed. Managers other than the dashboard that set the entry
 * (kubectl, a GitOps controller) are named: removing it here deletes it from the platform now, but
 * their next apply of their own source puts it back.
 */
export function RemoveEntryPage(p: {
  platform: ScalePlatform;
  list: ConfigListDef;
  entry: Entry;
  session: Session;
  back: string;
  problem?: string;
}): VNode {
  const { list, entry } = p;
  const others = otherOwners(list, p.platform, entry.name);
  return html`<section class="panel error">
    <h1>Remove ${list.one} ${entry.name}?</h1>
    ${p.problem && html`<div class="panel error" role="alert"><p>${p.problem}</p></div>`}
    <dl class="facts">${cells(list, entry).map(([label, text]) => html`<dt>${label}</dt><dd>${text}</dd>`)}</dl>
    ${
      others.length > 0
        ? html`<p data-owners=${others.join(", ")}>This ${list.one} was also set by ${others.map((o, i) => html`${i > 0 ? ", " : ""}<code>${o}</code>`)}.
          Removing it here deletes it from the platform now; if it comes from a manifest that manager applies
          (<code>kubectl apply</code>, a GitOps controller), its next apply puts it back: remove it there too.</p>`
        : html`<p>It was set only from this dashboard.</p>`
    }
    <p>The platform stops offering it once the operator has rolled out the new configuration.</p>
    <div class="actions">
      <form method="post" action=${`${entryHref(p.platform, list, entry.name)}/remove`}><${Csrf} session=${p.session} />
        <input type="hidden" name="seen" value=${JSON.stringify(entry)} />
        <button type="submit" class="danger">Remove ${list.one}</button></form>
      <a class="button secondary" href=${p.back}>Cancel</a>
    </div>
  </section>`;
}
