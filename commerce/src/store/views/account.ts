import { html, type VNode } from "./html.ts";
import { Alert, Csrf, type PageCtx } from "./layout.ts";

// Customer sign-in, registration and the account page with the order history.

export function SignInBody(props: { ctx: PageCtx; next: string; email?: string; error?: string }): VNode {
  const { ctx } = props;
  return html`<section class="panel narrow">
    <h1>Sign in</h1>
    <${Alert} message=${props.error} />
    <form method="post" action="/account/sign-in" class="stack">
      <${Csrf} ctx=${ctx} />
      <input type="hidden" name="next" value=${props.next} />
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value=${props.email ?? ""} />
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="200" />
      <button type="submit" class="button">Sign in</button>
    </form>
    <p>New here? <a href=${`/account/register?next=${encodeURIComponent(props.next)}`}>Create an account</a></p>
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
  return html`<section class="panel narrow">
    <h1>Create an account</h1>
    <${Alert} message=${props.error} />
    <form method="post" action="/account/register" class="stack">
      <${Csrf} ctx=${ctx} />
      <input type="hidden" name="next" value=${props.next} />
      <label for="name">Full name</label>
      <input id="name" name="name" autocomplete="name" required maxlength="200" value=${props.name ?? ""} />
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value=${props.email ?? ""} />
      <label for="password">Password <span class="muted">(at least 10 characters)</span></label>
      <input id="password" name="password" type="password" autocomplete="new-password" required minlength="10" maxlength="200" />
      <button type="submit" class="button">Create account</button>
    </form>
    <p>Already have an account? <a href=${`/account/sign-in?next=${encodeURIComponent(props.next)}`}>Sign in</a></p>
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
  return html`<h1>Your account</h1>
    <section class="panel">
      <p>Signed in as <strong>${props.name}</strong> (${props.email}).</p>
      <form method="post" action="/account/sign-out">
        <${Csrf} ctx=${ctx} />
        <button type="submit" class="secondary">Sign out</button>
      </form>
    </section>
    <section aria-labelledby="history">
      <h2 id="history">Order history</h2>
      ${
        orders.length
          ? html`<table class="lines">
            <caption class="sr">Your orders, newest first</caption>
            <thead><tr><th scope="col">Order</th><th scope="col">Date</th><th scope="col">Status</th><th scope="col">Items</th><th scope="col">Total</th></tr></thead>
            <tbody>${orders.map(
              (o) => html`<tr>
                <th scope="row"><a class="mono" href=${`/orders/${encodeURIComponent(o.id)}`}>${o.id.slice(0, 12)}…</a></th>
                <td data-label="Date">${ctx.loc.date(o.createdAt)}</td>
                <td data-label="Status">${o.status}</td>
                <td data-label="Items">${o.items}</td>
                <td data-label="Total">${ctx.loc.money(o.totalMinor)}</td>
              </tr>`,
            )}</tbody>
          </table>`
          : html`<p>No orders yet.</p>`
      }
    </section>`;
}
