import { gunzipSync, gzipSync } from "node:zlib";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import type { TaskExecutionSpec } from "../api/v1alpha1/taskexecution.ts";
import { type ArchiveDatabase, migrateArchive } from "./schema.ts";

// The execution archive (PostgreSQL): every finished run with its record and console output,
// kept `retentionDays`, pruned in bulk by SQL; billing totals per task and month kept beyond
// that. TaskExecution objects in etcd are only the recent window (controllers/scheduledtask/history.ts).

/** Identity of one run: inserting the same run twice stores it once. */
export interface RunKey {
  namespace: string;
  /** The TaskExecution's name. */
  name: string;
  taskUid: string;
}

/** One run as archived: its key and its record, output included. */
export interface ArchivedRun extends RunKey {
  spec: TaskExecutionSpec;
}

/** A run in a history list (the record without output). */
export interface RunSummary {
  name: string;
  spec: Omit<TaskExecutionSpec, "output">;
}

/** Query of a task's history. */
export interface HistoryQuery {
  namespace: string;
  taskName: string;
  /** Runs that completed at or after this time. */
  since?: Date;
  /** Only runs that did not succeed. */
  failedOnly?: boolean;
  /** Only runs of this result (Succeeded, Failed, TimedOut). */
  result?: string;
  /** Only runs after this one in the order (a page's last run): keyset paging. */
  after?: RunPosition;
  /** Most runs returned (newest first). */
  limit: number;
}

/**
 * A run's place in a history: newest completion first, then name descending (the order of the
 * index cronscale_executions_task_page, so a page is one index range whatever its depth).
 */
export interface RunPosition {
  completionTime: string;
  name: string;
}

/** The position of a listed run, as a page's `after`. */
export const positionOf = (r: RunSummary): RunPosition => ({
  completionTime: r.spec.completionTime,
  name: r.name,
});

/** An opaque cursor of a position (base64url JSON). */
export function encodeCursor(p: RunPosition): string {
  return Buffer.from(JSON.stringify([p.completionTime, p.name])).toString("base64url");
}

/** The position of a cursor; undefined when it is not one. */
export function decodeCursor(text: string): RunPosition | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
    if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== "string" || typeof v[1] !== "string")
      return undefined;
    if (!Number.isFinite(Date.parse(v[0]))) return undefined;
    return { completionTime: v[0], name: v[1] };
  } catch {
    return undefined;
  }
}

/** Billing totals of one task in one month and currency. */
export interface UsageRow {
  namespace: string;
  taskName: string;
  /** "2026-11". */
  month: string;
  currency: string;
  runs: number;
  billedSeconds: number;
  /** Exact decimal. */
  cost: string;
}

/** What the controllers and the history endpoint need of the archive. */
export interface ExecutionArchive {
  /** Stores runs not stored yet (by RunKey) and adds them to the month's usage; returns how many were new. */
  insert(runs: readonly ArchivedRun[]): Promise<number>;
  /** Names among `names` (of one task's runs) already in the archive. */
  archived(namespace: string, taskUid: string, names: readonly string[]): Promise<Set<string>>;
  /** Deletes runs completed before `before`; returns how many. */
  prune(before: Date): Promise<number>;
  /** A task's runs, newest first (then by name, descending). */
  history(q: HistoryQuery): Promise<RunSummary[]>;
  /** One run with its output (the newest when `name` is not given). */
  run(namespace: string, taskName: string, name?: string): Promise<ArchivedRun | undefined>;
  /** Usage per task in a namespace for a month ("2026-11"), of one task when `taskName` is given. */
  usage(namespace: string, month: string, taskName?: string): Promise<UsageRow[]>;
  close(): Promise<void>;
}

/** First day of the month of `month` ("2026-11") or of a time, as a date string. */
function monthStart(month: string): string {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw new Error(`month must be YYYY-MM, got "${month}"`);
  return `${month}-01`;
}

const gz = (text: string) => gzipSync(Buffer.from(text, "utf8"));

function withoutOutput(spec: TaskExecutionSpec): Omit<TaskExecutionSpec, "output"> {
  const { output: _output, ...rest } = spec;
  return rest;
}

/** The archive on PostgreSQL (node-postgres pool, kysely for migrations and SQL). */
export class PgExecutionArchive implements ExecutionArchive {
  readonly db: Kysely<ArchiveDatabase>;

  constructor(
    connectionString: string,
    options: { maxConnections?: number; connectTimeoutMs?: number } = {},
  ) {
    const pool = new pg.Pool({
      connectionString,
      max: options.maxConnections ?? 4,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      // An archive that stops answering must not hold a reconcile for long.
      query_timeout: 30_000,
      idleTimeoutMillis: 30_000,
    });
    // A dropped idle connection is reported here; without a listener it would crash the process.
    pool.on("error", () => {});
    this.db = new Kysely<ArchiveDatabase>({ dialect: new PostgresDialect({ pool }) });
  }

  /** Applies pending migrations (under the migrator's advisory lock). */
  migrate(): Promise<string[]> {
    return migrateArchive(this.db);
  }

