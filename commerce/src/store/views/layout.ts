import type { Locale } from "../locale.ts";
import { html, type VNode } from "./html.ts";

// The page shell every store page shares: skip link, header (store name, search, account, cart),
// main landmark, footer with the store's contact details from the store settings.

export interface PageCtx {
  loc: Locale;
  /** CSRF token for this response's forms. */
  csrf: string;
  /** Name of the signed-in customer. */
  customer?: string;
  cartCount: number;
  /** Path of the stylesheet (content-hashed). */
  css: string;
}

export function Csrf({ ctx }: { ctx: PageCtx }): VNode {
  return html`<input type="hidden" name="_csrf" value=${ctx.csrf} />`;
}

export function Layout(props: { ctx: PageCtx; title: string; q?: string; children: unknown }): VNode {
  const { ctx, title, children } = props;
  const { loc } = ctx;
  const { t } = loc;
  const s = loc.store;
  return html`<html lang=${loc.htmlLang}>
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>${title === s.name ? s.name : `${title} · ${s.name}`}</title>
      <link rel="stylesheet" href=${ctx.css} />
    </head>
    <body>
      <a class="skip" href="#main">${t.skip}</a>
      <header class="top">
        <div class="wrap bar">
          <a class="brand" href="/">${s.name}</a>
          <form class="search" role="search" method="get" action="/products">
            <label for="q" class="sr">${t.searchLabel}</label>
            <input id="q" name="q" type="search" value=${props.q ?? ""} placeholder=${t.searchLabel} maxlength="100" />
            <button type="submit">${t.search}</button>
          </form>
          <nav aria-label=${t.navLabel}>
            <a href="/products">${t.products}</a>
            <a href="/account">${ctx.customer ? t.account : t.signIn}</a>
            <a href="/cart" class="cart">${t.cart} <span class="count" aria-label=${t.cartItems(ctx.cartCount)}>${ctx.cartCount}</span></a>
          </nav>
        </div>
      </header>
      <main id="main" tabindex="-1" class="wrap">${children}</main>
      <footer class="foot">
        <div class="wrap">
          <p><strong>${s.name}</strong></p>
          <${Contact} loc=${loc} />
        </div>
      </footer>
    </body>
  </html>`;
}

/** The store's contact details (whatever the settings give). */
export function Contact({ loc }: { loc: Locale }): VNode {
  const { t } = loc;
  const s = loc.store;
  const a = s.address;
  return html`<address class="contact">
    ${s.contactEmail && html`<span>${t.emailLabel} <a href=${`mailto:${s.contactEmail}`}>${s.contactEmail}</a></span>`}
    ${s.supportPhone && html`<span>${t.phoneLabel} <a href=${`tel:${s.supportPhone.replace(/[^+0-9]/g, "")}`}>${s.supportPhone}</a></span>`}
    ${
      a &&
      html`<span>${[
        a.line1,
        a.line2,
        [a.postalCode, a.city].filter(Boolean).join(" "),
        a.region,
        loc.country(a.country),
      ]
        .filter(Boolean)
        .join(", ")}</span>`
    }
  </address>`;
}

/** An error page body. */
export function ErrorBody({ loc, status, message }: { loc: Locale; status: number; message: string }): VNode {
  return html`<section class="panel" role="alert">
    <h1>${status === 404 ? loc.t.notFound : loc.t.somethingWrong}</h1>
    <p>${message}</p>
    <p><a href="/products">${loc.t.continueShopping}</a></p>
  </section>`;
}

/** A form's error message, announced to screen readers. */
export function Alert({ message }: { message?: string }): VNode | null {
  return message ? html`<p class="alert" role="alert">${message}</p>` : null;
}
