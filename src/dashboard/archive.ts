import { readFile } from "node:fs/promises";
import type { TaskExecutionSpec } from "../api/v1alpha1/taskexecution.ts";
import { getArchive } from "../archive/client.ts";
import type { RunSummary, UsageRow } from "../archive/store.ts";
import { ApiError } from "../runtime/errors.ts";
import type { Session } from "./sessions.ts";

// A task's history on its page, from the execution archive: read through the operator's history
// endpoint with the viewer's own bearer token (the endpoint asks the API server, with a TokenReview
// and a SubjectAccessReview, whether that viewer may get the task), as `cronscale history` reads
// it. A viewer of the authenticating proxy has no token of their own to send: for them the page
// says so and shows the recent runs kept as TaskExecutions.

/** A page of a task's runs, newest first. */
export interface HistoryPage {
  items: RunSummary[];
  /** Cursor of the next (older) page, when there is one. */
  next?: string;
}

/** What the task page asks of the archive, as the viewer holding `token`. */
export interface ArchiveReader {
  history(
    token: string,
    ns: string,
    task: string,
    q: { since: string; limit: number; result?: string; cursor?: string },
  ): Promise<HistoryPage>;
  /** One run with its whole output; undefined when the archive does not hold it. */
  run(token: string, ns: string, task: string, run: string): Promise<TaskExecutionSpec | undefined>;
  /** The task's usage in a month ("2026-11"), one row per currency. */
  usage(token: string, ns: string, task: string, month: string): Promise<UsageRow[]>;
}

/** The viewer's bearer token (signed in with a token or through OpenID Connect); none behind the proxy. */
export function bearerOf(s: Session): string | undefined {
  return s.oidc?.idToken ?? s.token;
}

/** ArchiveReader over HTTP(S): `url` is the history endpoint (e.g. https://cronscale-history.cronscale-system:8081). */
export class HttpArchiveReader implements ArchiveReader {
  private readonly base: string;
  private readonly caFile: string | undefined;
  /** `caFile` is read at each request: the operator may make (or renew) it after the dashboard starts. */
  constructor(url: string, caFile?: string) {
    this.base = url.replace(/\/$/, "");
    this.caFile = caFile;
  }

  private async get<T>(
    token: string,
    path: string,
    q: Record<string, string | number | undefined>,
  ): Promise<T> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== "") params.set(k, String(v));
    const ca = this.caFile ? await readFile(this.caFile) : undefined;
    const res = await getArchive(`${this.base}${path}${params.size ? `?${params}` : ""}`, token, ca);
    let body: { error?: string } = {};
    try {
      body = JSON.parse(res.text);
    } catch {}
    if (res.status >= 200 && res.status < 300) return body as T;
    throw new ApiError(res.status, "ArchiveRefused", body.error ?? res.statusText);
  }

  history(
    token: string,
    ns: string,
    task: string,
    q: { since: string; limit: number; result?: string; cursor?: string },
  ): Promise<HistoryPage> {
    return this.get(token, `${taskPath(ns, task)}/history`, q);
  }

  async run(token: string, ns: string, task: string, run: string): Promise<TaskExecutionSpec | undefined> {
    try {
      return (await this.get<{ spec: TaskExecutionSpec }>(token, `${taskPath(ns, task)}/logs`, { run })).spec;
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 404) return undefined;
      throw err;
    }
  }

  async usage(token: string, ns: string, task: string, month: string): Promise<UsageRow[]> {
    const r = await this.get<{ items: UsageRow[] }>(
      token,
      `/api/v1/namespaces/${encodeURIComponent(ns)}/usage`,
      {
        month,
        task,
      },
    );
    return r.items;
  }
}

const taskPath = (ns: string, task: string) =>
  `/api/v1/namespaces/${encodeURIComponent(ns)}/scheduledtasks/${encodeURIComponent(task)}`;
