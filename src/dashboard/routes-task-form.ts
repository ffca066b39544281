import { API_VERSION } from "../api/v1alpha1/kind.ts";
import type { ScheduledTask } from "../api/v1alpha1/scheduledtask.ts";
import { ApiError } from "../runtime/errors.ts";
import { pickNamespace } from "./access.ts";
import type { Ctx, FastifyInstance, FastifyReply } from "./context.ts";
import { type Session, viewerApi } from "./sessions.ts";
import {
  apiErrorsByField,
  formFromBody,
  formFromTask,
  NEW_TASK_FORM,
  type TaskForm,
  taskFromForm,
} from "./task-model.ts";
import { renderFragment } from "./views/html.ts";
import { TASKS_PATH } from "./views/layout.ts";
import { RunPreview, TaskFormPage } from "./views/task-form.ts";
import { taskHref } from "./views/tasks-list.ts";

type Q = Record<string, string | undefined>;
type P = { ns: string; name: string };

const listHref = (ns: string) => `${TASKS_PATH}?namespace=${encodeURIComponent(ns)}`;

/**
 * New Task and edit: the API server validates first (dry run), its messages go beside the
 * fields; env values go to the task's own Secret. Every call uses the viewer's token.
 */
export function registerTaskFormRoutes(app: FastifyInstance, ctx: Ctx): void {
  app.get(`${TASKS_PATH}/preview`, async (req, reply) => {
    const { schedule = "", timezone = "UTC" } = req.query as Q;
    return reply
      .type("text/html; charset=utf-8")
      .send(renderFragment(RunPreview({ schedule, timezone, now: ctx.now() })));
  });

  const formPage = (
    reply: FastifyReply,
    s: Session,
    namespace: string,
    form: TaskForm,
    editing: boolean,
    errors: Record<string, string[]> = {},
    general: string[] = [],
    status = 200,
  ) =>
    ctx.page(
      reply,
      s,
      editing ? `Edit ${form.name}` : "New Task",
      TaskFormPage({ session: s, namespace, form, editing, errors, general, now: ctx.now() }),
      status,
    );

  app.get(`${TASKS_PATH}/new`, async (req, reply) => {
    const s = req.session as Session;
    const { ns } = await pickNamespace(s, ctx.opts.namespaces ?? [], (req.query as Q).namespace);
    return formPage(reply, s, ns, NEW_TASK_FORM, false);
  });

  app.post(`${TASKS_PATH}/new`, async (req, reply) => {
    const s = req.session as Session;
    const body = req.body as Record<string, unknown>;
    const ns = (req.query as Q).namespace ?? "default";
    const form = formFromBody(body);
    if (body.intent === "preview") return formPage(reply, s, ns, form, false);
    const plan = taskFromForm(form, ns);
    const v = viewerApi(s);
    try {
      // The API server validates first (schema, CEL, RBAC) without writing anything.
      await v.createTask(plan.task, true);
      if (Object.keys(plan.fieldErrors).length > 0)
        return formPage(reply, s, ns, form, false, plan.fieldErrors, [], 422);
    } catch (err) {
      if (
        err instanceof ApiError &&
        (err.statusCode === 422 || err.statusCode === 400 || err.statusCode === 409)
      ) {
        const { fields, general } = apiErrorsByField(err);
        return formPage(reply, s, ns, form, false, { ...plan.fieldErrors, ...fields }, general, 422);
      }
      if (err instanceof ApiError && err.statusCode === 403)
        return formPage(
          reply,
          s,
          ns,
          form,
          false,
          {},
          [err.body ? ((err.body as { message?: string }).message ?? err.message) : err.message],
          403,
        );
      return ctx.fail(reply, s, err);
    }
    // Values go to a Secret before the task that references it exists, so the first run finds
    // them; the Secret is then owned by the task (deleted with it). A failed create removes it.
    const hasEnv = Object.keys(plan.secretValues).length > 0;
    try {
      if (hasEnv) await writeEnvSecret(s, ns, plan.secretName, plan.secretValues, []);
      let created: ScheduledTask;
      try {
        created = await v.createTask(plan.task, false);
      } catch (err) {
        if (hasEnv) await v.deleteSecret(ns, plan.secretName).catch(() => undefined);
        throw err;
      }
      if (hasEnv) await ownSecret(s, created, plan.secretName);
      req.log.info({ user: s.user?.username, namespace: ns, task: form.name }, "task created");
      s.flash = `Task ${form.name} created.`;
      return reply.redirect(listHref(ns), 303);
    } catch (err) {
      if (err instanceof ApiError && err.statusCode !== 401) {
        const { fields, general } = apiErrorsByField(err);
        return formPage(reply, s, ns, form, false, fields, general, err.statusCode);
      }
      return ctx.fail(reply, s, err);
    }
  });

  async function writeEnvSecret(
    s: Session,
    ns: string,
    name: string,
    set: Record<string, string>,
    remove: string[],
  ) {
    const data: Record<string, string | null> = {};
    for (const [k, val] of Object.entries(set)) data[k] = Buffer.from(val, "utf8").toString("base64");
    for (const k of remove) data[k] = null;
    try {
      await viewerApi(s).patchSecret(ns, name, { data });
    } catch (err) {
      if (!(err instanceof ApiError) || err.statusCode !== 404) throw err;
      await viewerApi(s).createSecret({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: ns, labels: { "app.kubernetes.io/managed-by": "cronscale-dashboard" } },
        type: "Opaque",
        data: Object.fromEntries(Object.entries(data).filter(([, x]) => x !== null)),
      });
    }
  }

  async function ownSecret(s: Session, task: ScheduledTask, name: string) {
    await viewerApi(s).patchSecret(task.metadata.namespace ?? "", name, {
      metadata: {
        ownerReferences: [
          {
            apiVersion: API_VERSION,
            kind: "ScheduledTask",
            name: task.metadata.name,
            uid: task.metadata.uid,
          },
        ],
      },
    });
  }

  app.get(`${TASKS_PATH}/:ns/:name/edit`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as P;
    try {
      const task = await viewerApi(s).getTask(ns, name);
      return formPage(reply, s, ns, formFromTask(task), true);
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });

  app.post(`${TASKS_PATH}/:ns/:name/edit`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as P;
    const body = req.body as Record<string, unknown>;
    const form = { ...formFromBody(body), name };
    if (body.intent === "preview") return formPage(reply, s, ns, form, true);
    const v = viewerApi(s);
    try {
      const existing = await v.getTask(ns, name);
      const plan = taskFromForm(form, ns, existing);
      try {
        await v.replaceTask(plan.task, true);
      } catch (err) {
        if (err instanceof ApiError && [400, 403, 409, 422].includes(err.statusCode)) {
          const { fields, general } = apiErrorsByField(err);
          return formPage(
            reply,
            s,
            ns,
            form,
            true,
            { ...plan.fieldErrors, ...fields },
            general,
            err.statusCode,
          );
        }
        throw err;
      }
      if (Object.keys(plan.fieldErrors).length > 0)
        return formPage(reply, s, ns, form, true, plan.fieldErrors, [], 422);
      // Keys of variables no longer in the task leave the Secret; new values are written first.
      const kept = new Set(form.env.map((r) => r.name));
      const dropped = (existing.spec.env ?? [])
        .filter((e) => e.valueFrom?.secretKeyRef.name === plan.secretName && !kept.has(e.name))
        .map((e) => e.valueFrom?.secretKeyRef.key ?? e.name);
      if (Object.keys(plan.secretValues).length > 0 || dropped.length > 0) {
        await writeEnvSecret(s, ns, plan.secretName, plan.secretValues, dropped);
        await ownSecret(s, existing, plan.secretName);
      }
      await v.replaceTask(plan.task, false);
      req.log.info({ user: s.user?.username, namespace: ns, task: name }, "task updated");
      s.flash = "Changes saved.";
      return reply.redirect(taskHref(ns, name), 303);
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });
}
