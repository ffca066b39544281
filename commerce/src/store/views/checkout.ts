import type { ShippingAddress } from "../../db/schema.ts";
import { addressLines } from "../../orders/address.ts";
import type { CartLine } from "../cart.ts";
import { taxNote } from "../locale.ts";
import type { Quote, ShippingOption } from "../quote.ts";
import { html, type VNode } from "./html.ts";
import { Alert, Csrf, type PageCtx } from "./layout.ts";

// Cart, checkout and the order confirmation.

function Totals({ ctx, q }: { ctx: PageCtx; q: Quote & { shippingLabel?: string } }): VNode {
  const m = ctx.loc.money;
  return html`<dl class="totals">
    <dt>Subtotal</dt><dd>${m(q.subtotalMinor)}</dd>
    ${q.shippingMinor !== undefined && html`<dt>Shipping${q.shippingLabel ? ` (${q.shippingLabel})` : ""}</dt><dd>${m(q.shippingMinor)}</dd>`}
    ${
      q.taxMinor > 0 &&
      html`<dt>${ctx.loc.pricesIncludeTax ? "Included tax" : "Tax"} (${ctx.loc.taxRatePercent} %)</dt><dd>${m(q.taxMinor)}</dd>`
    }
    <dt class="total">Total</dt><dd class="total">${m(q.totalMinor)}</dd>
  </dl>`;
}

export function CartBody({ ctx, lines, q }: { ctx: PageCtx; lines: CartLine[]; q: Quote }): VNode {
  if (!lines.length)
    return html`<h1>Your cart</h1><p>Your cart is empty.</p><p><a class="button" href="/products">Browse products</a></p>`;
  const m = ctx.loc.money;
  return html`<h1>Your cart</h1>
    <table class="lines">
      <caption class="sr">Items in your cart</caption>
      <thead><tr><th scope="col">Item</th><th scope="col">Price</th><th scope="col">Quantity</th><th scope="col">Total</th></tr></thead>
      <tbody>
        ${lines.map(
          (l) => html`<tr>
            <th scope="row"><a href=${`/products/${encodeURIComponent(l.productId)}`}>${l.title}</a>
              <span class="muted">${l.variantTitle === l.sku ? l.sku : `${l.variantTitle} · ${l.sku}`}</span>
              ${l.quantity > l.available && html`<span class="warn">Only ${Math.max(l.available, 0)} available</span>`}</th>
            <td data-label="Price">${m(l.unitPriceMinor)}</td>
            <td data-label="Quantity">
              <form method="post" action="/cart/update" class="qty">
                <${Csrf} ctx=${ctx} />
                <input type="hidden" name="variantId" value=${l.variantId} />
                <label class="sr" for=${`q-${l.variantId}`}>Quantity of ${l.title} ${l.variantTitle}</label>
                <input id=${`q-${l.variantId}`} name="quantity" type="number" min="0" max="100" value=${l.quantity} inputmode="numeric" />
                <button type="submit" class="secondary">Update</button>
                <button type="submit" name="quantity" value="0" class="link">Remove</button>
              </form>
            </td>
            <td data-label="Total">${m(l.unitPriceMinor * l.quantity)}</td>
          </tr>`,
        )}
      </tbody>
    </table>
    <${Totals} ctx=${ctx} q=${q} />
    ${taxNote(ctx.loc) && html`<p class="muted">Prices ${taxNote(ctx.loc)}. Shipping is chosen at checkout.</p>`}
    <p class="actions"><a class="button" href="/checkout">Checkout</a> <a href="/products">Continue shopping</a></p>`;
}

export interface CheckoutForm {
  name?: string;
  email?: string;
  country?: string;
  line1?: string;
  line2?: string;
  city?: string;
  region?: string;
  postalCode?: string;
  shippingMethod?: string;
  gateway?: string;
}

