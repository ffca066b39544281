import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { DEFAULT_STORE } from "../db/seed.ts";
import { Problem } from "../http/problem.ts";
import { shippingAddressSchema } from "../orders/address.ts";
import { payOrder } from "../orders/pay.ts";
import { placeOrder } from "../orders/place.ts";
import { shippingOf } from "../orders/pricing.ts";
import { getOrder, type OrderView } from "../orders/read.ts";
import { addToCart, type CartLine, cartLines, clearCart, setQuantity } from "./cart.ts";
import type { Store } from "./context.ts";
import { checkoutCustomer } from "./customers.ts";
import { formErrors, orderRefusal } from "./locale.ts";
import { quote, shippingCountries, shippingOptions } from "./quote.ts";
import { ensureSession } from "./session.ts";
import { CartBody, CheckoutBody, type CheckoutForm, OrderBody } from "./views/checkout.ts";
import { ErrorBody } from "./views/layout.ts";

// Cart, checkout and the order page. An order is placed with orders/place.ts and paid with
// orders/pay.ts, exactly as POST /api/v1/orders and …/payments do: the same rows, the same
// OrderCreated event and confirmation mail in the order's transaction.

const lineForm = z.object({
  variantId: z.string().min(1).max(100),
  quantity: z.coerce.number().int().min(0).max(100),
});
// Messages to shoppers come from the catalog by field (formErrors).
const checkoutForm = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  email: z.email().max(254).optional(),
  country: z
    .string()
    .trim()
    .regex(/^[A-Za-z]{2}$/)
    .transform((c) => c.toUpperCase()),
  shippingMethod: z.string().max(63),
  gateway: z.string().max(63),
  simulate: z.enum(["succeed", "decline"]).default("succeed"),
  line1: shippingAddressSchema.shape.line1,
  line2: shippingAddressSchema.shape.line2,
  city: shippingAddressSchema.shape.city,
  region: shippingAddressSchema.shape.region,
  postalCode: shippingAddressSchema.shape.postalCode,
});
const payForm = checkoutForm.pick({ gateway: true, simulate: true });

const subtotalOf = (lines: CartLine[]) => lines.reduce((s, l) => s + l.unitPriceMinor * l.quantity, 0);

