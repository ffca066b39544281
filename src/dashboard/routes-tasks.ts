import { randomUUID } from "node:crypto";
import { ANNOTATION_RUN_NOW } from "../api/v1alpha1/labels.ts";
import type { ScheduledTask } from "../api/v1alpha1/scheduledtask.ts";
import { ApiError } from "../runtime/errors.ts";
import { pickNamespace, taskPermissions } from "./access.ts";
import { bearerOf } from "./archive.ts";
import type { Ctx, FastifyInstance, FastifyReply } from "./context.ts";
import { type Session, viewerApi } from "./sessions.ts";
import { sharedList } from "./shared-read.ts";
import { openEventStream } from "./sse.ts";
import { filterTasks } from "./task-model.ts";
import { historyQueryOf, taskPage } from "./task-page.ts";
import { renderFragment } from "./views/html.ts";
import { TASKS_PATH } from "./views/layout.ts";
import { DeletePage, RunOutputPage } from "./views/task-detail.ts";
import { TaskResults, TasksPage, taskHref } from "./views/tasks-list.ts";

type Q = Record<string, string | undefined>;
type P = { ns: string; name: string; env?: string };

const listHref = (ns: string) => `${TASKS_PATH}?namespace=${encodeURIComponent(ns)}`;

/** Routes of /dashboard/compute/serverless/tasks. Every Kubernetes call uses the viewer's token. */
export function registerTaskRoutes(app: FastifyInstance, ctx: Ctx): void {
  // With the shared cache (task-cache.ts) a list is the namespace's watched copy, shown only
  // when an access review says this viewer may list tasks there (cached per session, 30 s; a
  // refusal 5 s): a refusal is the 403 the viewer's own LIST would get.
  // Without it, search as you type asks for the same namespace's list on every keystroke: a
  // keystroke filters the viewer's last list in memory and never waits for the API server while
  // that list is under a minute old; one older than 5 s is re-read in the background (one read at
  // a time per viewer and namespace), so the next keystrokes see changes. Full page loads and
  // every change always read afresh.
  const LIST_FRESH_MS = 5_000;
  const LIST_MAX_MS = 60_000;
  const refreshing = new WeakMap<Session, Set<string>>();
  async function load(s: Session, ns: string): Promise<ScheduledTask[]> {
    const tasks = await viewerApi(s).listTasks(ns);
    s.access ??= new Map();
    s.access.set(`tasks/${ns}`, { at: Date.now(), value: tasks });
    return tasks;
  }
  const cache = ctx.opts.taskCache;
  const shared = (s: Session, ns: string) =>
    sharedList(s, cache && { list: (n: string) => cache.tasks(n) }, "scheduledtasks", ns);
  async function tasksFor(s: Session, ns: string, fresh: boolean): Promise<readonly ScheduledTask[]> {
    const cached = await shared(s, ns);
    if (cached) return cached;
    const hit = s.access?.get(`tasks/${ns}`);
    const age = hit ? Date.now() - hit.at : Number.POSITIVE_INFINITY;
    if (fresh || !hit || age >= LIST_MAX_MS) return load(s, ns);
    if (age >= LIST_FRESH_MS) {
      const busy = refreshing.get(s) ?? new Set<string>();
      refreshing.set(s, busy);
      if (!busy.has(ns)) {
        busy.add(ns);
        load(s, ns)
          .catch(() => s.access?.delete(`tasks/${ns}`))
          .finally(() => busy.delete(ns));
      }
    }
    return hit.value as ScheduledTask[];
  }

  function takeFlash(s: Session): string | undefined {
    const f = s.flash;
    s.flash = undefined;
    return f;
  }

  app.get(TASKS_PATH, async (req, reply) => {
    const s = req.session as Session;
    const q = (req.query as Q).q ?? "";
    try {
      const { ns, all } = await pickNamespace(s, ctx.opts.namespaces ?? [], (req.query as Q).namespace);
      const [tasks, can] = await Promise.all([tasksFor(s, ns, true), taskPermissions(s, ns)]);
      const shown = filterTasks(tasks, q);
      const body = TasksPage({
        namespace: ns,
        namespaces: all,
        q,
        tasks: shown,
        total: tasks.length,
        canCreate: can.create,
        flash: takeFlash(s),
      });
      return ctx.page(reply, s, "Tasks", body);
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });

  // The cards alone, for search as you type (the full page answers the same query without script).
  app.get(`${TASKS_PATH}/results`, async (req, reply) => {
    const s = req.session as Session;
    const { q = "", namespace } = req.query as Q;
    try {
      const { ns } = await pickNamespace(s, ctx.opts.namespaces ?? [], namespace);
      const tasks = await tasksFor(s, ns, false);
      const html = renderFragment(TaskResults({ tasks: filterTasks(tasks, q), total: tasks.length, q }));
      return reply.type("text/html; charset=utf-8").send(html);
    } catch (err) {
      const status = err instanceof ApiError ? err.statusCode : 500;
      return reply
        .code(status)
        .type("text/plain")
        .send((err as Error).message);
    }
  });

  app.get(`${TASKS_PATH}/:ns/:name`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as P;
    try {
      return await taskPage(ctx, reply, s, ns, name, { query: historyQueryOf(req.query as Q) });
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });

  // One run's whole output: from the archive (read as the viewer), else its TaskExecution while
  // etcd still keeps it.
  app.get(`${TASKS_PATH}/:ns/:name/runs/:run/output`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name, run } = req.params as P & { run: string };
    try {
      const token = bearerOf(s);
      const [task, archived] = await Promise.all([
        viewerApi(s).getTask(ns, name),
        token && ctx.opts.archive
          ? ctx.opts.archive.run(token, ns, name, run).catch((err) => {
              req.log.warn({ namespace: ns, task: name, err: (err as Error).message }, "archive unread");
              return undefined;
            })
          : undefined,
      ]);
      const spec =
        archived ?? (await viewerApi(s).listExecutions(ns, name)).find((x) => x.metadata.name === run)?.spec;
      if (!spec) throw new ApiError(404, "NotFound", `no run ${run} of task ${name} in the last 7 days`);
      return ctx.page(reply, s, `Run of ${name}`, RunOutputPage({ task, run, spec }));
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });

  app.get(`${TASKS_PATH}/:ns/:name/runs/:pod/log`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name, pod } = req.params as P & { pod: string };
    let pods: string[];
    try {
      pods = await viewerApi(s).listActivePods(ns, name);
    } catch (err) {
      return reply.code(err instanceof ApiError ? err.statusCode : 500).send();
    }
    if (!pods.includes(pod)) return reply.code(404).type("text/plain").send("no such run in progress");
    const stream = openEventStream(req, reply);
    const { send } = stream;
    // A pod still pulling or starting has no log yet (the API server answers 400): try again
    // each second while the run is in progress.
    let wrote = false;
    for (let attempt = 0; attempt < 60 && !stream.signal.aborted; attempt++) {
      try {
        await viewerApi(s).followLog(
          ns,
          pod,
          (text) => {
            wrote = true;
            send("log", text);
          },
          stream.signal,
        );
        break;
      } catch (err) {
        if (wrote) break;
        req.log.debug({ err, pod }, "no log yet");
        await new Promise((r) => setTimeout(r, 1000));
        const still = await viewerApi(s)
          .listActivePods(ns, name)
          .catch(() => [] as string[]);
        if (!still.includes(pod)) break;
      }
    }
    send("end", "");
    stream.end();
  });

  app.post(`${TASKS_PATH}/:ns/:name/env/:env/reveal`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name, env = "" } = req.params as P;
    try {
      const v = viewerApi(s);
      const task = await v.getTask(ns, name);
      const entry = task.spec.env?.find((e) => e.name === env);
      if (!entry) throw new ApiError(404, "NotFound", `task ${name} has no variable ${env}`);
      let value = entry.value ?? "";
      if (entry.valueFrom) {
        const ref = entry.valueFrom.secretKeyRef;
        const secret = await v.getSecret(ns, ref.name);
        const raw = secret.data?.[ref.key];
        if (raw === undefined)
          throw new ApiError(404, "NotFound", `Secret ${ref.name} has no key ${ref.key}`);
        value = Buffer.from(raw, "base64").toString("utf8");
      }
      req.log.info(
        { user: s.user?.username, namespace: ns, task: name, variable: env },
        "env value revealed",
      );
      reply.header("Cache-Control", "no-store");
      return await taskPage(ctx, reply, s, ns, name, { revealed: { name: env, value } });
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });

  const annotate = async (reply: FastifyReply, s: Session, p: P, patch: unknown, done: string) => {
    try {
      await viewerApi(s).patchTask(p.ns, p.name, patch);
      s.flash = done;
      return reply.redirect(taskHref(p.ns, p.name), 303);
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  };
  app.post(`${TASKS_PATH}/:ns/:name/run`, async (req, reply) =>
    annotate(
      reply,
      req.session as Session,
      req.params as P,
      { metadata: { annotations: { [ANNOTATION_RUN_NOW]: randomUUID() } } },
      "Run requested; it appears in the history when it finishes.",
    ),
  );
  app.post(`${TASKS_PATH}/:ns/:name/suspend`, async (req, reply) =>
    annotate(reply, req.session as Session, req.params as P, { spec: { suspend: true } }, "Task suspended."),
  );
  app.post(`${TASKS_PATH}/:ns/:name/resume`, async (req, reply) =>
    annotate(reply, req.session as Session, req.params as P, { spec: { suspend: false } }, "Task resumed."),
  );

  app.get(`${TASKS_PATH}/:ns/:name/delete`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as P;
    try {
      const task = await viewerApi(s).getTask(ns, name);
      return ctx.page(reply, s, `Delete ${name}`, DeletePage({ task, session: s }));
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });

  app.post(`${TASKS_PATH}/:ns/:name/delete`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as P;
    try {
      await viewerApi(s).deleteTask(ns, name);
      req.log.info({ user: s.user?.username, namespace: ns, task: name }, "task deleted");
      s.flash = `Task ${name} deleted.`;
      return reply.redirect(listHref(ns), 303);
    } catch (err) {
      return ctx.fail(reply, s, err);
    }
  });
}
