import { html, type VNode } from "./html.ts";
import { Layout, money, type PageCtx } from "./layout.ts";

// The overview: key figures, revenue by day as a server-rendered SVG bar chart (its numbers also
// as a table for screen readers and keyboard users), top products and the low-stock list.

export interface Analytics {
  from: string;
  to: string;
  currency: string;
  revenueMinor: number;
  orders: number;
  averageOrderValueMinor: number;
  newCustomers: number;
  byDay: { date: string; revenueMinor: number; orders: number }[];
  topProducts: { productId: string; title: string; quantity: number; revenueMinor: number }[];
}
export interface LowStock {
  variantId: string;
  sku: string;
  available: number;
  lowStockThreshold: number;
}

const W = 720;
const H = 200;
const TOP = 8;
const BOTTOM = 4;

/**
 * Revenue per day as bars and orders per day as a line (each on its own scale, maxima named in
 * the legend). Labels are HTML around the SVG, so they keep their size when the chart shrinks.
 */
function Chart({ a }: { a: Analytics }): VNode {
  const maxRev = Math.max(1, ...a.byDay.map((d) => d.revenueMinor));
  const maxOrders = Math.max(1, ...a.byDay.map((d) => d.orders));
  const slot = W / Math.max(1, a.byDay.length);
  const inner = H - TOP - BOTTOM;
  const y = (v: number, max: number) => H - BOTTOM - Math.round((v / max) * inner);
  const cx = (i: number) => (i * slot + slot / 2).toFixed(1);
  const points = a.byDay.map((d, i) => `${cx(i)},${y(d.orders, maxOrders)}`).join(" ");
  return html`<div>
    <p class="legend" aria-hidden="true">
      <span><span class="swatch"></span>Revenue (highest ${money(maxRev, a.currency)})</span>
      <span><span class="swatch orders"></span>Orders (highest ${maxOrders})</span>
    </p>
    <svg viewBox=${`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-labelledby="chart-title chart-desc">
      <title id="chart-title">Revenue and orders by day</title>
      <desc id="chart-desc">From ${a.from} to ${a.to}: bars of revenue (highest day ${money(maxRev, a.currency)}) and a line of orders (highest day ${maxOrders}). The same numbers are in the table below.</desc>
      <line class="axis" x1="0" x2=${W} y1=${H - BOTTOM} y2=${H - BOTTOM} />
      ${a.byDay.map((d, i) => {
        const top = y(d.revenueMinor, maxRev);
        return html`<rect class="bar-rect" x=${(i * slot + slot * 0.15).toFixed(1)} y=${top} width=${(slot * 0.7).toFixed(1)}
          height=${H - BOTTOM - top}><title>${d.date}: ${money(d.revenueMinor, a.currency)}, ${d.orders} orders</title></rect>`;
      })}
      <polyline class="orders-line" points=${points} vector-effect="non-scaling-stroke" />
    </svg>
    <p class="axis-labels" aria-hidden="true"><span>${a.from}</span><span>${a.to}</span></p>
  </div>`;
}

export function OverviewPage({ ctx, a, low }: { ctx: PageCtx; a: Analytics; low: LowStock[] }): VNode {
  const cur = a.currency;
  return html`<${Layout} title="Overview" ctx=${ctx}>
    <h1>Overview <span class="muted">· last 30 days</span></h1>
    <div class="kpis">
      <div class="kpi">Revenue<b>${money(a.revenueMinor, cur)}</b></div>
      <div class="kpi">Orders<b>${a.orders}</b></div>
      <div class="kpi">Average order<b>${money(a.averageOrderValueMinor, cur)}</b></div>
      <div class="kpi">New customers<b>${a.newCustomers}</b></div>
    </div>
    <section class="panel chart" aria-labelledby="rev-h">
      <h2 id="rev-h">Revenue and orders by day</h2>
      <${Chart} a=${a} />
      <details>
        <summary>Show as a table</summary>
        <div class="table-wrap"><table>
          <caption class="muted">Revenue and orders per day</caption>
          <thead><tr><th scope="col">Day</th><th scope="col" class="num">Revenue</th><th scope="col" class="num">Orders</th></tr></thead>
          <tbody>${a.byDay.map((d) => html`<tr><td>${d.date}</td><td class="num">${money(d.revenueMinor, cur)}</td><td class="num">${d.orders}</td></tr>`)}</tbody>
        </table></div>
      </details>
    </section>
    <div class="grid">
      <section class="panel" aria-labelledby="top-h">
        <h2 id="top-h">Top products</h2>
        ${
          a.topProducts.length
            ? html`<table class="stack"><thead><tr><th scope="col">Product</th><th scope="col" class="num">Sold</th><th scope="col" class="num">Revenue</th></tr></thead>
              <tbody>${a.topProducts.map(
                (
                  p,
                ) => html`<tr><td data-label="Product"><a href=${`/admin/products/${p.productId}`}>${p.title}</a></td>
                  <td class="num" data-label="Sold">${p.quantity}</td><td class="num" data-label="Revenue">${money(p.revenueMinor, cur)}</td></tr>`,
              )}</tbody></table>`
            : html`<p class="muted">No sales in this period.</p>`
        }
      </section>
      <section class="panel" aria-labelledby="low-h">
        <h2 id="low-h">Low stock</h2>
        ${
          low.length
            ? html`<table class="stack"><thead><tr><th scope="col">SKU</th><th scope="col" class="num">Available</th><th scope="col" class="num">Threshold</th></tr></thead>
              <tbody>${low.map(
                (
                  l,
                ) => html`<tr><td data-label="SKU"><code>${l.sku}</code></td><td class="num" data-label="Available">${l.available}</td>
                  <td class="num" data-label="Threshold">${l.lowStockThreshold}</td></tr>`,
              )}</tbody></table>`
            : html`<p class="muted">Nothing is at or below its threshold.</p>`
        }
      </section>
    </div>
  <//>`;
}
