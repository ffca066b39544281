import { html, type VNode } from "./html.ts";
import { Csrf, Layout, Message, money, type PageCtx } from "./layout.ts";

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
  base,
  q,
  next,
}: {
  base: string;
  q: Record<string, string>;
  next: string | null;
}): VNode {
  const p = new URLSearchParams(Object.entries(q).filter(([, v]) => v));
  const first = p.toString();
  if (next) p.set("cursor", next);
  return html`<nav class="pager" aria-label="Pages">
    ${q.cursor && html`<a href=${first ? `${base}?${first}` : base}>First page</a>`}
    ${next && html`<a href=${`${base}?${p}`}>Next page</a>`}
  </nav>`;
}

const Search = ({
  base,
  q,
  label,
}: {
  base: string;
  q: string;
  label: string;
}) => html`<form method="get" action=${base} class="bar" role="search">
  <div class="field grow"><label for="q">${label}</label><input id="q" name="q" type="search" value=${q} /></div>
  <button type="submit" class="secondary">Search</button>
</form>`;

export function ProductsPage(p: {
  ctx: PageCtx;
  products: Product[];
  q: string;
  cursor: string;
  next: string | null;
  error?: string;
  currency: string;
}): VNode {
  return html`<${Layout} title="Products" ctx=${p.ctx}>
    <h1>Products</h1>
    <${Message} kind="error" text=${p.error} />
    <${Search} base="/admin/products" q=${p.q} label="Search titles" />
    <div class="table-wrap"><table class="stack">
      <thead><tr><th scope="col">Title</th><th scope="col">Status</th><th scope="col">SKUs</th><th scope="col" class="num">Price</th></tr></thead>
      <tbody>${p.products.map(
        (x) => html`<tr><td data-label="Title"><a href=${`/admin/products/${x.id}`}>${x.title}</a></td>
          <td data-label="Status"><span class=${`badge ${x.status}`}>${x.status}</span></td>
          <td data-label="SKUs"><code>${x.variants.map((v) => v.sku).join(", ")}</code></td>
          <td class="num" data-label="Price">${x.variants[0] ? money(x.variants[0].priceMinor, x.variants[0].currency) : "—"}</td></tr>`,
      )}</tbody>
    </table></div>
    ${p.products.length === 0 && html`<p class="muted">No products${p.q ? ` match “${p.q}”` : ""}.</p>`}
    <${Pager} base="/admin/products" q=${{ q: p.q, cursor: p.cursor }} next=${p.next} />
    <form method="post" action="/admin/products" class="panel">
      <h2>New product</h2>
      <${Csrf} ctx=${p.ctx} />
      <div class="grid">
        <div class="field"><label for="n-title">Title</label><input id="n-title" name="title" required maxlength="200" /></div>
        <div class="field"><label for="n-sku">SKU</label><input id="n-sku" name="sku" required maxlength="64" /></div>
        <div class="field"><label for="n-price">Price (${p.currency})</label><input id="n-price" name="price" required inputmode="decimal" pattern="[0-9]+([.][0-9]{1,2})?" /></div>
        <div class="field"><label for="n-stock">Stock</label><input id="n-stock" name="stock" type="number" min="0" value="0" /></div>
        <div class="field"><label for="n-low">Low-stock threshold</label><input id="n-low" name="lowStockThreshold" type="number" min="0" value="5" /></div>
        <div class="field"><label for="n-status">Status</label><select id="n-status" name="status"><option>active</option><option>draft</option></select></div>
      </div>
      <button type="submit">Create product</button>
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
  return html`<${Layout} title=${x.title} ctx=${p.ctx}>
    <p><a href="/admin/products">← Products</a></p>
    <h1>${x.title}</h1>
    <${Message} kind="error" text=${p.error} /><${Message} kind="ok" text=${p.ok} />
    <form method="post" action=${`/admin/products/${x.id}`} class="panel">
      <h2>Details</h2>
      <${Csrf} ctx=${p.ctx} />
      <div class="field"><label for="e-title">Title</label><input id="e-title" name="title" required maxlength="200" value=${x.title} /></div>
      <div class="field"><label for="e-desc">Description</label><textarea id="e-desc" name="description" rows="4">${x.description ?? ""}</textarea></div>
      <div class="field"><label for="e-status">Status</label><select id="e-status" name="status">
        ${["active", "draft", "archived"].map((s) => html`<option selected=${s === x.status}>${s}</option>`)}</select></div>
      <button type="submit">Save</button>
    </form>
    <section class="panel"><h2>Variants and stock</h2>
      <table class="stack"><thead><tr><th scope="col">SKU</th><th scope="col">Price</th><th scope="col" class="num">Available</th><th scope="col">Adjust stock</th></tr></thead>
      <tbody>${x.variants.map((v) => {
        const l = p.levels.get(v.id);
        return html`<tr><td data-label="SKU"><code>${v.sku}</code> ${l?.low && html`<span class="badge pending">low</span>`}</td>
          <td data-label="Price">${money(v.priceMinor, v.currency)}</td><td class="num" data-label="Available">${l?.available ?? "—"}</td>
          <td data-label="Adjust stock"><form method="post" action=${`/admin/products/${x.id}/stock`} class="actions">
            <${Csrf} ctx=${p.ctx} /><input type="hidden" name="variantId" value=${v.id} />
            <div><label for=${`d-${v.id}`}>Change by</label><input id=${`d-${v.id}`} name="delta" type="number" required /></div>
            <div><label for=${`r-${v.id}`}>Reason</label><input id=${`r-${v.id}`} name="reason" required value="manual count" /></div>
            <button type="submit" class="secondary">Adjust</button></form></td></tr>`;
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
  return html`<${Layout} title="Customers" ctx=${p.ctx}>
    <h1>Customers</h1>
    <${Search} base="/admin/customers" q=${p.q} label="Search names and emails" />
    <div class="table-wrap"><table class="stack">
      <thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Since</th><th scope="col">Orders</th></tr></thead>
      <tbody>${p.customers.map(
        (x) => html`<tr><td data-label="Name">${x.name}</td><td data-label="Email">${x.email}</td>
          <td data-label="Since">${x.createdAt.slice(0, 10)}</td>
          <td data-label="Orders"><a href=${`/admin/orders?customerId=${encodeURIComponent(x.id)}`}>Orders of ${x.name}</a></td></tr>`,
      )}</tbody>
    </table></div>
    ${p.customers.length === 0 && html`<p class="muted">No customers${p.q ? ` match “${p.q}”` : ""}.</p>`}
    <${Pager} base="/admin/customers" q=${{ q: p.q, cursor: p.cursor }} next=${p.next} />
  <//>`;
}
