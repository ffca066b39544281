import { EXECUTION_RESULTS } from "../api/v1alpha1/scheduledtask.ts";
import { ApiError } from "../runtime/errors.ts";
import { taskPermissions } from "./access.ts";
import { bearerOf } from "./archive.ts";
import type { Ctx, FastifyReply } from "./context.ts";
import { type Session, viewerApi } from "./sessions.ts";
import { type ArchiveView, TaskPage } from "./views/task-detail.ts";

// A task's page, rendered by the routes that show it (the page, the revealed value of a variable).
// Its history is the archive's (every run of the retention, 7 days by default) read as the viewer,
// a page of PAGE runs at a time, newest first, by cursor, filtered by result; without the archive,
// or when the archive cannot be read, the runs still kept as TaskExecutions.

/** Runs per page of the history. */
export const HISTORY_PAGE = 50;
/** How far back the history goes (the archive's default retention). */
const HISTORY_SINCE = "7d";

/** What the viewer asked of the history: a result and a page (the cursor the previous page gave). */
export interface HistoryQuery {
  result?: string;
  cursor?: string;
}

/** The history query of a request's query string (an unknown result is no filter). */
export function historyQueryOf(q: Record<string, string | undefined>): HistoryQuery {
  const result = (EXECUTION_RESULTS as readonly string[]).includes(q.result ?? "") ? q.result : undefined;
  return { result, cursor: q.cursor || undefined };
}

/** The archive's part of the page; undefined without an archive. */
async function archiveView(
  ctx: Ctx,
  s: Session,
  ns: string,
  name: string,
  query: HistoryQuery,
): Promise<ArchiveView | undefined> {
  const archive = ctx.opts.archive;
  if (!archive) return undefined;
  const token = bearerOf(s);
  if (!token)
    return {
      query,
      problem:
        "The execution archive is read with the viewer's own token; viewers signed in by the authenticating proxy see the recent runs below.",
    };
  const month = ctx.now().toISOString().slice(0, 7);
  try {
    const [page, usage] = await Promise.all([
      archive.history(token, ns, name, { since: HISTORY_SINCE, limit: HISTORY_PAGE, ...query }),
      archive.usage(token, ns, name, month),
    ]);
    return { query, page, usage, month };
  } catch (err) {
    ctx.opts.log.warn({ namespace: ns, task: name, err: (err as Error).message }, "archive unread");
    const problem =
      err instanceof ApiError && err.statusCode < 500
        ? `The execution archive refused: ${err.message}`
        : "The execution archive cannot be reached now; the recent runs below are those kept as TaskExecutions.";
    return { query, problem };
  }
}

/** Renders a task's page for the viewer (with a revealed variable's value when asked). */
export async function taskPage(
  ctx: Ctx,
  reply: FastifyReply,
  s: Session,
  ns: string,
  name: string,
  state: { query?: HistoryQuery; revealed?: { name: string; value: string } } = {},
): Promise<FastifyReply> {
  const v = viewerApi(s);
  const [task, executions, can, archive] = await Promise.all([
    v.getTask(ns, name),
    v.listExecutions(ns, name),
    taskPermissions(s, ns),
    archiveView(ctx, s, ns, name, state.query ?? {}),
  ]);
  const running = can.followLogs ? await v.listActivePods(ns, name).catch(() => []) : [];
  const flash = s.flash;
  s.flash = undefined;
  const body = TaskPage({
    task,
    executions,
    archive,
    session: s,
    can,
    now: ctx.now(),
    flash,
    running,
    revealed: state.revealed,
  });
  return ctx.page(reply, s, name, body);
}
