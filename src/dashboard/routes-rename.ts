import { ApiError } from "../runtime/errors.ts";
import type { Ctx, FastifyInstance } from "./context.ts";
import { renameTask } from "./rename.ts";
import { type Session, viewerApi } from "./sessions.ts";
import { apiErrorsByField } from "./task-model.ts";
import { TASKS_PATH } from "./views/layout.ts";
import { RenamePage } from "./views/task-rename.ts";
import { taskHref } from "./views/tasks-list.ts";

type P = { ns: string; name: string };

/** Rename a task with its history (see rename.ts), as the viewer. */
export function registerRenameRoutes(app: FastifyInstance, ctx: Ctx): void {
  app.get(`${TASKS_PATH}/:ns/:name/rename`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as P;
    try {
      await viewerApi(s).getTask(ns, name);
      const body = RenamePage({ session: s, namespace: ns, name, to: name, errors: [], general: [] });
      return ctx.page(reply, s, `Rename ${name}`, body);
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });

  app.post(`${TASKS_PATH}/:ns/:name/rename`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as P;
    const raw = (req.body as Record<string, unknown>).to;
    const to = typeof raw === "string" ? raw.trim() : "";
    const again = (errors: string[], general: string[], status: number) =>
      ctx.page(
        reply,
        s,
        `Rename ${name}`,
        RenamePage({ session: s, namespace: ns, name, to, errors, general }),
        status,
      );
    if (to === name) return again(["The new name is the current one."], [], 422);
    try {
      const { copied } = await renameTask(viewerApi(s), ns, name, to);
      req.log.info(
        { user: s.user?.username, namespace: ns, task: name, to, records: copied },
        "task renamed",
      );
      s.flash = `Task ${name} renamed to ${to}; ${copied} execution record${copied === 1 ? "" : "s"} moved.`;
      return reply.redirect(taskHref(ns, to), 303);
    } catch (err) {
      if (err instanceof ApiError && err.statusCode !== 401) {
        const { fields, general } = apiErrorsByField(err);
        const nameErrors = fields.name ?? [];
        const rest = Object.entries(fields)
          .filter(([k]) => k !== "name")
          .flatMap(([, v]) => v);
        return again(nameErrors, [...general, ...rest], err.statusCode);
      }
      return ctx.fail(reply, s, err);
    }
  });
}
