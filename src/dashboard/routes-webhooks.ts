import { randomBytes } from "node:crypto";
import { LABEL_PLATFORM } from "../api/v1alpha1/labels.ts";
import { type ScalePlatform, WEBHOOK_EVENTS } from "../api/v1alpha1/scaleplatform.ts";
import { ApiError } from "../runtime/errors.ts";
import type { Ctx, FastifyInstance, FastifyReply } from "./context.ts";
import { platformPage } from "./platform-page.ts";
import { type Session, viewerApi } from "./sessions.ts";
import { PLATFORMS_PATH, platformHref } from "./views/layout.ts";

// A platform's webhooks on its page, as the viewer. Adding one makes its signing secret first: a
// Secret `<platform>-webhook-<name>` (owned by the platform, so it goes with it) holding a
// Standard Webhooks key (`whsec_` + 32 random bytes, base64), which the commerce service signs
// every delivery with; the webhook names it in signingSecretRef. The secret is shown once, on the
// answer to the post (never in a URL, a redirect or a log); Rotate writes a new key into the same
// Secret and shows it once (the operator rolls the app when a referenced Secret changes). Events
// are edited, and a webhook removed, by a merge patch of the whole list with the resourceVersion
// read, so a concurrent change is refused (409) rather than lost; removing deletes the Secret the
// dashboard made for it.

type Params = { ns: string; name: string; hook: string };
const KEY = "signing-key";
const MADE_BY = "cronscale.io/made-by";

const str = (v: unknown) => (typeof v === "string" ? v.trim() : "");
type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
type Hook = NonNullable<ScalePlatform["spec"]["webhooks"]>[number];
/** A webhook as written: `enabled` left out takes the API's default (true). */
type HookInput = Omit<Hook, "enabled"> & { enabled?: boolean };
const isEvent = (e: string): e is WebhookEvent => (WEBHOOK_EVENTS as readonly string[]).includes(e);
/** The form's events; one the API does not know is refused naming it, as the API server would. */
function eventsOf(body: Record<string, unknown>): WebhookEvent[] {
  const asked = (Array.isArray(body.events) ? body.events : body.events ? [body.events] : []).map(str);
  const unknown = asked.find((e) => !isEvent(e));
  if (unknown !== undefined)
    throw new ApiError(
      422,
      "Invalid",
      `spec.webhooks.events: Unsupported value: "${unknown}": supported values: ${WEBHOOK_EVENTS.join(", ")}`,
    );
  return asked.filter(isEvent);
}
const newKey = () => `whsec_${randomBytes(32).toString("base64")}`;
const secretName = (platform: string, hook: string) => `${platform}-webhook-${hook}`;

