import { html, type VNode } from "./html.ts";
import { Alert, Csrf, type PageCtx } from "./layout.ts";

// Customer sign-in, registration and the account page with the order history.

export function SignInBody(props: { ctx: PageCtx; next: string; email?: string; error?: string }): VNode {
  const { ctx } = props;
  const { t } = ctx.loc;
  return html`<section class="panel narrow">
    <h1>${t.signIn}</h1>
    <${Alert} message=${props.error} />
    <form method="post" action="/account/sign-in" class="stack">
      <${Csrf} ctx=${ctx} />
      <input type="hidden" name="next" value=${props.next} />
      <label for="email">${t.email}</label>
      <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value=${props.email ?? ""} />
      <label for="password">${t.password}</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="200" />
      <button type="submit" class="button">${t.signIn}</button>
    </form>
    <p>${t.newHere} <a href=${`/account/register?next=${encodeURIComponent(props.next)}`}>${t.createAccount}</a></p>
  </section>`;
}

export function RegisterBody(props: {
  ctx: PageCtx;
  next: string;
  name?: string;
  email?: string;
  error?: string;
}): VNode {
  const { ctx } = props;
  const { t } = ctx.loc;
  return html`<section class="panel narrow">
    <h1>${t.createAccount}</h1>
    <${Alert} message=${props.error} />
    <form method="post" action="/account/register" class="stack">
      <${Csrf} ctx=${ctx} />
      <input type="hidden" name="next" value=${props.next} />
      <label for="name">${t.fullName}</label>
      <input id="name" name="name" autocomplete="name" required maxlength="200" value=${props.name ?? ""} />
      <label for="email">${t.email}</label>
      <input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value=${props.email ?? ""} />
      <label for="password">${t.password} <span class="muted">${t.passwordHint(10)}</span></label>
      <input id="password" name="password" type="password" autocomplete="new-password" required minlength="10" maxlength="200" />
      <button type="submit" class="button">${t.createAccountButton}</button>
    </form>
    <p>${t.haveAccount} <a href=${`/account/sign-in?next=${encodeURIComponent(props.next)}`}>${t.signIn}</a></p>
  </section>`;
}

export interface OrderRow {
  id: string;
  status: string;
  createdAt: Date;
  totalMinor: number;
  items: number;
}

export function AccountBody(props: { ctx: PageCtx; name: string; email: string; orders: OrderRow[] }): VNode {
  const { ctx, orders } = props;
  const { t } = ctx.loc;
  return html`<h1>${t.yourAccount}</h1>
    <section class="panel">
      <p>${t.signedInAs} <strong>${props.name}</strong> (${props.email}).</p>
      <form method="post" action="/account/sign-out">
        <${Csrf} ctx=${ctx} />
        <button type="submit" class="secondary">${t.signOut}</button>
      </form>
    </section>
    <section aria-labelledby="history">
      <h2 id="history">${t.orderHistory}</h2>
      ${
        orders.length
          ? html`<table class="lines">
            <caption class="sr">${t.ordersCaption}</caption>
            <thead><tr><th scope="col">${t.order}</th><th scope="col">${t.date}</th><th scope="col">${t.status}</th><th scope="col">${t.items}</th><th scope="col">${t.total}</th></tr></thead>
            <tbody>${orders.map(
              (o) => html`<tr>
                <th scope="row"><a class="mono" href=${`/orders/${encodeURIComponent(o.id)}`}>${o.id.slice(0, 12)}…</a></th>
                <td data-label=${t.date}>${ctx.loc.date(o.createdAt)}</td>
                <td data-label=${t.status}>${t.orderStatus[o.status] ?? o.status}</td>
                <td data-label=${t.items}>${o.items}</td>
                <td data-label=${t.total}>${ctx.loc.money(o.totalMinor)}</td>
              </tr>`,
            )}</tbody>
          </table>`
          : html`<p>${t.noOrders}</p>`
      }
    </section>`;
}
