import type { AdminLocale } from "../locale.ts";
import { html, type VNode } from "./html.ts";
import { Layout, type PageCtx } from "./layout.ts";

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
function Chart({ a, loc }: { a: Analytics; loc: AdminLocale }): VNode {
  const t = loc.t.overview;
  const money = (n: number) => loc.money(n, a.currency);
  const maxRev = Math.max(1, ...a.byDay.map((d) => d.revenueMinor));
  const maxOrders = Math.max(1, ...a.byDay.map((d) => d.orders));
  const slot = W / Math.max(1, a.byDay.length);
  const inner = H - TOP - BOTTOM;
  const y = (v: number, max: number) => H - BOTTOM - Math.round((v / max) * inner);
  const cx = (i: number) => (i * slot + slot / 2).toFixed(1);
  const points = a.byDay.map((d, i) => `${cx(i)},${y(d.orders, maxOrders)}`).join(" ");
  return html`<div>
    <p class="legend" aria-hidden="true">
      <span><span class="swatch"></span>${t.highestRevenue(money(maxRev))}</span>
      <span><span class="swatch orders"></span>${t.highestOrders(loc.number(maxOrders))}</span>
    </p>
    <svg viewBox=${`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-labelledby="chart-title chart-desc">
      <title id="chart-title">${t.byDay}</title>
      <desc id="chart-desc">${t.chartDesc(loc.day(a.from), loc.day(a.to), money(maxRev), loc.number(maxOrders))}</desc>
      <line class="axis" x1="0" x2=${W} y1=${H - BOTTOM} y2=${H - BOTTOM} />
      ${a.byDay.map((d, i) => {
        const top = y(d.revenueMinor, maxRev);
        return html`<rect class="bar-rect" x=${(i * slot + slot * 0.15).toFixed(1)} y=${top} width=${(slot * 0.7).toFixed(1)}
          height=${H - BOTTOM - top}><title>${t.dayFigures(loc.day(d.date), money(d.revenueMinor), d.orders)}</title></rect>`;
      })}
      <polyline class="orders-line" points=${points} vector-effect="non-scaling-stroke" />
    </svg>
    <p class="axis-labels" aria-hidden="true"><span>${loc.day(a.from)}</span><span>${loc.day(a.to)}</span></p>
  </div>`;
}

export function OverviewPage({ ctx, a, low }: { ctx: PageCtx; a: Analytics; low: LowStock[] }): VNode {
  const { loc } = ctx;
  const t = loc.t.overview;
  const money = (n: number) => loc.money(n, a.currency);
  const num = loc.number;
  return html`<${Layout} title=${t.title} ctx=${ctx}>
    <h1>${t.title} <span class="muted">· ${t.period}</span></h1>
    <div class="kpis">
      <div class="kpi">${t.revenue}<b>${money(a.revenueMinor)}</b></div>
      <div class="kpi">${t.orders}<b>${num(a.orders)}</b></div>
      <div class="kpi">${t.averageOrder}<b>${money(a.averageOrderValueMinor)}</b></div>
      <div class="kpi">${t.newCustomers}<b>${num(a.newCustomers)}</b></div>
    </div>
    <section class="panel chart" aria-labelledby="rev-h">
      <h2 id="rev-h">${t.byDay}</h2>
      <${Chart} a=${a} loc=${loc} />
      <details>
        <summary>${t.showTable}</summary>
        <div class="table-wrap"><table>
          <caption class="muted">${t.perDay}</caption>
          <thead><tr><th scope="col">${t.day}</th><th scope="col" class="num">${t.revenue}</th><th scope="col" class="num">${t.orders}</th></tr></thead>
          <tbody>${a.byDay.map((d) => html`<tr><td>${loc.day(d.date)}</td><td class="num">${money(d.revenueMinor)}</td><td class="num">${num(d.orders)}</td></tr>`)}</tbody>
        </table></div>
      </details>
    </section>
    <div class="grid">
      <section class="panel" aria-labelledby="top-h">
        <h2 id="top-h">${t.topProducts}</h2>
        ${
          a.topProducts.length
            ? html`<table class="stack"><thead><tr><th scope="col">${t.product}</th><th scope="col" class="num">${t.sold}</th><th scope="col" class="num">${t.revenue}</th></tr></thead>
              <tbody>${a.topProducts.map(
                (
                  p,
                ) => html`<tr><td data-label=${t.product}><a href=${`/admin/products/${p.productId}`}>${p.title}</a></td>
                  <td class="num" data-label=${t.sold}>${num(p.quantity)}</td><td class="num" data-label=${t.revenue}>${money(p.revenueMinor)}</td></tr>`,
              )}</tbody></table>`
            : html`<p class="muted">${t.noSales}</p>`
        }
      </section>
      <section class="panel" aria-labelledby="low-h">
        <h2 id="low-h">${t.lowStock}</h2>
        ${
          low.length
            ? html`<table class="stack"><thead><tr><th scope="col">${t.sku}</th><th scope="col" class="num">${t.available}</th><th scope="col" class="num">${t.threshold}</th></tr></thead>
              <tbody>${low.map(
                (
                  l,
                ) => html`<tr><td data-label=${t.sku}><code>${l.sku}</code></td><td class="num" data-label=${t.available}>${num(l.available)}</td>
                  <td class="num" data-label=${t.threshold}>${num(l.lowStockThreshold)}</td></tr>`,
              )}</tbody></table>`
            : html`<p class="muted">${t.nothingLow}</p>`
        }
      </section>
    </div>
  <//>`;
}
