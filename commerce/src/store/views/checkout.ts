import type { ShippingAddress } from "../../db/schema.ts";
import { addressLines } from "../../orders/address.ts";
import type { CartLine } from "../cart.ts";
import { taxNote, taxRate } from "../locale.ts";
import type { Quote, ShippingOption } from "../quote.ts";
import { html, type VNode } from "./html.ts";
import { Alert, Csrf, type PageCtx } from "./layout.ts";

// Cart, checkout and the order confirmation.

function Totals({ ctx, q }: { ctx: PageCtx; q: Quote & { shippingLabel?: string } }): VNode {
  const m = ctx.loc.money;
  const { t } = ctx.loc;
  return html`<dl class="totals">
    <dt>${t.subtotal}</dt><dd>${m(q.subtotalMinor)}</dd>
    ${q.shippingMinor !== undefined && html`<dt>${t.shipping}${q.shippingLabel ? ` (${q.shippingLabel})` : ""}</dt><dd>${m(q.shippingMinor)}</dd>`}
    ${
      q.taxMinor > 0 &&
      html`<dt>${ctx.loc.pricesIncludeTax ? t.includedTax : t.tax} (${taxRate(ctx.loc)} %)</dt><dd>${m(q.taxMinor)}</dd>`
    }
    <dt class="total">${t.total}</dt><dd class="total">${m(q.totalMinor)}</dd>
  </dl>`;
}