export async function cartRoutes(app: FastifyInstance, store: Store): Promise<void> {
  const { db, config, loc } = store;
  const { t } = loc;
  // The store's pages run no script, so they cannot host Stripe's card form (Stripe.js): they
  // offer the simulator only; Stripe and bank transfers are paid through the API for now.
  const gateways = (config.CONFIG_PAYMENT_GATEWAYS ?? []).filter((g) => g.enabled && g.provider === "test");

  app.get("/cart", async (req, reply) => {
    const s = store.session(req);
    const lines = s ? await cartLines(db, s.id) : [];
    return store.page(req, reply, t.cart, (ctx) =>
      CartBody({ ctx, lines, q: quote(config, subtotalOf(lines)) }),
    );
  });

  app.post("/cart/add", async (req, reply) => {
    const f = lineForm.safeParse(req.body);
    if (!f.success || f.data.quantity < 1) return reply.redirect("/cart", 303);
    const s = await ensureSession(db, req, reply);
    if (!(await addToCart(db, s.id, f.data.variantId, f.data.quantity)))
      return reply.redirect("/products", 303);
    return reply.redirect("/cart", 303);
  });

  app.post("/cart/update", async (req, reply) => {
    const f = lineForm.safeParse(req.body);
    const s = store.session(req);
    if (f.success && s) await setQuantity(db, s.id, f.data.variantId, f.data.quantity);
    return reply.redirect("/cart", 303);
  });

  const checkoutPage = async (
    req: FastifyRequest,
    reply: FastifyReply,
    lines: CartLine[],
    form: CheckoutForm,
    error?: string,
  ) => {
    const s = store.session(req);
    const subtotal = subtotalOf(lines);
    const options = shippingOptions(config, loc, subtotal);
    const chosen = options.find((o) => o.name === form.shippingMethod) ?? options[0];
    let shipping: number | undefined;
    try {
      shipping = chosen
        ? shippingOf(config.CONFIG_SHIPPING_METHODS ?? [], chosen.name, undefined, subtotal, loc.currency)
        : undefined;
    } catch {
      shipping = undefined;
    }
    const signedIn = s?.customerId
      ? await db
          .selectFrom("customers")
          .select(["name", "email"])
          .where("id", "=", s.customerId)
          .executeTakeFirst()
      : undefined;
    return store.page(
      req,
      reply,
      t.checkout,
      (ctx) =>
        CheckoutBody({
          ctx,
          lines,
          q: quote(config, subtotal, shipping),
          options,
          countries: shippingCountries(options),
          gateways,
          form,
          signedIn,
          shippingLabel: shipping === undefined ? undefined : chosen?.name,
          error,
        }),
      { status: error ? 422 : 200 },
    );
  };

  app.get("/checkout", async (req, reply) => {
    const s = store.session(req);
    const lines = s ? await cartLines(db, s.id) : [];
    if (!lines.length) return reply.redirect("/cart", 303);
    return checkoutPage(req, reply, lines, {});
  });

  app.post("/checkout", async (req, reply) => {
    const s = store.session(req);
    const lines = s ? await cartLines(db, s.id) : [];
    if (!s || !lines.length) return reply.redirect("/cart", 303);
    const raw = (req.body ?? {}) as CheckoutForm & { intent?: string };
    // "Update total": the same page with the chosen shipping method priced, nothing placed.
    if (raw.intent === "quote") return checkoutPage(req, reply, lines, raw);
    const f = checkoutForm.safeParse(req.body);
    if (!f.success) return checkoutPage(req, reply, lines, raw, formErrors(t, f.error.issues));
    const b = f.data;
    try {
      const customerId = await checkoutCustomer(store, s, b);
      // The recipient is the guest who checks out, or the signed-in customer.
      const recipient = await db
        .selectFrom("customers")
        .select("name")
        .where("id", "=", customerId)
        .executeTakeFirstOrThrow();
      const { line1, line2, city, region, postalCode, country } = b;
      const placed = await placeOrder(store, {
        customerId,
        storeId: DEFAULT_STORE,
        lines: lines.map((l) => ({ variantId: l.variantId, quantity: l.quantity })),
        shippingMethod: b.shippingMethod,
        shippingAddress: { name: recipient.name, line1, line2, city, region, postalCode, country },
      });
      const id = (placed as OrderView).id; // no claim: always placed
      await db.updateTable("storeSessions").set({ lastOrderId: id }).where("id", "=", s.id).execute();
      await clearCart(db, s.id);
      const pay = await payOrder(store, id, { gateway: b.gateway, simulate: b.simulate });
      const where = `/orders/${encodeURIComponent(id)}`;
      return reply.redirect(pay.status === "succeeded" ? where : `${where}?payment=declined`, 303);
    } catch (err) {
      if (err instanceof Problem) return checkoutPage(req, reply, lines, raw, orderRefusal(loc, err, b));
      throw err;
    }
  });

  /** The order of `id` when this session placed it or its customer owns it. */
  const ownOrder = async (req: FastifyRequest, id: string) => {
    const s = store.session(req);
    if (!s || id.length > 100) return undefined;
    const o = await getOrder(db, id).catch(() => undefined);
    if (!o) return undefined;
    return s.lastOrderId === id || (s.customerId && o.customerId === s.customerId) ? o : undefined;
  };

  app.get<{ Params: { id: string } }>("/orders/:id", async (req, reply) => {
    const o = await ownOrder(req, req.params.id);
    if (!o) {
      const message = t.noSuchOrder;
      return store.page(req, reply, t.notFound, () => ErrorBody({ loc, status: 404, message }), {
        status: 404,
      });
    }
    const c = o.customerId
      ? await db.selectFrom("customers").select("email").where("id", "=", o.customerId).executeTakeFirst()
      : undefined;
    const declined = (req.query as { payment?: string }).payment === "declined";
    return store.page(req, reply, o.status === "pending" ? t.payment : t.orderConfirmed, (ctx) =>
      OrderBody({
        ctx,
        o,
        email: config.CONFIG_EMAIL?.smtp ? c?.email : undefined,
        payError: declined && o.status === "pending" ? t.paymentDeclined : undefined,
        gateways,
      }),
    );
  });

  app.post<{ Params: { id: string } }>("/orders/:id/pay", async (req, reply) => {
    const o = await ownOrder(req, req.params.id);
    const f = payForm.safeParse(req.body);
    if (!o || !f.success) return reply.redirect("/cart", 303);
    const where = `/orders/${encodeURIComponent(o.id)}`;
    try {
      const p = await payOrder(store, o.id, f.data);
      return reply.redirect(p.status === "succeeded" ? where : `${where}?payment=declined`, 303);
    } catch (err) {
      if (err instanceof Problem) return reply.redirect(where, 303);
      throw err;
    }
  });
}
