import { Pager } from "./catalog.ts";
import { html, type VNode } from "./html.ts";
import { Csrf, Layout, Message, type PageCtx } from "./layout.ts";

// API keys and OAuth clients (a secret shown once), the webhook delivery log, and settings.

export interface Credential {
  id: string;
  name: string;
  prefix?: string;
  scopes: string[];
  createdAt: string;
  lastUsedAt?: string | null;
  revokedAt: string | null;
}

const CredentialTable = ({
  ctx,
  kind,
  rows,
}: {
  ctx: PageCtx;
  kind: "api-keys" | "oauth-clients";
  rows: Credential[];
}) => {
  const { loc } = ctx;
  const tc = loc.t.credentials;
  const idLabel = kind === "api-keys" ? tc.key : tc.clientId;
  return rows.length
    ? html`<div class="table-wrap"><table class="stack">
      <thead><tr><th scope="col">${tc.name}</th><th scope="col">${idLabel}</th><th scope="col">${tc.scopes}</th><th scope="col">${tc.created}</th><th scope="col">${tc.state}</th></tr></thead>
      <tbody>${rows.map(
        (
          r,
        ) => html`<tr><td data-label=${tc.name}>${r.name}</td><td data-label=${idLabel}><code>${kind === "api-keys" ? `${r.prefix}…` : r.id}</code></td>
          <td data-label=${tc.scopes}>${r.scopes.join(", ")}</td><td data-label=${tc.created}>${loc.dateTime(r.createdAt)}</td>
          <td data-label=${tc.state}>${
            r.revokedAt
              ? html`<span class="badge revoked">${tc.revoked}</span>`
              : html`<form method="post" action=${`/admin/credentials/${kind}/${r.id}/revoke`}><${Csrf} ctx=${ctx} />
                  <button type="submit" class="danger" aria-label=${tc.revokeNamed(r.name)}>${tc.revoke}</button></form>`
          }</td></tr>`,
      )}</tbody></table></div>`
    : html`<p class="muted">${tc.none}</p>`;
};

const CreateForm = ({
  ctx,
  kind,
  scopes,
}: {
  ctx: PageCtx;
  kind: "api-keys" | "oauth-clients";
  scopes: readonly string[];
}) => {
  const tc = ctx.loc.t.credentials;
  return html`<form method="post" action=${`/admin/credentials/${kind}`}>
  <${Csrf} ctx=${ctx} />
  <div class="field"><label for=${`${kind}-name`}>${tc.name}</label><input id=${`${kind}-name`} name="name" required maxlength="200" /></div>
  <fieldset><legend>${tc.scopes}</legend><div class="checks">
    ${scopes.map((s) => html`<label><input type="checkbox" name="scopes" value=${s} /> ${s}</label>`)}
  </div></fieldset>
  <button type="submit">${kind === "api-keys" ? tc.createApiKey : tc.createOauthClient}</button>
</form>`;
};

export function CredentialsPage(p: {
  ctx: PageCtx;
  keys: Credential[];
  clients: Credential[];
  scopes: readonly string[];
  secret?: { label: string; value: string; id?: string };
  error?: string;
}): VNode {
  const tc = p.ctx.loc.t.credentials;
  return html`<${Layout} title=${tc.title} ctx=${p.ctx}>
    <h1>${tc.heading}</h1>
    <${Message} kind="error" text=${p.error} />
    ${
      p.secret &&
      html`<section class="panel ok" role="status"><h2>${p.secret.label}</h2>
        ${p.secret.id && html`<p>${tc.clientId}: <code>${p.secret.id}</code></p>`}
        <p class="secret" data-secret>${p.secret.value}</p>
        <p><strong>${tc.copyNow}</strong> ${tc.hashOnly}</p></section>`
    }
    <section class="panel"><h2>${tc.apiKeys}</h2><${CredentialTable} ctx=${p.ctx} kind="api-keys" rows=${p.keys} />
      <details><summary>${tc.newApiKey}</summary><${CreateForm} ctx=${p.ctx} kind="api-keys" scopes=${p.scopes} /></details></section>
    <section class="panel"><h2>${tc.oauthClients}</h2><${CredentialTable} ctx=${p.ctx} kind="oauth-clients" rows=${p.clients} />
      <details><summary>${tc.newOauthClient}</summary><${CreateForm} ctx=${p.ctx} kind="oauth-clients" scopes=${p.scopes} /></details></section>
  <//>`;
}

export interface Delivery {
  id: string;
  eventId: string;
  type: string;
  webhook: string;
  url: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  attemptLog?: {
    attempt: number;
    at: string;
    statusCode: number | null;
    error: string | null;
    durationMs: number;
  }[];
}
export interface Endpoint {
  name: string;
  url: string;
  events: string[];
  disabledAt: string | null;
  disabledReason: string | null;
}

const deliveryStatus = (ctx: PageCtx, s: string) =>
  (ctx.loc.t.deliveryStatus as Record<string, string>)[s] ?? s;

