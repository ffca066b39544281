import type { AdminMessages } from "../../i18n/index.ts";
import { html, type VNode } from "./html.ts";
import { Csrf, Layout, Message, type PageCtx } from "./layout.ts";

// Products (search, pages, create, edit, stock) and customers.

export interface Variant {
  id: string;
  sku: string;
  title: string;
  priceMinor: number;
  currency: string;
}
export interface Product {
  id: string;
  title: string;
  description: string | null;
  status: string;
  variants: Variant[];
}
export interface Level {
  variantId: string;
  available: number;
  lowStockThreshold: number;
  low: boolean;
}

export function Pager({
  t,
  base,
  q,
  next,
}: {
  t: AdminMessages;
  base: string;
  q: Record<string, string>;
  next: string | null;
}): VNode {
  const p = new URLSearchParams(Object.entries(q).filter(([, v]) => v));
  const first = p.toString();
  if (next) p.set("cursor", next);
  return html`<nav class="pager" aria-label=${t.pages}>
    ${q.cursor && html`<a href=${first ? `${base}?${first}` : base}>${t.firstPage}</a>`}
    ${next && html`<a href=${`${base}?${p}`}>${t.nextPage}</a>`}
  </nav>`;
}

const Search = ({
  t,
  base,
  q,
  label,
}: {
  t: AdminMessages;
  base: string;
  q: string;
  label: string;
}) => html`<form method="get" action=${base} class="bar" role="search">
  <div class="field grow"><label for="q">${label}</label><input id="q" name="q" type="search" value=${q} /></div>
  <button type="submit" class="secondary">${t.search}</button>
</form>`;

/** A product's status in the admin's language (the value stays the API's). */
export const statusName = (t: AdminMessages, s: string) =>
  (t.productStatus as Record<string, string>)[s] ?? s;

export function ProductsPage(p: {
  ctx: PageCtx;
  products: Product[];
  q: string;
  cursor: string;
  next: string | null;
  error?: string;
}): VNode {
  const { loc } = p.ctx;
  const { t } = loc;
  const tp = t.products;
  return html`<${Layout} title=${tp.title} ctx=${p.ctx}>
    <h1>${tp.title}</h1>
    <${Message} kind="error" text=${p.error} />
    <${Search} t=${t} base="/admin/products" q=${p.q} label=${tp.searchLabel} />
    <div class="table-wrap"><table class="stack">
      <thead><tr><th scope="col">${tp.name}</th><th scope="col">${tp.status}</th><th scope="col">${tp.skus}</th><th scope="col" class="num">${tp.price}</th></tr></thead>
      <tbody>${p.products.map(
        (x) => html`<tr><td data-label=${tp.name}><a href=${`/admin/products/${x.id}`}>${x.title}</a></td>
          <td data-label=${tp.status}><span class=${`badge ${x.status}`}>${statusName(t, x.status)}</span></td>
          <td data-label=${tp.skus}><code>${x.variants.map((v) => v.sku).join(", ")}</code></td>
          <td class="num" data-label=${tp.price}>${x.variants[0] ? loc.money(x.variants[0].priceMinor, x.variants[0].currency) : "—"}</td></tr>`,
      )}</tbody>
    </table></div>
    ${p.products.length === 0 && html`<p class="muted">${p.q ? tp.noMatch(p.q) : tp.none}</p>`}
    <${Pager} t=${t} base="/admin/products" q=${{ q: p.q, cursor: p.cursor }} next=${p.next} />
    <form method="post" action="/admin/products" class="panel">
      <h2>${tp.create}</h2>
      <${Csrf} ctx=${p.ctx} />
      <div class="grid">
        <div class="field"><label for="n-title">${tp.name}</label><input id="n-title" name="title" required maxlength="200" /></div>
        <div class="field"><label for="n-sku">${tp.sku}</label><input id="n-sku" name="sku" required maxlength="64" /></div>
        <div class="field"><label for="n-price">${tp.priceIn(loc.currency, loc.taxNote)}</label><input id="n-price" name="price" required inputmode="decimal" pattern="[0-9]+([.,][0-9]{1,2})?" /></div>
        <div class="field"><label for="n-stock">${tp.stock}</label><input id="n-stock" name="stock" type="number" min="0" value="0" /></div>
        <div class="field"><label for="n-low">${tp.lowStockThreshold}</label><input id="n-low" name="lowStockThreshold" type="number" min="0" value="5" /></div>
        <div class="field"><label for="n-status">${tp.status}</label><select id="n-status" name="status">
          ${["active", "draft"].map((s) => html`<option value=${s}>${statusName(t, s)}</option>`)}</select></div>
      </div>
      <button type="submit">${tp.submitCreate}</button>
    </form>
  <//>`;
}