  async insert(runs: readonly ArchivedRun[]): Promise<number> {
    if (runs.length === 0) return 0;
    let added = 0;
    await this.db.transaction().execute(async (tx) => {
      for (const r of runs) {
        const s = r.spec;
        // One statement: the run, and its usage only when the run was never counted before.
        const res = await sql<{ n: string }>`
          with ins as (
            insert into cronscale_executions
              (namespace, name, task_uid, task_name, completion_time, result, billed_seconds, cost,
               currency, record, output_gz)
            values (${r.namespace}, ${r.name}, ${r.taskUid}, ${s.taskName}, ${s.completionTime},
               ${s.result}, ${s.billedSeconds ?? 0}, ${s.cost ?? "0"}, ${s.currency ?? ""},
               ${JSON.stringify(withoutOutput(s))}::jsonb, ${gz(s.output)})
            on conflict do nothing
            returning namespace, name, task_uid, task_name, billed_seconds, cost, currency,
                      date_trunc('month', completion_time at time zone 'UTC')::date as month
          ), billed as (
            insert into cronscale_billed_runs (namespace, name, task_uid, month)
            select namespace, name, task_uid, month from ins
            on conflict do nothing
            returning namespace, name, task_uid
          ), usage as (
            insert into cronscale_usage_monthly
              (namespace, task_name, month, currency, runs, billed_seconds, cost)
            select ins.namespace, task_name, month, currency, 1, billed_seconds, cost
            from ins join billed using (namespace, name, task_uid)
            on conflict (namespace, month, task_name, currency) do update set
              runs = cronscale_usage_monthly.runs + excluded.runs,
              billed_seconds = cronscale_usage_monthly.billed_seconds + excluded.billed_seconds,
              cost = cronscale_usage_monthly.cost + excluded.cost
          )
          select count(*) as n from ins`.execute(tx);
        added += Number(res.rows[0]?.n ?? 0);
      }
    });
    return added;
  }

  async archived(namespace: string, taskUid: string, names: readonly string[]): Promise<Set<string>> {
    if (names.length === 0) return new Set();
    const rows = await this.db
      .selectFrom("cronscale_executions")
      .select("name")
      .where("namespace", "=", namespace)
      .where("task_uid", "=", taskUid)
      .where("name", "in", [...names])
      .execute();
    return new Set(rows.map((r) => r.name));
  }

  async prune(before: Date): Promise<number> {
    const res = await this.db
      .deleteFrom("cronscale_executions")
      .where("completion_time", "<", before)
      .executeTakeFirst();
    // The billing ledger only has to outlive any copy of a run: kept 13 months.
    await this.db
      .deleteFrom("cronscale_billed_runs")
      .where("month", "<", sql<Date>`(${before.toISOString()}::timestamptz - interval '13 months')::date`)
      .execute();
    return Number(res.numDeletedRows);
  }

  async history(q: HistoryQuery): Promise<RunSummary[]> {
    let query = this.db
      .selectFrom("cronscale_executions")
      .select(["name", "record"])
      .where("namespace", "=", q.namespace)
      .where("task_name", "=", q.taskName);
    if (q.since) query = query.where("completion_time", ">=", q.since);
    if (q.failedOnly) query = query.where("result", "<>", "Succeeded");
    if (q.result) query = query.where("result", "=", q.result);
    // A row comparison, so PostgreSQL reads the page as one range of the index (keyset paging).
    const after = q.after;
    if (after)
      query = query.where(
        sql<boolean>`(completion_time, name) < (${after.completionTime}::timestamptz, ${after.name})`,
      );
    const rows = await query
      .orderBy("completion_time", "desc")
      .orderBy("name", "desc")
      .limit(q.limit)
      .execute();
    return rows.map((r) => ({ name: r.name, spec: r.record as RunSummary["spec"] }));
  }

  async run(namespace: string, taskName: string, name?: string): Promise<ArchivedRun | undefined> {
    let query = this.db
      .selectFrom("cronscale_executions")
      .select(["name", "task_uid", "record", "output_gz"])
      .where("namespace", "=", namespace)
      .where("task_name", "=", taskName);
    if (name) query = query.where("name", "=", name);
    const row = await query.orderBy("completion_time", "desc").limit(1).executeTakeFirst();
    if (!row) return undefined;
    const output = gunzipSync(row.output_gz).toString("utf8");
    const spec = { ...(row.record as Omit<TaskExecutionSpec, "output">), output } as TaskExecutionSpec;
    return { namespace, name: row.name, taskUid: row.task_uid, spec };
  }

  async usage(namespace: string, month: string, taskName?: string): Promise<UsageRow[]> {
    let query = this.db
      .selectFrom("cronscale_usage_monthly")
      .select(["namespace", "task_name", "currency", "runs", "billed_seconds", "cost"])
      .where("namespace", "=", namespace)
      .where("month", "=", sql<Date>`${monthStart(month)}::date`);
    if (taskName) query = query.where("task_name", "=", taskName);
    const rows = await query.orderBy("task_name").execute();
    return rows.map((r) => ({
      namespace: r.namespace,
      taskName: r.task_name,
      month,
      currency: r.currency,
      runs: Number(r.runs),
      billedSeconds: Number(r.billed_seconds),
      cost: normalizeDecimal(r.cost),
    }));
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}

/** PostgreSQL's numeric text ("0.000012000") → the shortest form with at least 2 decimals. */
export function normalizeDecimal(text: string): string {
  const [whole, frac = ""] = text.split(".");
  return `${whole}.${frac.replace(/0+$/, "").padEnd(2, "0")}`;
}
