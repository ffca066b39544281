import type { Session } from "../sessions.ts";
import { STYLESHEET } from "./assets.ts";
import { html, type VNode } from "./html.ts";

/** What every page needs: the CSRF token of its forms, the signed-in session, the current path. */
export interface PageCtx {
  csrf: string;
  session?: Session;
  path: string;
  storeName: string;
}

export const NAV = [
  ["/admin/", "Overview"],
  ["/admin/products", "Products"],
  ["/admin/orders", "Orders"],
  ["/admin/customers", "Customers"],
  ["/admin/credentials", "API keys"],
  ["/admin/webhooks", "Webhooks"],
  ["/admin/settings", "Settings"],
] as const;

/** The hidden CSRF field every form carries. */
export const Csrf = ({ ctx }: { ctx: PageCtx }) =>
  html`<input type="hidden" name="_csrf" value=${ctx.csrf} />`;

const current = (path: string, href: string) =>
  href === "/admin/" ? path === "/admin/" || path === "/admin" : path.startsWith(href);

/** The page shell: skip link, header with navigation (when signed in) and sign-out, main content. */
export function Layout(props: { title: string; ctx: PageCtx; narrow?: boolean; children: unknown }): VNode {
  const { title, ctx, children } = props;
  const full = ctx.session?.stage === "full";
  return html`<html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="no-referrer" />
      <title>${title} · ${ctx.storeName} admin</title>
      <link rel="stylesheet" href=${STYLESHEET.path} />
    </head>
    <body>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <a class="brand" href="/admin/">${ctx.storeName} admin</a>
        ${
          full &&
          html`<nav aria-label="Main">
            ${NAV.map(
              ([href, label]) =>
                html`<a href=${href} aria-current=${current(ctx.path, href) ? "page" : undefined}>${label}</a>`,
            )}
          </nav>`
        }
        ${
          ctx.session &&
          html`<form method="post" action="/admin/logout" class="user">
            <span class="who">${ctx.session.username}</span>
            <${Csrf} ctx=${ctx} />
            <button type="submit" class="link">Sign out</button>
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
export function ErrorBody({ status, message }: { status: number; message: string }): VNode {
  const heading =
    status === 403
      ? "Not allowed"
      : status === 404
        ? "Not found"
        : status === 429
          ? "Too many attempts"
          : "Something went wrong";
  return html`<section class="panel error" role="alert">
    <h1>${heading} <span class="muted">(${status})</span></h1>
    <p>${message}</p>
    <p><a href="/admin/">Back to the overview</a></p>
  </section>`;
}

/** Money in minor units as the store's currency. */
export function money(minor: number, currency: string): string {
  return new Intl.NumberFormat("en", { style: "currency", currency }).format(minor / 100);
}

export const dateTime = (s: string | null | undefined) =>
  s ? `${new Date(s).toISOString().replace("T", " ").slice(0, 16)} UTC` : "—";
