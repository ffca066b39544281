import type { Messages } from "../../i18n/index.ts";
import { type Cursor, encodeCursor, type ListedProduct, type Listing, type ProductPage } from "../catalog.ts";
import { taxNote } from "../locale.ts";
import { html, type VNode } from "./html.ts";
import { Alert, Contact, Csrf, type PageCtx } from "./layout.ts";

// Home, product listing (search and pages) and the product page.

function stockText(t: Messages, n: number): string {
  if (n <= 0) return t.outOfStock;
  if (n <= 5) return t.onlyLeft(n);
  return t.inStock;
}

function Card({ ctx, p }: { ctx: PageCtx; p: ListedProduct }): VNode {
  const price =
    p.minPriceMinor === p.maxPriceMinor
      ? ctx.loc.money(p.minPriceMinor)
      : ctx.loc.t.priceFrom(ctx.loc.money(p.minPriceMinor));
  return html`<li class="card">
    <a href=${`/products/${encodeURIComponent(p.id)}`}>
      <span class="thumb" aria-hidden="true">${p.title.slice(0, 1).toUpperCase()}</span>
      <span class="title">${p.title}</span>
    </a>
    <span class="price">${price}</span>
    <span class=${p.available > 0 ? "stock" : "stock out"}>${stockText(ctx.loc.t, p.available)}</span>
  </li>`;
}

function Grid({ ctx, products }: { ctx: PageCtx; products: ListedProduct[] }): VNode {
  return html`<ul class="grid">${products.map((p) => html`<${Card} ctx=${ctx} p=${p} key=${p.id} />`)}</ul>`;
}

export function HomeBody({ ctx, featured }: { ctx: PageCtx; featured: ListedProduct[] }): VNode {
  const s = ctx.loc.store;
  const { t } = ctx.loc;
  return html`<section class="hero">
      <h1>${s.name}</h1>
      <p>${t.welcome}</p>
      <p><a class="button" href="/products">${t.shopAll}</a></p>
    </section>
    <section aria-labelledby="featured">
      <h2 id="featured">${t.products}</h2>
      ${featured.length ? html`<${Grid} ctx=${ctx} products=${featured} />` : html`<p>${t.noProductsYet}</p>`}
    </section>
    <section aria-labelledby="contact" class="panel">
      <h2 id="contact">${t.contactUs}</h2>
      <${Contact} loc=${ctx.loc} />
    </section>`;
}

export function ListingBody(props: { ctx: PageCtx; q: string } & Listing): VNode {
  const { ctx, q, products, prev, next } = props;
  const { t } = ctx.loc;
  const link = (key: "after" | "before", c: Cursor) => {
    const u = new URLSearchParams();
    if (q) u.set("q", q);
    u.set(key, encodeCursor(c));
    return `/products?${u}`;
  };
  return html`<h1>${q ? t.resultsFor(q) : t.allProducts}</h1>
    ${taxNote(ctx.loc) && html`<p class="muted">${taxNote(ctx.loc)}</p>`}
    ${
      products.length
        ? html`<${Grid} ctx=${ctx} products=${products} />`
        : html`<p>${q ? t.noMatch : t.noProductsOnPage}</p>`
    }
    ${
      (prev || next) &&
      html`<nav class="pager" aria-label=${t.pages}>
        ${prev ? html`<a href=${link("before", prev)} rel="prev">${t.previousPage}</a>` : html`<span></span>`}
        ${next ? html`<a href=${link("after", next)} rel="next">${t.nextPage}</a>` : html`<span></span>`}
      </nav>`
    }`;
}

export function ProductBody({ ctx, p, error }: { ctx: PageCtx; p: ProductPage; error?: string }): VNode {
  const first = p.variants.find((v) => v.available > 0) ?? p.variants[0];
  const soldOut = p.variants.every((v) => v.available <= 0);
  const { t } = ctx.loc;
  return html`<nav aria-label=${t.breadcrumb} class="crumbs"><a href="/products">${t.products}</a> / <span>${p.title}</span></nav>
    <article class="product">
      <div class="thumb big" aria-hidden="true">${p.title.slice(0, 1).toUpperCase()}</div>
      <div>
        <h1>${p.title}</h1>
        ${p.description && html`<p>${p.description}</p>`}
        <${Alert} message=${error} />
        <form method="post" action="/cart/add" class="stack">
          <${Csrf} ctx=${ctx} />
          <fieldset>
            <legend>${t.chooseVariant}</legend>
            ${p.variants.map(
              (v) => html`<label class="variant">
                <input type="radio" name="variantId" value=${v.id} checked=${v.id === first?.id} disabled=${v.available <= 0} required />
                <span class="vt">${v.title}</span>
                <span class="price">${ctx.loc.money(v.priceMinor)}</span>
                <span class=${v.available > 0 ? "stock" : "stock out"}>${stockText(t, v.available)}</span>
              </label>`,
            )}
          </fieldset>
          ${taxNote(ctx.loc) && html`<p class="muted">${taxNote(ctx.loc)}</p>`}
          <label for="quantity">${t.quantity}</label>
          <input id="quantity" name="quantity" type="number" min="1" max="100" value="1" inputmode="numeric" required />
          <button type="submit" class="button" disabled=${soldOut}>${soldOut ? t.soldOut : t.addToCart}</button>
        </form>
      </div>
    </article>`;
}
