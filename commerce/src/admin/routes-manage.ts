import type { FastifyInstance, FastifyRequest } from "fastify";
import { GRANTABLE } from "../auth/scopes.ts";
import { ApiError } from "./api.ts";
import { type AdminCtx, type Form, field, fields, pageCtx, sendPage } from "./context.ts";
import {
  type Credential,
  CredentialsPage,
  type Delivery,
  DeliveryPage,
  type Endpoint,
  SettingsPage,
  WebhooksPage,
} from "./views/manage.ts";

// API keys and OAuth clients, webhook deliveries and endpoints (through the API), and the
// read-only settings (the configuration this process was started with, secrets left out).

type Kind = "api-keys" | "oauth-clients";
const isKind = (k: string): k is Kind => k === "api-keys" || k === "oauth-clients";

export function manageRoutes(app: FastifyInstance, c: AdminCtx): void {
  const credentials = async (
    req: FastifyRequest,
    reply: Parameters<typeof pageCtx>[2],
    extra: { secret?: { label: string; value: string; id?: string }; error?: string } = {},
  ) => {
    const [keys, clients] = await Promise.all([
      c.api.get<{ data: Credential[] }>("/api-keys"),
      c.api.get<{ data: Credential[] }>("/oauth-clients"),
    ]);
    return CredentialsPage({
      ctx: pageCtx(c, req, reply),
      keys: keys.data,
      clients: clients.data,
      scopes: GRANTABLE.filter((s) => s !== "*"),
      ...extra,
    });
  };
  app.get("/admin/credentials", async (req, reply) => sendPage(reply, await credentials(req, reply)));
  app.post(
    "/admin/credentials/:kind",
    async (req: FastifyRequest<{ Params: { kind: string }; Body: Form }>, reply) => {
      const { kind } = req.params;
      if (!isKind(kind)) return reply.callNotFound();
      try {
        const r = await c.api.call<{ id: string; key?: string; clientSecret?: string }>("POST", `/${kind}`, {
          name: field(req.body, "name"),
          scopes: fields(req.body, "scopes"),
        });
        const secret =
          kind === "api-keys"
            ? { label: c.loc.t.credentials.newApiKey, value: r.key ?? "" }
            : { label: c.loc.t.credentials.newClientSecret, value: r.clientSecret ?? "", id: r.id };
        // The secret is in this answer only (no redirect: it must not land in a URL or history).
        return sendPage(reply, await credentials(req, reply, { secret }), 201);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500) throw err;
        const error = err.problem.errors?.some((e) => e.pointer.startsWith("#/scopes"))
          ? c.loc.t.credentials.chooseScope
          : err.message;
        return sendPage(reply, await credentials(req, reply, { error }), 422);
      }
    },
  );
  app.post(
    "/admin/credentials/:kind/:id/revoke",
    async (req: FastifyRequest<{ Params: { kind: string; id: string } }>, reply) => {
      const { kind, id } = req.params;
      if (!isKind(kind)) return reply.callNotFound();
      await c.api.call("DELETE", `/${kind}/${encodeURIComponent(id)}`);
      return reply.redirect("/admin/credentials", 303);
    },
  );

  app.get("/admin/webhooks", async (req, reply) => {
    const q = req.query as { status?: string; cursor?: string; ok?: string };
    const status = ["pending", "succeeded", "failed", "cancelled"].includes(q.status ?? "")
      ? (q.status as string)
      : "";
    const [d, e] = await Promise.all([
      c.api.get<{ data: Delivery[]; nextCursor: string | null }>("/webhook-deliveries", {
        status,
        cursor: q.cursor,
        limit: 25,
        sort: "-createdAt",
      }),
      c.api.get<{ data: Endpoint[] }>("/webhook-endpoints"),
    ]);
    const ok = q.ok === "enabled" ? c.loc.t.webhooks.endpointEnabled : undefined;
    const page = WebhooksPage({
      ctx: pageCtx(c, req, reply),
      deliveries: d.data,
      endpoints: e.data,
      status,
      cursor: q.cursor ?? "",
      next: d.nextCursor,
      ok,
    });
    return sendPage(reply, page);
  });
  app.get("/admin/webhooks/:id", async (req: FastifyRequest<{ Params: { id: string } }>, reply) => {
    const d = await c.api.call<Delivery>("GET", `/webhook-deliveries/${encodeURIComponent(req.params.id)}`);
    const ok = (req.query as { ok?: string }).ok === "replay" ? c.loc.t.webhooks.replayQueued : undefined;
    return sendPage(reply, DeliveryPage({ ctx: pageCtx(c, req, reply), d, ok }));
  });
  app.post("/admin/webhooks/:id/replay", async (req: FastifyRequest<{ Params: { id: string } }>, reply) => {
    const d = await c.api.call<Delivery>(
      "POST",
      `/webhook-deliveries/${encodeURIComponent(req.params.id)}/replay`,
    );
    return reply.redirect(`/admin/webhooks/${d.id}?ok=replay`, 303);
  });
  app.post(
    "/admin/webhooks/endpoints/:name/enable",
    async (req: FastifyRequest<{ Params: { name: string } }>, reply) => {
      await c.api.call("POST", `/webhook-endpoints/${encodeURIComponent(req.params.name)}/enable`);
      return reply.redirect("/admin/webhooks?ok=enabled", 303);
    },
  );

  app.get("/admin/settings", async (req, reply) => {
    const cfg = c.config;
    const ts = c.loc.t.settings;
    // Titles and sources in the admin's language; the values keep the spec's field names.
    const groups: [string, string, unknown][] = [
      [ts.plan, "spec.plan", { plan: cfg.PLATFORM_PLAN, maxProducts: cfg.PLAN_MAX_PRODUCTS }],
      [ts.addresses, "spec.domains", { store: cfg.PLATFORM_URL, admin: cfg.ADMIN_URL, api: cfg.API_URL }],
      [ts.store, "spec.store", cfg.CONFIG_STORE],
      [ts.localization, "spec.localization", cfg.CONFIG_LOCALIZATION],
      [ts.email, ts.emailSource, cfg.CONFIG_EMAIL],
      [ts.gateways, ts.gatewaysSource, cfg.CONFIG_PAYMENT_GATEWAYS],
      [ts.shipping, "spec.shippingMethods", cfg.CONFIG_SHIPPING_METHODS],
      [ts.webhooks, ts.webhooksSource, cfg.CONFIG_WEBHOOKS],
      [
        ts.adminAccess,
        "spec.security.adminAllowedCIDRs",
        {
          allowedCIDRs: cfg.COMMERCE_ADMIN_ALLOWED_CIDRS.length
            ? cfg.COMMERCE_ADMIN_ALLOWED_CIDRS
            : ts.everyone,
        },
      ],
    ];
    return sendPage(reply, SettingsPage({ ctx: pageCtx(c, req, reply), groups }));
  });
}
