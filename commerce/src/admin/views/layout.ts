import type { AdminMessages } from "../../i18n/index.ts";
import type { AdminLocale } from "../locale.ts";
import type { Session } from "../sessions.ts";
import { STYLESHEET } from "./assets.ts";
import { html, type VNode } from "./html.ts";

/** What every page needs: the CSRF token of its forms, the signed-in session, the current path. */
export interface PageCtx {
  csrf: string;
  session?: Session;
  path: string;
  storeName: string;
  loc: AdminLocale;
}

export const NAV = [
  ["/admin/", "overview"],
  ["/admin/products", "products"],
  ["/admin/orders", "orders"],
  ["/admin/customers", "customers"],
  ["/admin/credentials", "credentials"],
  ["/admin/webhooks", "webhooks"],
  ["/admin/settings", "settings"],
] as const satisfies readonly (readonly [string, keyof AdminMessages["nav"]])[];

/** The hidden CSRF field every form carries. */
export const Csrf = ({ ctx }: { ctx: PageCtx }) =>
  html`<input type="hidden" name="_csrf" value=${ctx.csrf} />`;

const current = (path: string, href: string) =>
  href === "/admin/" ? path === "/admin/" || path === "/admin" : path.startsWith(href);

/** The page shell: skip link, header with navigation (when signed in) and sign-out, main content. */
export function Layout(props: { title: string; ctx: PageCtx; narrow?: boolean; children: unknown }): VNode {
  const { title, ctx, children } = props;
  const { t } = ctx.loc;
  const full = ctx.session?.stage === "full";
  return html`<html lang=${ctx.loc.htmlLang}>
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="no-referrer" />
      <title>${title} · ${t.admin(ctx.storeName)}</title>
      <link rel="stylesheet" href=${STYLESHEET.path} />
    </head>
    <body>
      <a class="skip" href="#main">${t.skip}</a>
      <header class="top">
        <a class="brand" href="/admin/">${t.admin(ctx.storeName)}</a>
        ${
          full &&
          html`<nav aria-label=${t.mainNav}>
            ${NAV.map(
              ([href, key]) =>
                html`<a href=${href} aria-current=${current(ctx.path, href) ? "page" : undefined}>${t.nav[key]}</a>`,
            )}
          </nav>`
        }
        ${
          ctx.session &&
          html`<form method="post" action="/admin/logout" class="user">
            <span class="who">${ctx.session.username}</span>
            <${Csrf} ctx=${ctx} />
            <button type="submit" class="link">${t.signOut}</button>
          </form>`
        }
      </header>
      <main id="main" tabindex="-1" class=${props.narrow ? "narrow" : undefined}>${children}</main>
    </body>
  </html>`;
}

/** A message panel (error, notice or success), announced to screen readers. */
export function Message({ kind, text }: { kind: "error" | "notice" | "ok"; text?: string }): VNode | null {
  if (!text) return null;
  return html`<p class=${`panel ${kind}`} role=${kind === "error" ? "alert" : "status"}>${text}</p>`;
}

/** An error page body. */
export function ErrorBody({
  t,
  status,
  message,
}: {
  t: AdminMessages;
  status: number;
  message: string;
}): VNode {
  const heading =
    status === 403 || status === 404 || status === 429 ? t.errorHeading[status] : t.errorHeading.other;
  return html`<section class="panel error" role="alert">
    <h1>${heading} <span class="muted">(${status})</span></h1>
    <p>${message}</p>
    <p><a href="/admin/">${t.backToOverview}</a></p>
  </section>`;
}