export function ProductPage(p: {
  ctx: PageCtx;
  product: Product;
  levels: Map<string, Level>;
  error?: string;
  ok?: string;
}): VNode {
  const x = p.product;
  const { loc } = p.ctx;
  const { t } = loc;
  const tp = t.products;
  return html`<${Layout} title=${x.title} ctx=${p.ctx}>
    <p><a href="/admin/products">${tp.back}</a></p>
    <h1>${x.title}</h1>
    <${Message} kind="error" text=${p.error} /><${Message} kind="ok" text=${p.ok} />
    <form method="post" action=${`/admin/products/${x.id}`} class="panel">
      <h2>${tp.details}</h2>
      <${Csrf} ctx=${p.ctx} />
      <div class="field"><label for="e-title">${tp.name}</label><input id="e-title" name="title" required maxlength="200" value=${x.title} /></div>
      <div class="field"><label for="e-desc">${tp.description}</label><textarea id="e-desc" name="description" rows="4">${x.description ?? ""}</textarea></div>
      <div class="field"><label for="e-status">${tp.status}</label><select id="e-status" name="status">
        ${["active", "draft", "archived"].map((s) => html`<option value=${s} selected=${s === x.status}>${statusName(t, s)}</option>`)}</select></div>
      <button type="submit">${tp.save}</button>
    </form>
    <section class="panel"><h2>${tp.variants}</h2>
      <table class="stack"><thead><tr><th scope="col">${tp.sku}</th><th scope="col">${tp.price}</th><th scope="col" class="num">${tp.available}</th><th scope="col">${tp.adjust}</th></tr></thead>
      <tbody>${x.variants.map((v) => {
        const l = p.levels.get(v.id);
        return html`<tr><td data-label=${tp.sku}><code>${v.sku}</code> ${l?.low && html`<span class="badge pending">${tp.low}</span>`}</td>
          <td data-label=${tp.price}>${loc.money(v.priceMinor, v.currency)}</td><td class="num" data-label=${tp.available}>${l ? loc.number(l.available) : "—"}</td>
          <td data-label=${tp.adjust}><form method="post" action=${`/admin/products/${x.id}/stock`} class="actions">
            <${Csrf} ctx=${p.ctx} /><input type="hidden" name="variantId" value=${v.id} />
            <div><label for=${`d-${v.id}`}>${tp.changeBy}</label><input id=${`d-${v.id}`} name="delta" type="number" required /></div>
            <div><label for=${`r-${v.id}`}>${tp.reason}</label><input id=${`r-${v.id}`} name="reason" required value=${tp.defaultReason} /></div>
            <button type="submit" class="secondary">${tp.adjustButton}</button></form></td></tr>`;
      })}</tbody></table>
    </section>
  <//>`;
}

export interface Customer {
  id: string;
  name: string;
  email: string;
  createdAt: string;
}

export function CustomersPage(p: {
  ctx: PageCtx;
  customers: Customer[];
  q: string;
  cursor: string;
  next: string | null;
}): VNode {
  const { loc } = p.ctx;
  const { t } = loc;
  const tc = t.customers;
  return html`<${Layout} title=${tc.title} ctx=${p.ctx}>
    <h1>${tc.title}</h1>
    <${Search} t=${t} base="/admin/customers" q=${p.q} label=${tc.searchLabel} />
    <div class="table-wrap"><table class="stack">
      <thead><tr><th scope="col">${tc.name}</th><th scope="col">${tc.email}</th><th scope="col">${tc.since}</th><th scope="col">${tc.orders}</th></tr></thead>
      <tbody>${p.customers.map(
        (x) => html`<tr><td data-label=${tc.name}>${x.name}</td><td data-label=${tc.email}>${x.email}</td>
          <td data-label=${tc.since}>${loc.date(x.createdAt)}</td>
          <td data-label=${tc.orders}><a href=${`/admin/orders?customerId=${encodeURIComponent(x.id)}`}>${tc.ordersOf(x.name)}</a></td></tr>`,
      )}</tbody>
    </table></div>
    ${p.customers.length === 0 && html`<p class="muted">${p.q ? tc.noMatch(p.q) : tc.none}</p>`}
    <${Pager} t=${t} base="/admin/customers" q=${{ q: p.q, cursor: p.cursor }} next=${p.next} />
  <//>`;
}
