import { ASSET_PATHS } from "../assets.ts";
import type { Session } from "../sessions.ts";
import { html, type VNode } from "./html.ts";

/** Where the dashboard's routes live. */
export const BASE = "/dashboard";
export const TASKS_PATH = `${BASE}/compute/serverless/tasks`;
export const PLATFORMS_PATH = `${BASE}/compute/platforms/scale`;
export const SIGN_IN_PATH = `${BASE}/sign-in`;
export const SIGN_OUT_PATH = `${BASE}/sign-out`;

/** A platform's page (its deploy progress, status and management). */
export const platformHref = (ns: string, name: string) =>
  `${PLATFORMS_PATH}/deploy?namespace=${encodeURIComponent(ns)}&name=${encodeURIComponent(name)}`;

/** A platform's backups page. */
export const backupsHref = (ns: string, name: string) =>
  `${PLATFORMS_PATH}/${encodeURIComponent(ns)}/${encodeURIComponent(name)}/backups`;

/** The hidden CSRF field every form carries. */
export function Csrf({ session }: { session: Session }): VNode {
  return html`<input type="hidden" name="_csrf" value=${session.csrf} />`;
}

/** The page shell: skip link, header with the signed-in user and sign-out, main content. */
export function Layout(props: { title: string; session?: Session; children: unknown }): VNode {
  const { title, session, children } = props;
  return html`<html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="color-scheme" content="light dark" />
      <title>${title} · cronscale</title>
      <link rel="stylesheet" href=${ASSET_PATHS.css} />
      <script src=${ASSET_PATHS.js} defer></script>
    </head>
    <body>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <a class="brand" href=${TASKS_PATH}>cronscale</a>
        ${
          session?.user &&
          html`<nav aria-label="Main"><a href=${TASKS_PATH} aria-current=${title === "Tasks" ? "page" : undefined}>Tasks</a><a href=${PLATFORMS_PATH} aria-current=${title === "Platforms" ? "page" : undefined}>Platforms</a></nav>
            <form method="post" action=${SIGN_OUT_PATH} class="user">
              <span class="who" title="Signed in as">${session.user.username}</span>
              <${Csrf} session=${session} />
              <button type="submit" class="link">Sign out</button>
            </form>`
        }
      </header>
      <main id="main" tabindex="-1">${children}</main>
    </body>
  </html>`;
}

/** An error page body: the API server's message, never a stack. */
export function ErrorBody({ status, message }: { status: number; message: string }): VNode {
  const heading =
    status === 403
      ? "Not allowed"
      : status === 404
        ? "Not found"
        : status === 401
          ? "Sign in again"
          : "Something went wrong";
  return html`<section class="panel error" role="alert">
    <h1>${heading} <span class="code">(${status})</span></h1>
    <p>${message}</p>
    <p><a href=${TASKS_PATH}>Back to tasks</a></p>
  </section>`;
}
