import type { ShippingAddress } from "../../db/schema.ts";
import type { AdminMessages } from "../../i18n/index.ts";
import { addressLines } from "../../orders/address.ts";
import { Pager } from "./catalog.ts";
import { html, type VNode } from "./html.ts";
import { Csrf, Layout, Message, type PageCtx } from "./layout.ts";

/** An order status in the admin's language (the value stays the API's). */
export const orderStatusName = (t: AdminMessages, s: string) =>
  (t.orderStatus as Record<string, string>)[s] ?? s;

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
  const { loc } = p.ctx;
  const { t } = loc;
  const to = t.orders;
  return html`<${Layout} title=${to.title} ctx=${p.ctx}>
    <h1>${to.title}</h1>
    <form method="get" action="/admin/orders" class="bar">
      <div class="field"><label for="status">${to.status}</label><select id="status" name="status">
        <option value="">${to.any}</option>${p.statuses.map((s) => html`<option value=${s} selected=${s === p.status}>${orderStatusName(t, s)}</option>`)}</select></div>
      ${p.customerId && html`<input type="hidden" name="customerId" value=${p.customerId} />`}
      <button type="submit" class="secondary">${to.filter}</button>
    </form>
    <div class="table-wrap"><table class="stack">
      <thead><tr><th scope="col">${to.order}</th><th scope="col">${to.placed}</th><th scope="col">${to.status}</th><th scope="col" class="num">${to.total}</th></tr></thead>
      <tbody>${p.orders.map(
        (
          o,
        ) => html`<tr><td data-label=${to.order}><a href=${`/admin/orders/${o.id}`}><code>${o.id}</code></a></td>
          <td data-label=${to.placed}>${loc.dateTime(o.createdAt)}</td>
          <td data-label=${to.status}><span class=${`badge ${o.status}`}>${orderStatusName(t, o.status)}</span></td>
          <td class="num" data-label=${to.total}>${loc.money(o.totalMinor, o.currency)}</td></tr>`,
      )}</tbody>
    </table></div>
    ${p.orders.length === 0 && html`<p class="muted">${to.none}</p>`}
    <${Pager} t=${p.ctx.loc.t} base="/admin/orders" q=${{ status: p.status, customerId: p.customerId, cursor: p.cursor }} next=${p.next} />
  <//>`;
}

/** A payment attempt as GET /orders/{id}/payments answers it. */
export interface OrderPayment {
  id: string;
  gateway: string;
  provider: string;
  status: string;
  amountMinor: number;
  currency: string;
  failureReason: string | null;
  instructions: { reference?: string } | null;
  createdAt: string;
}

function PaymentsPanel({ ctx, o, payments }: { ctx: PageCtx; o: Order; payments: OrderPayment[] }): VNode {
  const { loc } = ctx;
  const to = loc.t.orders;
  const action = (pay: OrderPayment, what: "received" | "capture", label: string) =>
    html`<form method="post" action=${`/admin/orders/${o.id}/payments/${pay.id}/${what}`}><${Csrf} ctx=${ctx} /><button type="submit">${label}</button></form>`;
  return html`<section class="panel"><h2>${to.payments}</h2>${
    payments.length
      ? html`<table class="stack">
      <thead><tr><th scope="col">${to.placed}</th><th scope="col">${to.gateway}</th><th scope="col">${to.paymentStatus}</th><th scope="col" class="num">${to.amount}</th><th scope="col">${to.reference}</th><th scope="col"></th></tr></thead>
      <tbody>${payments.map(
        (
          pay,
        ) => html`<tr data-payment=${pay.id}><td data-label=${to.placed}>${loc.dateTime(pay.createdAt)}</td><td data-label=${to.gateway}>${pay.gateway} (${pay.provider})</td>
        <td data-label=${to.paymentStatus}>${pay.status}${pay.failureReason ? ` · ${pay.failureReason}` : ""}</td><td class="num" data-label=${to.amount}>${loc.money(pay.amountMinor, pay.currency)}</td>
        <td data-label=${to.reference}>${pay.instructions?.reference ? html`<code>${pay.instructions.reference}</code>` : "—"}</td>
        <td>${o.status === "pending" && pay.provider === "manual" && pay.status === "pending" ? action(pay, "received", to.markReceived) : pay.provider === "stripe" && pay.status === "authorized" ? action(pay, "capture", to.capture) : ""}</td></tr>`,
      )}</tbody></table>`
      : html`<p class="muted">${to.noPayments}</p>`
  }</section>`;
}

