import { ApiError } from "../runtime/errors.ts";
import {
  applyOfEntry,
  configList,
  entriesOf,
  entryFieldOf,
  entryGroup,
  entryOf,
  removalPatch,
} from "./config-lists.ts";
import { conflictsOf, fieldManager, formFromBody } from "./config-model.ts";
import type { Ctx, FastifyInstance, FastifyReply, FastifyRequest } from "./context.ts";
import { platformPage } from "./platform-page.ts";
import { type Session, viewerApi } from "./sessions.ts";
import { apiErrorsByField } from "./task-model.ts";
import { PLATFORMS_PATH, platformHref } from "./views/layout.ts";
import type { ConfigState } from "./views/platform-config.ts";
import { RemoveEntryPage } from "./views/platform-config-lists.ts";

// Adding, editing and removing payment gateways and shipping methods, as the viewer.
//
// Add and edit are server-side applies under the list's field manager, like the groups
// (routes-config.ts): a forced dry run for the API server's messages, then a non-forced apply whose
// conflicts are named beside the fields with "Save anyway". The apply carries the entries that
// manager owns already plus the one saved (config-lists.ts), so the others stay as they are.
//
// Remove is not an apply. Leaving an entry out of the dashboard's apply only withdraws the
// dashboard's claim: an entry kubectl or a GitOps controller also set would stay, and a "Remove"
// that silently keeps the entry would be a lie. So after a confirmation page that names those
// other managers (their next apply brings it back), the entry is removed with a JSON patch as the
// viewer — what `kubectl patch --type=json` does — whose `test` of the entry, as the viewer saw
// it, makes the API server refuse the removal if the entry changed or moved in between. A
// resourceVersion precondition would also refuse it after any unrelated write (the operator's
// status updates), which the viewer cannot act on.

type Params = { ns: string; name: string; list: string; entry?: string };

const ROUTE = `${PLATFORMS_PATH}/:ns/:name/config/:list/entries`;

export function registerConfigListRoutes(app: FastifyInstance, ctx: Ctx): void {
  const listOf = (id: string) => {
    const list = configList(id);
    if (!list) throw new ApiError(404, "NotFound", `no configuration list ${id}`);
    return list;
  };

  const save = async (req: FastifyRequest, reply: FastifyReply) => {
    const s = req.session as Session;
    const { ns, name, entry } = req.params as Params;
    try {
      const list = listOf((req.params as Params).list);
      const g = entryGroup(list, entry);
      const body = req.body as Record<string, unknown>;
      const form = formFromBody(g, body);
      const again = (state: Omit<ConfigState, "group" | "form" | "entry">, status: number) =>
        platformPage(ctx, reply, s, ns, name, {
          status,
          config: { group: list.id, entry: entry ?? "", form, ...state },
        });
      const fieldOf = (path: string) => entryFieldOf(list, g, path);
      const platform = await viewerApi(s).getPlatform(ns, name);
      const entryName = entry ?? String(form[`${list.id}-add-name`] ?? "").trim();
      const exists = entriesOf(list, platform).some((e) => e.name === entryName);
      // An apply of an existing name would merge into that entry (perhaps another manager's), and
      // one of a removed entry would bring it back: both are refused here, by the field.
      if (entry === undefined && exists)
        return again(
          {
            errors: {
              [`${list.id}-add-name`]: [`A ${list.one} named ${entryName} exists already; edit it instead.`],
            },
            general: [],
            conflict: false,
          },
          409,
        );
      if (entry !== undefined && !exists)
        return again(
          { errors: {}, general: [`${list.one} ${entry} no longer exists.`], conflict: false },
          404,
        );
      const config = applyOfEntry(list, platform, entryOf(g, entryName, form));
      const force = body.force === "true";
      try {
        await viewerApi(s).applyPlatform(config, { manager: fieldManager(list), force: true, dryRun: true });
        const saved = await viewerApi(s).applyPlatform(config, {
          manager: fieldManager(list),
          force,
          dryRun: false,
        });
        req.log.info(
          { user: s.user?.username, namespace: ns, platform: name, list: list.id, entry: entryName, force },
          "platform configuration entry applied",
        );
        const what = `${list.one[0]?.toUpperCase()}${list.one.slice(1)} ${entryName}`;
        s.flash = `${what} saved (generation ${saved.metadata.generation}). Whether the operator has taken it up shows under Configuration.`;
        return reply.redirect(`${platformHref(ns, name)}#configuration`, 303);
      } catch (err) {
        const conflict = conflictsOf(g, err, fieldOf);
        if (conflict)
          return again({ errors: conflict.fields, general: conflict.general, conflict: true }, 409);
        if (err instanceof ApiError && [400, 409, 422].includes(err.statusCode)) {
          const { fields, general } = apiErrorsByField(err, fieldOf);
          return again({ errors: fields, general, conflict: false }, err.statusCode);
        }
        throw err;
      }
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  };
  app.post(ROUTE, save);
  app.post(`${ROUTE}/:entry`, save);

  const confirm = async (
    reply: FastifyReply,
    s: Session,
    p: Params,
    problem?: string,
    status = 200,
  ): Promise<FastifyReply> => {
    const list = listOf(p.list);
    const platform = await viewerApi(s).getPlatform(p.ns, p.name);
    const entry = entriesOf(list, platform).find((e) => e.name === p.entry);
    if (!entry) throw new ApiError(404, "NotFound", `platform ${p.name} has no ${list.one} ${p.entry}`);
    const back = `${platformHref(p.ns, p.name)}#configuration`;
    const body = RemoveEntryPage({ platform, list, entry, session: s, back, problem });
    return ctx.page(reply, s, `Remove ${list.one} ${entry.name}`, body, status);
  };

  app.get(`${ROUTE}/:entry/remove`, async (req, reply) => {
    const s = req.session as Session;
    try {
      return await confirm(reply, s, req.params as Params);
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });

  app.post(`${ROUTE}/:entry/remove`, async (req, reply) => {
    const s = req.session as Session;
    const p = req.params as Params;
    try {
      const list = listOf(p.list);
      let seen: { name: string } & Record<string, unknown>;
      try {
        seen = JSON.parse(String((req.body as Record<string, unknown>).seen ?? ""));
      } catch {
        throw new ApiError(400, "BadRequest", "the confirmed entry is missing; confirm the removal again");
      }
      if (seen?.name !== p.entry)
        throw new ApiError(400, "BadRequest", "the confirmed entry is not this one");
      const patch = removalPatch(list, await viewerApi(s).getPlatform(p.ns, p.name), seen);
      if (!patch) {
        s.flash = `${list.one} ${p.entry} was already removed.`;
        return reply.redirect(`${platformHref(p.ns, p.name)}#configuration`, 303);
      }
      try {
        await viewerApi(s).jsonPatchPlatform(p.ns, p.name, patch, fieldManager(list));
      } catch (err) {
        // The `test` failed: the entry changed since it was confirmed; show it as it is now.
        if (err instanceof ApiError && (err.statusCode === 409 || err.statusCode === 422))
          return confirm(reply, s, p, `The ${list.one} changed since you confirmed; check it again.`, 409);
        throw err;
      }
      req.log.info(
        { user: s.user?.username, namespace: p.ns, platform: p.name, list: list.id, entry: p.entry },
        "platform configuration entry removed",
      );
      s.flash = `Removed ${list.one} ${p.entry}.`;
      return reply.redirect(`${platformHref(p.ns, p.name)}#configuration`, 303);
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });
}
