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
const H = 220;
const PAD = { l: 8, r: 8, t: 12, b: 28 };

function Chart({ a }: { a: Analytics }): VNode {
  const max = Math.max(1, ...a.byDay.map((d) => d.revenueMinor));
  const n = Math.max(1, a.byDay.length);
  const slot = (W - PAD.l - PAD.r) / n;
  const bh = H - PAD.t - PAD.b;
  return html`<svg viewBox=${`0 0 ${W} ${H}`} role="img" aria-labelledby="chart-title chart-desc">
    <title id="chart-title">Revenue by day</title>
    <desc id="chart-desc">Bars of revenue per day from ${a.from} to ${a.to}; highest day ${money(max, a.currency)}. The same numbers are in the table below.</desc>
    <line class="axis" x1=${PAD.l} x2=${W - PAD.r} y1=${H - PAD.b} y2=${H - PAD.b} />
    ${a.byDay.map((d, i) => {
      const h = Math.round((d.revenueMinor / max) * bh);
      return html`<rect class="bar-rect" x=${(PAD.l + i * slot + slot * 0.15).toFixed(1)} y=${H - PAD.b - h}
        width=${(slot * 0.7).toFixed(1)} height=${h}><title>${d.date}: ${money(d.revenueMinor, a.currency)}, ${d.orders} orders</title></rect>`;
    })}
    <text x=${PAD.l} y=${H - 8}>${a.from}</text>
    <text x=${W - PAD.r} y=${H - 8} text-anchor="end">${a.to}</text>
  </svg>`;
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
