import type { ShippingAddress } from "../../db/schema.ts";
import { addressLines, countryNames } from "../../orders/address.ts";
import { Pager } from "./catalog.ts";
import { html, type VNode } from "./html.ts";
import { Csrf, dateTime, Layout, Message, money, type PageCtx } from "./layout.ts";

/** The admin is in English (its `lang`): countries by their English names. */
const adminCountry = countryNames("en");

// Orders: the list (by status), and one order with its lines, totals, history and the status
// changes it allows (a refund is the change to `refunded`).

export interface Order {
  id: string;
  shippingAddress?: ShippingAddress | null;
  customerId: string | null;
  status: string;
  currency: string;
  subtotalMinor: number;
  taxMinor: number;
  shippingMinor: number;
  totalMinor: number;
  shippingMethod: string | null;
  trackingNumber: string | null;
  createdAt: string;
  lines: {
    id: string;
    sku: string;
    title: string;
    quantity: number;
    unitPriceMinor: number;
    totalMinor: number;
  }[];
  history: { from: string | null; to: string; note: string | null; at: string }[];
}

export function OrdersPage(p: {
  ctx: PageCtx;
  orders: Order[];
  statuses: readonly string[];
  status: string;
  customerId: string;
  cursor: string;
  next: string | null;
}): VNode {
  return html`<${Layout} title="Orders" ctx=${p.ctx}>
    <h1>Orders</h1>
    <form method="get" action="/admin/orders" class="bar">
      <div class="field"><label for="status">Status</label><select id="status" name="status">
        <option value="">Any</option>${p.statuses.map((s) => html`<option selected=${s === p.status}>${s}</option>`)}</select></div>
      ${p.customerId && html`<input type="hidden" name="customerId" value=${p.customerId} />`}
      <button type="submit" class="secondary">Filter</button>
    </form>
    <div class="table-wrap"><table class="stack">
      <thead><tr><th scope="col">Order</th><th scope="col">Placed</th><th scope="col">Status</th><th scope="col" class="num">Total</th></tr></thead>
      <tbody>${p.orders.map(
        (
          o,
        ) => html`<tr><td data-label="Order"><a href=${`/admin/orders/${o.id}`}><code>${o.id}</code></a></td>
          <td data-label="Placed">${dateTime(o.createdAt)}</td>
          <td data-label="Status"><span class=${`badge ${o.status}`}>${o.status}</span></td>
          <td class="num" data-label="Total">${money(o.totalMinor, o.currency)}</td></tr>`,
      )}</tbody>
    </table></div>
    ${p.orders.length === 0 && html`<p class="muted">No orders.</p>`}
    <${Pager} t=${p.ctx.loc.t} base="/admin/orders" q=${{ status: p.status, customerId: p.customerId, cursor: p.cursor }} next=${p.next} />
  <//>`;
}

export function OrderPage(p: {
  ctx: PageCtx;
  order: Order;
  next: string[];
  error?: string;
  ok?: string;
}): VNode {
  const o = p.order;
  const m = (n: number) => money(n, o.currency);
  return html`<${Layout} title=${`Order ${o.id}`} ctx=${p.ctx}>
    <p><a href="/admin/orders">← Orders</a></p>
    <h1>Order <code>${o.id}</code></h1>
    <${Message} kind="error" text=${p.error} /><${Message} kind="ok" text=${p.ok} />
    <div class="grid">
      <section class="panel"><h2>Summary</h2><dl class="facts">
        <dt>Status</dt><dd><span class=${`badge ${o.status}`} data-order-status>${o.status}</span></dd>
        <dt>Placed</dt><dd>${dateTime(o.createdAt)}</dd>
        <dt>Customer</dt><dd>${o.customerId ? html`<code>${o.customerId}</code>` : "guest"}</dd>
        <dt>Shipping</dt><dd>${o.shippingMethod ?? "—"}${o.trackingNumber ? ` · tracking ${o.trackingNumber}` : ""}</dd>
        <dt>Ship to</dt><dd>${o.shippingAddress ? html`<address data-shipping-address>${addressLines(o.shippingAddress, adminCountry).map((l, i) => html`${i ? html`<br />` : ""}${l}`)}</address>` : "—"}</dd>
        <dt>Subtotal</dt><dd>${m(o.subtotalMinor)}</dd><dt>Tax</dt><dd>${m(o.taxMinor)}</dd>
        <dt>Shipping cost</dt><dd>${m(o.shippingMinor)}</dd><dt>Total</dt><dd><strong>${m(o.totalMinor)}</strong></dd>
      </dl></section>
      <section class="panel"><h2>Change status</h2>
        ${
          p.next.length
            ? html`<form method="post" action=${`/admin/orders/${o.id}/status`}>
                <${Csrf} ctx=${p.ctx} />
                <fieldset class="choices"><legend>New status</legend>
                  ${p.next.map((s, i) => html`<label><input type="radio" name="to" value=${s} checked=${i === 0} required /> ${s === "refunded" ? "refunded (refund the payment)" : s}</label>`)}
                </fieldset>
                ${p.next.includes("shipped") && html`<div class="field"><label for="tracking">Tracking number (when shipping)</label><input id="tracking" name="trackingNumber" maxlength="100" /></div>`}
                <div class="field"><label for="note">Note</label><input id="note" name="note" maxlength="500" /></div>
                <button type="submit">Change status</button>
              </form>`
            : html`<p class="muted">A ${o.status} order has no further status.</p>`
        }
      </section>
    </div>
    <section class="panel"><h2>Lines</h2><table class="stack">
      <thead><tr><th scope="col">Item</th><th scope="col">SKU</th><th scope="col" class="num">Quantity</th><th scope="col" class="num">Unit price</th><th scope="col" class="num">Total</th></tr></thead>
      <tbody>${o.lines.map(
        (l) => html`<tr><td data-label="Item">${l.title}</td><td data-label="SKU"><code>${l.sku}</code></td>
        <td class="num" data-label="Quantity">${l.quantity}</td><td class="num" data-label="Unit price">${m(l.unitPriceMinor)}</td><td class="num" data-label="Total">${m(l.totalMinor)}</td></tr>`,
      )}</tbody>
    </table></section>
    <section class="panel"><h2>History</h2><ol>
      ${o.history.map((h) => html`<li>${dateTime(h.at)}: ${h.from ?? "created"} → <strong>${h.to}</strong>${h.note ? ` (${h.note})` : ""}</li>`)}
    </ol></section>
  <//>`;
}
