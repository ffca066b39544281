import type { Session } from "../sessions.ts";
import { html, type VNode } from "./html.ts";
import { Csrf, SIGN_IN_PATH } from "./layout.ts";

/** The sign-in form: a Kubernetes bearer token, checked by the API server. */
export function SignIn({ session, error, next }: { session: Session; error?: string; next: string }): VNode {
  return html`<section class="panel signin">
    <h1>Sign in</h1>
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