export function CheckoutBody(props: {
  ctx: PageCtx;
  lines: CartLine[];
  q: Quote;
  options: ShippingOption[];
  countries: string[] | undefined;
  gateways: { name: string; type: string; mode: string }[];
  form: CheckoutForm;
  signedIn?: { name: string; email: string };
  shippingLabel?: string;
  error?: string;
}): VNode {
  const { ctx, q, options, gateways, form, signedIn } = props;
  const m = ctx.loc.money;
  return html`<h1>Checkout</h1>
    <${Alert} message=${props.error} />
    <div class="checkout">
      <form method="post" action="/checkout" class="stack" novalidate=${false}>
        <${Csrf} ctx=${ctx} />
        <fieldset>
          <legend>Contact</legend>
          ${
            signedIn
              ? html`<p>Ordering as <strong>${signedIn.name}</strong> (${signedIn.email}).</p>`
              : html`<p class="muted">Checking out as a guest. <a href="/account/sign-in?next=/checkout">Sign in</a> to see the order in your account.</p>
                <label for="name">Full name</label>
                <input id="name" name="name" autocomplete="name" required maxlength="200" value=${form.name ?? ""} />
                <label for="email">Email (for the confirmation)</label>
                <input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value=${form.email ?? ""} />`
          }
        </fieldset>
        <fieldset>
          <legend>Shipping</legend>
          ${
            props.countries
              ? html`<label for="country">Country</label>
                <select id="country" name="country" autocomplete="country" required>
                  ${props.countries.map((c) => html`<option value=${c} selected=${form.country === c}>${ctx.loc.country(c)}</option>`)}
                </select>`
              : html`<label for="country">Country code (two letters, e.g. DE)</label>
                <input id="country" name="country" autocomplete="country" required pattern="[A-Za-z]{2}" maxlength="2" value=${form.country ?? ""} />`
          }
          <label for="line1">Street address</label>
          <input id="line1" name="line1" autocomplete="address-line1" required maxlength="200" value=${form.line1 ?? ""} />
          <label for="line2">Apartment, suite, c/o (optional)</label>
          <input id="line2" name="line2" autocomplete="address-line2" maxlength="200" value=${form.line2 ?? ""} />
          <label for="postalCode">Postal code</label>
          <input id="postalCode" name="postalCode" autocomplete="postal-code" required maxlength="20" value=${form.postalCode ?? ""} />
          <label for="city">City</label>
          <input id="city" name="city" autocomplete="address-level2" required maxlength="100" value=${form.city ?? ""} />
          <label for="region">State or region (optional)</label>
          <input id="region" name="region" autocomplete="address-level1" maxlength="100" value=${form.region ?? ""} />
          ${!options.length && html`<p class="alert">No shipping method is set up for this store yet, so orders cannot be placed.</p>`}
          ${options.map(
            (o, i) => html`<label class="variant">
              <input type="radio" name="shippingMethod" value=${o.name} required checked=${form.shippingMethod ? form.shippingMethod === o.name : i === 0} />
              <span class="vt">${o.name} <span class="muted">(${o.carrier}${o.zones.length ? ` · ${o.zones.map(ctx.loc.country).join(", ")}` : ""})</span></span>
              <span class="price">${o.rateText}</span>
            </label>`,
          )}
          ${options.length > 1 && html`<button type="submit" name="intent" value="quote" class="secondary" formnovalidate>Update total</button>`}
        </fieldset>
        <fieldset>
          <legend>Payment</legend>
          ${!gateways.length && html`<p class="alert">No payment method is set up for this store yet, so orders cannot be placed.</p>`}
          ${gateways.map(
            (g, i) => html`<label class="variant">
              <input type="radio" name="gateway" value=${g.name} required checked=${form.gateway ? form.gateway === g.name : i === 0} />
              <span class="vt">${g.name} <span class="muted">(${g.type})</span></span>
              ${g.mode === "Test" && html`<span class="badge">Test mode</span>`}
            </label>`,
          )}
          ${
            gateways.some((g) => g.mode === "Test") &&
            html`<p class="muted">Test mode: no real money moves. Choose the outcome to simulate.</p>
            <label for="simulate">Simulated outcome</label>
            <select id="simulate" name="simulate"><option value="succeed">Payment succeeds</option><option value="decline">Card declined</option></select>`
          }
        </fieldset>
        <button type="submit" class="button">Place order and pay</button>
      </form>
      <aside aria-labelledby="summary" class="panel">
        <h2 id="summary">Order summary</h2>
        <ul class="summary">${props.lines.map((l) => html`<li><span>${l.quantity} × ${l.title} (${l.variantTitle})</span><span>${m(l.unitPriceMinor * l.quantity)}</span></li>`)}</ul>
        <${Totals} ctx=${ctx} q=${{ ...q, shippingLabel: props.shippingLabel }} />
        <p class="muted">Shown with ${props.shippingLabel ?? "the first shipping method"} (“Update total” after choosing another); the confirmation shows what was charged.</p>
      </aside>
    </div>`;
}

export interface OrderView {
  id: string;
  status: string;
  createdAt: Date;
  subtotalMinor: number;
  taxMinor: number;
  shippingMinor: number;
  totalMinor: number;
  shippingMethod: string | null;
  shippingAddress: ShippingAddress | null;
  lines: { title: string; sku: string; quantity: number; totalMinor: number }[];
}

export function OrderBody(props: {
  ctx: PageCtx;
  o: OrderView;
  email?: string;
  payError?: string;
  gateways: { name: string; mode: string }[];
}): VNode {
  const { ctx, o } = props;
  const paid = o.status !== "pending";
  return html`<section class="panel">
    <h1>${paid ? "Thank you, your order is confirmed" : "Your order awaits payment"}</h1>
    <${Alert} message=${props.payError} />
    <p>Order <strong class="mono">${o.id}</strong>, placed on ${ctx.loc.date(o.createdAt)} · status <strong>${o.status}</strong>.</p>
    ${paid && props.email && html`<p>A confirmation has been sent to ${props.email}.</p>`}
    <ul class="summary">${o.lines.map((l) => html`<li><span>${l.quantity} × ${l.title}</span><span>${ctx.loc.money(l.totalMinor)}</span></li>`)}</ul>
    <${Totals} ctx=${ctx} q=${o} />
    ${o.shippingMethod && html`<p>Shipping: ${o.shippingMethod}</p>`}
    ${
      o.shippingAddress &&
      html`<h2>Ship to</h2>
      <address data-shipping-address>${addressLines(o.shippingAddress, ctx.loc.country).map((l, i) => html`${i ? html`<br />` : ""}${l}`)}</address>`
    }
    ${
      !paid &&
      o.status === "pending" &&
      html`<form method="post" action=${`/orders/${encodeURIComponent(o.id)}/pay`} class="stack">
        <${Csrf} ctx=${ctx} />
        <label for="gateway">Pay with</label>
        <select id="gateway" name="gateway">${props.gateways.map((g) => html`<option value=${g.name}>${g.name}${g.mode === "Test" ? " (Test mode)" : ""}</option>`)}</select>
        <label for="simulate">Simulated outcome</label>
        <select id="simulate" name="simulate"><option value="succeed">Payment succeeds</option><option value="decline">Card declined</option></select>
        <button type="submit" class="button">Pay now</button>
      </form>`
    }
    <p><a href="/products">Continue shopping</a></p>
  </section>`;
}