/** The routes of webhooks: add (with its secret), events, rotate, remove. */
export function registerWebhookRoutes(app: FastifyInstance, ctx: Ctx): void {
  const route = `${PLATFORMS_PATH}/:ns/:name/webhooks`;
  const refused = async (reply: FastifyReply, s: Session, p: Params, err: unknown) => {
    if (err instanceof ApiError && [400, 409, 422].includes(err.statusCode)) {
      const message = (err.body as { message?: string } | undefined)?.message ?? err.message;
      return platformPage(ctx, reply, s, p.ns, p.name, { problem: message, status: err.statusCode });
    }
    return ctx.fail(reply, s, err);
  };
  const putHooks = (s: Session, p: ScalePlatform, hooks: HookInput[]) =>
    viewerApi(s).patchPlatform(p.metadata.namespace ?? "", p.metadata.name ?? "", {
      metadata: { resourceVersion: p.metadata.resourceVersion },
      spec: { webhooks: hooks },
    });
  /** Writes a new key into the webhook's Secret (made when missing); returns it. */
  async function writeKey(s: Session, p: ScalePlatform, hook: string): Promise<string> {
    const ns = p.metadata.namespace ?? "";
    const name = secretName(p.metadata.name ?? "", hook);
    const key = newKey();
    const data = { [KEY]: Buffer.from(key).toString("base64") };
    try {
      await viewerApi(s).patchSecret(ns, name, { data });
    } catch (err) {
      if (!(err instanceof ApiError && err.statusCode === 404)) throw err;
      await viewerApi(s).createSecret({
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name,
          namespace: ns,
          labels: { [LABEL_PLATFORM]: p.metadata.name ?? "", [MADE_BY]: "cronscale-dashboard" },
          ownerReferences: [
            {
              apiVersion: p.apiVersion,
              kind: p.kind,
              name: p.metadata.name ?? "",
              uid: p.metadata.uid ?? "",
            },
          ],
        },
        type: "Opaque",
        data,
      });
    }
    return key;
  }
  /** The platform as read, its webhooks, and webhook `p.hook` (404 when the list has none). */
  const webhookOf = async (s: Session, p: Params) => {
    const current = await viewerApi(s).getPlatform(p.ns, p.name);
    const hooks = current.spec.webhooks ?? [];
    const w = hooks.find((x) => x.name === p.hook);
    if (!w) throw new ApiError(404, "NotFound", `no webhook ${p.hook}`);
    return { current, hooks, w };
  };
  const done = (
    req: { log: { info: (o: object, m: string) => void } },
    s: Session,
    p: Params,
    what: string,
  ) =>
    req.log.info(
      { user: s.user?.username, namespace: p.ns, platform: p.name, webhook: p.hook, what },
      "platform webhook changed",
    );

  app.post(route, async (req, reply) => {
    const s = req.session as Session;
    const p = req.params as Params;
    const body = req.body as Record<string, unknown>;
    const hook = str(body.name);
    try {
      const current = await viewerApi(s).getPlatform(p.ns, p.name);
      const hooks = current.spec.webhooks ?? [];
      if (hooks.some((w) => w.name === hook))
        throw new ApiError(409, "AlreadyExists", `a webhook named ${hook} exists already`);
      const entry = { name: hook, url: str(body.url), events: eventsOf(body) };
      // The Secret first, so the webhook never exists unsigned; a webhook the API server refuses
      // (its CEL rules: the URL, the events) takes its Secret away again.
      const value = await writeKey(s, current, hook);
      try {
        await putHooks(s, current, [
          ...hooks,
          { ...entry, signingSecretRef: { name: secretName(p.name, hook), key: KEY } },
        ]);
      } catch (err) {
        await viewerApi(s)
          .deleteSecret(p.ns, secretName(p.name, hook))
          .catch(() => {});
        throw err;
      }
      done(req, s, { ...p, hook }, "added");
      s.flash = undefined;
      return await platformPage(ctx, reply, s, p.ns, p.name, { webhookSecret: { name: hook, value } });
    } catch (err) {
      return refused(reply, s, p, err);
    }
  });

  app.post(`${route}/:hook/events`, async (req, reply) => {
    const s = req.session as Session;
    const p = req.params as Params;
    try {
      const { current, hooks } = await webhookOf(s, p);
      const events = eventsOf(req.body as Record<string, unknown>);
      await putHooks(
        s,
        current,
        hooks.map((w) => (w.name === p.hook ? { ...w, events } : w)),
      );
      done(req, s, p, "events");
      s.flash = `Events of webhook ${p.hook} saved.`;
      return reply.redirect(`${platformHref(p.ns, p.name)}#h-webhooks`, 303);
    } catch (err) {
      return refused(reply, s, p, err);
    }
  });

  app.post(`${route}/:hook/rotate`, async (req, reply) => {
    const s = req.session as Session;
    const p = req.params as Params;
    try {
      const { current, hooks, w } = await webhookOf(s, p);
      const value = await writeKey(s, current, p.hook);
      if (!w.signingSecretRef || w.signingSecretRef.name !== secretName(p.name, p.hook))
        await putHooks(
          s,
          current,
          hooks.map((x) =>
            x.name === p.hook
              ? { ...x, signingSecretRef: { name: secretName(p.name, p.hook), key: KEY } }
              : x,
          ),
        );
      done(req, s, p, "rotated");
      return await platformPage(ctx, reply, s, p.ns, p.name, { webhookSecret: { name: p.hook, value } });
    } catch (err) {
      return refused(reply, s, p, err);
    }
  });

  app.post(`${route}/:hook/remove`, async (req, reply) => {
    const s = req.session as Session;
    const p = req.params as Params;
    try {
      const { current, hooks, w } = await webhookOf(s, p);
      await putHooks(
        s,
        current,
        hooks.filter((x) => x.name !== p.hook),
      );
      // Only the Secret the dashboard made for this webhook.
      if (w.signingSecretRef?.name === secretName(p.name, p.hook))
        await viewerApi(s)
          .deleteSecret(p.ns, w.signingSecretRef.name)
          .catch((err) => {
            if (!(err instanceof ApiError && err.statusCode === 404)) throw err;
          });
      done(req, s, p, "removed");
      s.flash = `Webhook ${p.hook} removed.`;
      return reply.redirect(`${platformHref(p.ns, p.name)}#h-webhooks`, 303);
    } catch (err) {
      return refused(reply, s, p, err);
    }
  });
}
