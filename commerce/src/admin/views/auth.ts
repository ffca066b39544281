import { MIN_PASSWORD_LENGTH } from "../users.ts";
import { html, type VNode } from "./html.ts";
import { Csrf, Layout, Message, type PageCtx } from "./layout.ts";

// Sign-in, the forced password change, TOTP enrolment and the second-factor step.

export function LoginPage({ ctx, error }: { ctx: PageCtx; error?: string }): VNode {
  return html`<${Layout} title="Sign in" ctx=${ctx} narrow>
    <h1>Sign in</h1>
    <${Message} kind="error" text=${error} />
    <form method="post" action="/admin/login" class="panel">
      <${Csrf} ctx=${ctx} />
      <div class="field"><label for="username">Username</label>
        <input id="username" name="username" autocomplete="username" required autofocus /></div>
      <div class="field"><label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required /></div>
      <button type="submit">Sign in</button>
    </form>
  <//>`;
}

export function VerifyPage({ ctx, error }: { ctx: PageCtx; error?: string }): VNode {
  return html`<${Layout} title="Two-factor authentication" ctx=${ctx} narrow>
    <h1>Two-factor authentication</h1>
    <${Message} kind="error" text=${error} />
    <form method="post" action="/admin/login/verify" class="panel">
      <${Csrf} ctx=${ctx} />
      <div class="field"><label for="code">Code from your authenticator app, or a recovery code</label>
        <input id="code" name="code" autocomplete="one-time-code" required autofocus
          aria-describedby="code-hint" /></div>
      <p class="hint" id="code-hint">Six digits, or a recovery code such as ABCD-EFGH-JKLM-NPQR (each works once).</p>
      <button type="submit">Verify</button>
    </form>
  <//>`;
}

export function PasswordPage({ ctx, error }: { ctx: PageCtx; error?: string }): VNode {
  return html`<${Layout} title="Choose a new password" ctx=${ctx} narrow>
    <h1>Choose a new password</h1>
    <p>The initial password came from the platform's credentials Secret; replace it before going on.</p>
    <${Message} kind="error" text=${error} />
    <form method="post" action="/admin/setup/password" class="panel">
      <${Csrf} ctx=${ctx} />
      <div class="field"><label for="password">New password</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required
          minlength=${MIN_PASSWORD_LENGTH} aria-describedby="pw-hint" />
        <p class="hint" id="pw-hint">At least ${MIN_PASSWORD_LENGTH} characters, different from the initial one.</p></div>
      <div class="field"><label for="confirm">Repeat the new password</label>
        <input id="confirm" name="confirm" type="password" autocomplete="new-password" required /></div>
      <button type="submit">Save password</button>
    </form>
  <//>`;
}

export function EnrolPage(props: {
  ctx: PageCtx;
  qr: string;
  secret: string;
  uri: string;
  error?: string;
}): VNode {
  const { ctx, qr, secret, error } = props;
  const grouped = secret.match(/.{1,4}/g)?.join(" ") ?? secret;
  return html`<${Layout} title="Set up two-factor authentication" ctx=${ctx} narrow>
    <h1>Set up two-factor authentication</h1>
    <${Message} kind="error" text=${error} />
    <section class="panel">
      <p>Scan this code with an authenticator app (TOTP), then enter the six digits it shows.</p>
      <img class="qr" src=${qr} alt="QR code of the authenticator setup key (the same key is written below)" width="224" height="224" />
      <p id="key-label">Or enter this key by hand:</p>
      <p class="secret" data-totp-secret=${secret}>${grouped}</p>
    </section>
    <form method="post" action="/admin/setup/totp" class="panel">
      <${Csrf} ctx=${ctx} />
      <div class="field"><label for="code">Six-digit code</label>
        <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" required /></div>
      <button type="submit">Confirm</button>
    </form>
  <//>`;
}

export function RecoveryCodesPage({ ctx, codes }: { ctx: PageCtx; codes: string[] }): VNode {
  return html`<${Layout} title="Recovery codes" ctx=${ctx} narrow>
    <h1>Recovery codes</h1>
    <p class="panel ok" role="status">Two-factor authentication is on.</p>
    <section class="panel">
      <p>Keep these codes somewhere safe: each signs you in once without your authenticator app.
        <strong>They are shown only now.</strong></p>
      <ol class="codes" aria-label="Recovery codes">${codes.map((c) => html`<li data-recovery-code>${c}</li>`)}</ol>
    </section>
    <p><a class="button" href="/admin/">Continue to the overview</a></p>
  <//>`;
}
