import { MIN_PASSWORD_LENGTH } from "../users.ts";
import { html, type VNode } from "./html.ts";
import { Csrf, Layout, Message, type PageCtx } from "./layout.ts";

// Sign-in, the forced password change, TOTP enrolment and the second-factor step.

export function LoginPage({ ctx, error }: { ctx: PageCtx; error?: string }): VNode {
  const { t } = ctx.loc;
  return html`<${Layout} title=${t.signIn} ctx=${ctx} narrow>
    <h1>${t.signIn}</h1>
    <${Message} kind="error" text=${error} />
    <form method="post" action="/admin/login" class="panel">
      <${Csrf} ctx=${ctx} />
      <div class="field"><label for="username">${t.username}</label>
        <input id="username" name="username" autocomplete="username" required autofocus /></div>
      <div class="field"><label for="password">${t.password}</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required /></div>
      <button type="submit">${t.signIn}</button>
    </form>
  <//>`;
}

export function VerifyPage({ ctx, error }: { ctx: PageCtx; error?: string }): VNode {
  const { t } = ctx.loc;
  return html`<${Layout} title=${t.twoFactor} ctx=${ctx} narrow>
    <h1>${t.twoFactor}</h1>
    <${Message} kind="error" text=${error} />
    <form method="post" action="/admin/login/verify" class="panel">
      <${Csrf} ctx=${ctx} />
      <div class="field"><label for="code">${t.codeLabel}</label>
        <input id="code" name="code" autocomplete="one-time-code" required autofocus
          aria-describedby="code-hint" /></div>
      <p class="hint" id="code-hint">${t.codeHint}</p>
      <button type="submit">${t.verify}</button>
    </form>
  <//>`;
}

export function PasswordPage({ ctx, error }: { ctx: PageCtx; error?: string }): VNode {
  const { t } = ctx.loc;
  return html`<${Layout} title=${t.newPasswordTitle} ctx=${ctx} narrow>
    <h1>${t.newPasswordTitle}</h1>
    <p>${t.newPasswordWhy}</p>
    <${Message} kind="error" text=${error} />
    <form method="post" action="/admin/setup/password" class="panel">
      <${Csrf} ctx=${ctx} />
      <div class="field"><label for="password">${t.newPassword}</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required
          minlength=${MIN_PASSWORD_LENGTH} aria-describedby="pw-hint" />
        <p class="hint" id="pw-hint">${t.passwordHint(MIN_PASSWORD_LENGTH)}</p></div>
      <div class="field"><label for="confirm">${t.repeatPassword}</label>
        <input id="confirm" name="confirm" type="password" autocomplete="new-password" required /></div>
      <button type="submit">${t.savePassword}</button>
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
  const { t } = ctx.loc;
  const grouped = secret.match(/.{1,4}/g)?.join(" ") ?? secret;
  return html`<${Layout} title=${t.enrolTitle} ctx=${ctx} narrow>
    <h1>${t.enrolTitle}</h1>
    <${Message} kind="error" text=${error} />
    <section class="panel">
      <p>${t.scanCode}</p>
      <img class="qr" src=${qr} alt=${t.qrAlt} width="224" height="224" />
      <p id="key-label">${t.keyByHand}</p>
      <p class="secret" data-totp-secret=${secret}>${grouped}</p>
    </section>
    <form method="post" action="/admin/setup/totp" class="panel">
      <${Csrf} ctx=${ctx} />
      <div class="field"><label for="code">${t.sixDigitCode}</label>
        <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" required /></div>
      <button type="submit">${t.confirm}</button>
    </form>
  <//>`;
}

export function RecoveryCodesPage({ ctx, codes }: { ctx: PageCtx; codes: string[] }): VNode {
  const { t } = ctx.loc;
  return html`<${Layout} title=${t.recoveryTitle} ctx=${ctx} narrow>
    <h1>${t.recoveryTitle}</h1>
    <p class="panel ok" role="status">${t.twoFactorOn}</p>
    <section class="panel">
      <p>${t.recoveryKeep} <strong>${t.recoveryOnce}</strong></p>
      <ol class="codes" aria-label=${t.recoveryTitle}>${codes.map((c) => html`<li data-recovery-code>${c}</li>`)}</ol>
    </section>
    <p><a class="button" href="/admin/">${t.continueToOverview}</a></p>
  <//>`;
}