export function WebhooksPage(p: {
  ctx: PageCtx;
  deliveries: Delivery[];
  endpoints: Endpoint[];
  status: string;
  cursor: string;
  next: string | null;
  ok?: string;
}): VNode {
  const { loc } = p.ctx;
  const tw = loc.t.webhooks;
  return html`<${Layout} title=${tw.title} ctx=${p.ctx}>
    <h1>${tw.title}</h1>
    <${Message} kind="ok" text=${p.ok} />
    <section class="panel"><h2>${tw.endpoints}</h2>
      ${p.endpoints.length === 0 && html`<p class="muted">${tw.noEndpoints}</p>`}
      <ul>${p.endpoints.map(
        (e) => html`<li><strong>${e.name}</strong> <code>${e.url}</code> · ${e.events.join(", ")}
          ${
            e.disabledAt
              ? html` · <span class="badge failed">${tw.disabled}</span> ${e.disabledReason ?? ""}
            <form method="post" action=${`/admin/webhooks/endpoints/${e.name}/enable`} class="actions"><${Csrf} ctx=${p.ctx} /><button type="submit" class="secondary">${tw.enable}</button></form>`
              : html` · <span class="badge active">${tw.enabled}</span>`
          }</li>`,
      )}</ul>
    </section>
    <h2>${tw.deliveries}</h2>
    <form method="get" action="/admin/webhooks" class="bar">
      <div class="field"><label for="status">${tw.status}</label><select id="status" name="status"><option value="">${tw.any}</option>
        ${["pending", "succeeded", "failed", "cancelled"].map((s) => html`<option value=${s} selected=${s === p.status}>${deliveryStatus(p.ctx, s)}</option>`)}</select></div>
      <button type="submit" class="secondary">${tw.filter}</button>
    </form>
    <div class="table-wrap"><table class="stack">
      <thead><tr><th scope="col">${tw.event}</th><th scope="col">${tw.webhook}</th><th scope="col">${tw.status}</th><th scope="col" class="num">${tw.attempts}</th><th scope="col">${tw.lastResponse}</th><th scope="col">${tw.created}</th></tr></thead>
      <tbody>${p.deliveries.map(
        (
          d,
        ) => html`<tr><td data-label=${tw.event}><a href=${`/admin/webhooks/${d.id}`}>${d.type}</a></td><td data-label=${tw.webhook}>${d.webhook}</td>
          <td data-label=${tw.status}><span class=${`badge ${d.status}`}>${deliveryStatus(p.ctx, d.status)}</span></td><td class="num" data-label=${tw.attempts}>${loc.number(d.attempts)}</td>
          <td data-label=${tw.lastResponse}>${d.lastStatusCode ?? d.lastError ?? "—"}</td><td data-label=${tw.created}>${loc.dateTime(d.createdAt)}</td></tr>`,
      )}</tbody></table></div>
    ${p.deliveries.length === 0 && html`<p class="muted">${tw.none}</p>`}
    <${Pager} t=${loc.t} base="/admin/webhooks" q=${{ status: p.status, cursor: p.cursor }} next=${p.next} />
  <//>`;
}

export function DeliveryPage({ ctx, d, ok }: { ctx: PageCtx; d: Delivery; ok?: string }): VNode {
  const { loc } = ctx;
  const tw = loc.t.webhooks;
  return html`<${Layout} title=${tw.delivery} ctx=${ctx}>
    <p><a href="/admin/webhooks">${tw.back}</a></p>
    <h1>${d.type} → ${d.webhook}</h1>
    <${Message} kind="ok" text=${ok} />
    <section class="panel"><dl class="facts">
      <dt>${tw.status}</dt><dd><span class=${`badge ${d.status}`}>${deliveryStatus(ctx, d.status)}</span></dd><dt>${tw.url}</dt><dd><code>${d.url}</code></dd>
      <dt>${tw.eventId}</dt><dd><code>${d.eventId}</code></dd><dt>${tw.created}</dt><dd>${loc.dateTime(d.createdAt)}</dd></dl></section>
    <section class="panel"><h2>${tw.attempts}</h2><table class="stack">
      <thead><tr><th scope="col" class="num">#</th><th scope="col">${tw.at}</th><th scope="col">${tw.response}</th><th scope="col" class="num">${tw.duration}</th></tr></thead>
      <tbody>${(d.attemptLog ?? []).map(
        (
          a,
        ) => html`<tr><td class="num" data-label="#">${a.attempt}</td><td data-label=${tw.at}>${loc.dateTime(a.at)}</td>
        <td data-label=${tw.response}>${a.statusCode ?? a.error ?? "—"}</td><td class="num" data-label=${tw.duration}>${loc.milliseconds(a.durationMs)}</td></tr>`,
      )}</tbody></table>
      <form method="post" action=${`/admin/webhooks/${d.id}/replay`}><${Csrf} ctx=${ctx} /><button type="submit">${tw.replay}</button></form>
    </section>
  <//>`;
}

/** A configuration value as nested definition lists (arrays of values joined, of objects listed). */
function Value({ v }: { v: unknown }): VNode {
  if (v === null || v === undefined || v === "") return html`<span class="muted">—</span>`;
  if (Array.isArray(v)) {
    if (v.every((x) => typeof x !== "object" || x === null)) return html`<span>${v.join(", ")}</span>`;
    return html`<ul class="plain">${v.map((x) => html`<li><${Value} v=${x} /></li>`)}</ul>`;
  }
  if (typeof v === "object") {
    return html`<dl class="facts">${Object.entries(v as Record<string, unknown>).map(
      ([k, x]) => html`<dt>${k}</dt><dd><${Value} v=${x} /></dd>`,
    )}</dl>`;
  }
  return html`<span>${String(v)}</span>`;
}

export function SettingsPage({ ctx, groups }: { ctx: PageCtx; groups: [string, string, unknown][] }): VNode {
  const ts = ctx.loc.t.settings;
  return html`<${Layout} title=${ts.title} ctx=${ctx}>
    <h1>${ts.title}</h1>
    <p class="panel notice">${ts.managed}</p>
    <div class="grid">
    ${groups.map(
      ([
        title,
        source,
        value,
      ]) => html`<section class="panel"><h2>${title}</h2><p class="hint">${ts.from} <code>${source}</code></p>
        ${value === undefined ? html`<p class="muted">${ts.notSet}</p>` : html`<${Value} v=${value} />`}</section>`,
    )}
    </div>
  <//>`;
}