export function OrderPage(p: {
  ctx: PageCtx;
  order: Order;
  payments: OrderPayment[];
  next: string[];
  error?: string;
  ok?: string;
}): VNode {
  const o = p.order;
  const { loc } = p.ctx;
  const { t } = loc;
  const to = t.orders;
  const m = (n: number) => loc.money(n, o.currency);
  const status = (s: string) => orderStatusName(t, s);
  return html`<${Layout} title=${to.orderTitle(o.id)} ctx=${p.ctx}>
    <p><a href="/admin/orders">${to.back}</a></p>
    <h1>${to.order} <code>${o.id}</code></h1>
    <${Message} kind="error" text=${p.error} /><${Message} kind="ok" text=${p.ok} />
    <div class="grid">
      <section class="panel"><h2>${to.summary}</h2><dl class="facts">
        <dt>${to.status}</dt><dd><span class=${`badge ${o.status}`} data-order-status=${o.status}>${status(o.status)}</span></dd>
        <dt>${to.placed}</dt><dd>${loc.dateTime(o.createdAt)}</dd>
        <dt>${to.customer}</dt><dd>${o.customerId ? html`<code>${o.customerId}</code>` : to.guest}</dd>
        <dt>${to.shipping}</dt><dd>${o.shippingMethod ?? "—"}${o.trackingNumber ? ` · ${to.tracking(o.trackingNumber)}` : ""}</dd>
        <dt>${to.shipTo}</dt><dd>${o.shippingAddress ? html`<address data-shipping-address>${addressLines(o.shippingAddress, loc.country).map((l, i) => html`${i ? html`<br />` : ""}${l}`)}</address>` : "—"}</dd>
        <dt>${to.subtotal}</dt><dd>${m(o.subtotalMinor)}</dd><dt>${to.tax}</dt><dd>${m(o.taxMinor)}</dd>
        <dt>${to.shippingCost}</dt><dd>${m(o.shippingMinor)}</dd><dt>${to.total}</dt><dd><strong>${m(o.totalMinor)}</strong></dd>
      </dl></section>
      <section class="panel"><h2>${to.changeStatus}</h2>
        ${
          p.next.length
            ? html`<form method="post" action=${`/admin/orders/${o.id}/status`}>
                <${Csrf} ctx=${p.ctx} />
                <fieldset class="choices"><legend>${to.newStatus}</legend>
                  ${p.next.map((s, i) => html`<label><input type="radio" name="to" value=${s} checked=${i === 0} required /> ${s === "refunded" ? to.refund(status(s)) : status(s)}</label>`)}
                </fieldset>
                ${p.next.includes("shipped") && html`<div class="field"><label for="tracking">${to.trackingNumber}</label><input id="tracking" name="trackingNumber" maxlength="100" /></div>`}
                <div class="field"><label for="note">${to.note}</label><input id="note" name="note" maxlength="500" /></div>
                <button type="submit">${to.changeStatus}</button>
              </form>`
            : html`<p class="muted">${to.final(status(o.status))}</p>`
        }
      </section>
    </div>
    <section class="panel"><h2>${to.lines}</h2><table class="stack">
      <thead><tr><th scope="col">${to.item}</th><th scope="col">${to.sku}</th><th scope="col" class="num">${to.quantity}</th><th scope="col" class="num">${to.unitPrice}</th><th scope="col" class="num">${to.total}</th></tr></thead>
      <tbody>${o.lines.map(
        (
          l,
        ) => html`<tr><td data-label=${to.item}>${l.title}</td><td data-label=${to.sku}><code>${l.sku}</code></td>
        <td class="num" data-label=${to.quantity}>${loc.number(l.quantity)}</td><td class="num" data-label=${to.unitPrice}>${m(l.unitPriceMinor)}</td><td class="num" data-label=${to.total}>${m(l.totalMinor)}</td></tr>`,
      )}</tbody>
    </table></section>
    <${PaymentsPanel} ctx=${p.ctx} o=${o} payments=${p.payments} />
    <section class="panel"><h2>${to.history}</h2><ol>
      ${o.history.map((h) => html`<li>${loc.dateTime(h.at)}: ${h.from ? status(h.from) : to.created} → <strong>${status(h.to)}</strong>${h.note ? ` (${h.note})` : ""}</li>`)}
    </ol></section>
  <//>`;
}
