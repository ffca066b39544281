import type { Session } from "../sessions.ts";
import { html, type VNode } from "./html.ts";
import { Csrf, SIGN_IN_PATH } from "./layout.ts";

/** Why the viewer is back on the sign-in page, from the `ended` query parameter. */
const ENDED: Record<string, string> = {
  refresh: "Your sign-in has ended: the identity provider did not renew it. Sign in again.",
};

/**
 * The sign-in page: "Sign in with <provider>" when OpenID Connect is configured, and the form for
 * a Kubernetes bearer token, checked by the API server.
 */
export function SignIn({
  session,
  error,
  next,
  oidcName,
  ended,
}: {
  session: Session;
  error?: string;
  next: string;
  oidcName?: string;
  ended?: string;
}): VNode {
  const notice = ended ? ENDED[ended] : undefined;
  return html`<section class="panel signin">
    <h1>Sign in</h1>
    ${notice && html`<p class="field-error" role="status">${notice}</p>`}
    ${
      oidcName &&
      html`<form method="post" action=${`${SIGN_IN_PATH}/oidc`}>
        <${Csrf} session=${session} />
        <input type="hidden" name="next" value=${next} />
        <button type="submit">Sign in with ${oidcName}</button>
      </form>
      <p>Or with a token:</p>`
    }
    <p>Paste a Kubernetes bearer token. Every action then runs as that identity, with its RBAC permissions.</p>
    ${error && html`<p class="field-error" role="alert" id="token-error">${error}</p>`}
    <form method="post" action=${SIGN_IN_PATH}>
      <${Csrf} session=${session} />
      <input type="hidden" name="next" value=${next} />
      <div class="field">
        <label for="token">Token</label>
        <input id="token" name="token" type="password" autocomplete="off" required
          aria-invalid=${error ? "true" : undefined} aria-describedby=${error ? "token-error token-hint" : "token-hint"} />
        <p class="hint" id="token-hint">For a ServiceAccount: <code>kubectl create token NAME -n NAMESPACE</code>. The token stays on the server and is never shown in a page.</p>
      </div>
      <button type="submit">Sign in</button>
    </form>
  </section>`;
}

/**
 * After the OpenID Connect callback: moves on to `next` by itself. A meta refresh is a navigation
 * started by this (same-site) page, so the browser sends the new SameSite=Strict session cookie;
 * a redirect from the callback would not (see auth-oidc-routes.ts). The link is for a browser that
 * ignores the refresh.
 */
export function SignedIn({ next }: { next: string }): VNode {
  return html`<section class="panel signin">
    <meta http-equiv="refresh" content=${`0;url=${next}`} />
    <h1>Signed in</h1>
    <p><a href=${next}>Continue to the dashboard</a></p>
  </section>`;
}

/** An OpenID Connect sign-in that did not complete: why, and the way back. */
export function OidcFailed({ message }: { message: string }): VNode {
  return html`<section class="panel error" role="alert">
    <h1>Sign-in failed</h1>
    <p>${message}</p>
    <p><a href=${SIGN_IN_PATH}>Back to sign-in</a></p>
  </section>`;
}