export function CartBody({ ctx, lines, q }: { ctx: PageCtx; lines: CartLine[]; q: Quote }): VNode {
  const { t } = ctx.loc;
  if (!lines.length)
    return html`<h1>${t.yourCart}</h1><p>${t.cartEmpty}</p><p><a class="button" href="/products">${t.browseProducts}</a></p>`;
  const m = ctx.loc.money;
  return html`<h1>${t.yourCart}</h1>
    <table class="lines">
      <caption class="sr">${t.cartCaption}</caption>
      <thead><tr><th scope="col">${t.item}</th><th scope="col">${t.price}</th><th scope="col">${t.quantity}</th><th scope="col">${t.total}</th></tr></thead>
      <tbody>
        ${lines.map(
          (l) => html`<tr>
            <th scope="row"><a href=${`/products/${encodeURIComponent(l.productId)}`}>${l.title}</a>
              <span class="muted">${l.variantTitle === l.sku ? l.sku : `${l.variantTitle} · ${l.sku}`}</span>
              ${l.quantity > l.available && html`<span class="warn">${t.onlyAvailable(Math.max(l.available, 0))}</span>`}</th>
            <td data-label=${t.price}>${m(l.unitPriceMinor)}</td>
            <td data-label=${t.quantity}>
              <form method="post" action="/cart/update" class="qty">
                <${Csrf} ctx=${ctx} />
                <input type="hidden" name="variantId" value=${l.variantId} />
                <label class="sr" for=${`q-${l.variantId}`}>${t.quantityOf(`${l.title} ${l.variantTitle}`)}</label>
                <input id=${`q-${l.variantId}`} name="quantity" type="number" min="0" max="100" value=${l.quantity} inputmode="numeric" />
                <button type="submit" class="secondary">${t.update}</button>
                <button type="submit" name="quantity" value="0" class="link">${t.remove}</button>
              </form>
            </td>
            <td data-label=${t.total}>${m(l.unitPriceMinor * l.quantity)}</td>
          </tr>`,
        )}
      </tbody>
    </table>
    <${Totals} ctx=${ctx} q=${q} />
    ${taxNote(ctx.loc) && html`<p class="muted">${taxNote(ctx.loc)} ${t.shippingAtCheckout}</p>`}
    <p class="actions"><a class="button" href="/checkout">${t.checkout}</a> <a href="/products">${t.continueShopping}</a></p>`;
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
  const { t } = ctx.loc;
  return html`<h1>${t.checkout}</h1>
    <${Alert} message=${props.error} />
    <div class="checkout">
      <form method="post" action="/checkout" class="stack" novalidate=${false}>
        <${Csrf} ctx=${ctx} />
        <fieldset>
          <legend>${t.contact}</legend>
          ${
            signedIn
              ? html`<p>${t.orderingAs} <strong>${signedIn.name}</strong> (${signedIn.email}).</p>`
              : html`<p class="muted">${t.guestPrefix} <a href="/account/sign-in?next=/checkout">${t.guestSignIn}</a> ${t.guestSuffix}</p>
                <label for="name">${t.fullName}</label>
                <input id="name" name="name" autocomplete="name" required maxlength="200" value=${form.name ?? ""} />
                <label for="email">${t.emailForConfirmation}</label>
                <input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value=${form.email ?? ""} />`
          }
        </fieldset>
        <fieldset>
          <legend>${t.shipping}</legend>
          ${
            props.countries
              ? html`<label for="country">${t.country}</label>
                <select id="country" name="country" autocomplete="country" required>
                  ${props.countries.map((c) => html`<option value=${c} selected=${form.country === c}>${ctx.loc.country(c)}</option>`)}
                </select>`
              : html`<label for="country">${t.countryCode}</label>
                <input id="country" name="country" autocomplete="country" required pattern="[A-Za-z]{2}" maxlength="2" value=${form.country ?? ""} />`
          }
          <label for="line1">${t.line1}</label>
          <input id="line1" name="line1" autocomplete="address-line1" required maxlength="200" value=${form.line1 ?? ""} />
          <label for="line2">${t.line2}</label>
          <input id="line2" name="line2" autocomplete="address-line2" maxlength="200" value=${form.line2 ?? ""} />
          <label for="postalCode">${t.postalCode}</label>
          <input id="postalCode" name="postalCode" autocomplete="postal-code" required maxlength="20" value=${form.postalCode ?? ""} />
          <label for="city">${t.city}</label>
          <input id="city" name="city" autocomplete="address-level2" required maxlength="100" value=${form.city ?? ""} />
          <label for="region">${t.region}</label>
          <input id="region" name="region" autocomplete="address-level1" maxlength="100" value=${form.region ?? ""} />
          ${!options.length && html`<p class="alert">${t.noShipping}</p>`}
          ${options.map(
            (o, i) => html`<label class="variant">
              <input type="radio" name="shippingMethod" value=${o.name} required checked=${form.shippingMethod ? form.shippingMethod === o.name : i === 0} />
              <span class="vt">${o.name} <span class="muted">(${o.carrier}${o.zones.length ? ` · ${o.zones.map(ctx.loc.country).join(", ")}` : ""})</span></span>
              <span class="price">${o.rateText}</span>
            </label>`,
          )}
          ${options.length > 1 && html`<button type="submit" name="intent" value="quote" class="secondary" formnovalidate>${t.updateTotal}</button>`}
        </fieldset>
        <fieldset>
          <legend>${t.payment}</legend>
          ${!gateways.length && html`<p class="alert">${t.noPayment}</p>`}
          ${gateways.map(
            (g, i) => html`<label class="variant">
              <input type="radio" name="gateway" value=${g.name} required checked=${form.gateway ? form.gateway === g.name : i === 0} />
              <span class="vt">${g.name} <span class="muted">(${g.type})</span></span>
              ${g.mode === "Test" && html`<span class="badge">${t.testMode}</span>`}
            </label>`,
          )}
          ${
            gateways.some((g) => g.mode === "Test") &&
            html`<p class="muted">${t.testModeNote}</p>
            <label for="simulate">${t.simulatedOutcome}</label>
            <select id="simulate" name="simulate"><option value="succeed">${t.paymentSucceeds}</option><option value="decline">${t.cardDeclined}</option></select>`
          }
        </fieldset>
        <button type="submit" class="button">${t.placeOrder}</button>
      </form>
      <aside aria-labelledby="summary" class="panel">
        <h2 id="summary">${t.orderSummary}</h2>
        <ul class="summary">${props.lines.map((l) => html`<li><span>${l.quantity} × ${l.title} (${l.variantTitle})</span><span>${m(l.unitPriceMinor * l.quantity)}</span></li>`)}</ul>
        <${Totals} ctx=${ctx} q=${{ ...q, shippingLabel: props.shippingLabel }} />
        <p class="muted">${t.shownWith(props.shippingLabel)}</p>
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
  const { t } = ctx.loc;
  return html`<section class="panel">
    <h1>${paid ? t.thankYou : t.awaitsPayment}</h1>
    <${Alert} message=${props.payError} />
    <p>${t.order} <strong class="mono">${o.id}</strong>, ${t.placedOn(ctx.loc.date(o.createdAt))} · ${t.status} <strong>${t.orderStatus[o.status] ?? o.status}</strong>.</p>
    ${paid && props.email && html`<p>${t.confirmationSent(props.email)}</p>`}
    <ul class="summary">${o.lines.map((l) => html`<li><span>${l.quantity} × ${l.title}</span><span>${ctx.loc.money(l.totalMinor)}</span></li>`)}</ul>
    <${Totals} ctx=${ctx} q=${o} />
    ${o.shippingMethod && html`<p>${t.shippingBy(o.shippingMethod)}</p>`}
    ${
      o.shippingAddress &&
      html`<h2>${t.shipTo}</h2>
      <address data-shipping-address>${addressLines(o.shippingAddress, ctx.loc.country).map((l, i) => html`${i ? html`<br />` : ""}${l}`)}</address>`
    }
    ${
      !paid &&
      o.status === "pending" &&
      html`<form method="post" action=${`/orders/${encodeURIComponent(o.id)}/pay`} class="stack">
        <${Csrf} ctx=${ctx} />
        <label for="gateway">${t.payWith}</label>
        <select id="gateway" name="gateway">${props.gateways.map((g) => html`<option value=${g.name}>${g.name}${g.mode === "Test" ? ` (${t.testMode})` : ""}</option>`)}</select>
        <label for="simulate">${t.simulatedOutcome}</label>
        <select id="simulate" name="simulate"><option value="succeed">${t.paymentSucceeds}</option><option value="decline">${t.cardDeclined}</option></select>
        <button type="submit" class="button">${t.payNow}</button>
      </form>`
    }
    <p><a href="/products">${t.continueShopping}</a></p>
  </section>`;
}
