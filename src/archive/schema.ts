import { type Kysely, sql } from "kysely";
import { type Migration, type MigrationProvider, Migrator } from "kysely/migration";

// The execution archive's tables, and the migrations that make them. Migrations run through
// kysely's Migrator, which holds a PostgreSQL advisory lock while it works, so several operator
// replicas starting at once apply each migration exactly once. Append new migrations; never edit
// one that has shipped.

/** One finished run (spec 2.2), kept `retentionDays` after completion. */
export interface ExecutionsTable {
  namespace: string;
  /** The TaskExecution's name: task, inverted start time, Job suffix (sorts newest first). */
  name: string;
  /** UID of the task that ran: a task deleted and created again under its name is another task. */
  task_uid: string;
  task_name: string;
  completion_time: Date;
  result: string;
  billed_seconds: number;
  /** numeric(20,9): read back as a string, exact. */
  cost: string;
  currency: string;
  /** The TaskExecution's spec without output (JSON). */
  record: unknown;
  /** Console output, gzip. */
  output_gz: Buffer;
  archived_at: Date;
}

/** Billing totals per task and calendar month (UTC), kept beyond the runs' retention. */
export interface UsageMonthlyTable {
  namespace: string;
  task_name: string;
  /** First day of the month. */
  month: Date;
  currency: string;
  runs: string;
  billed_seconds: string;
  cost: string;
}

/** The runs counted in the usage (by identity and month). */
export interface BilledRunsTable {
  namespace: string;
  name: string;
  task_uid: string;
  month: Date;
}

/** The archive's tables as kysely sees them. */
export interface ArchiveDatabase {
  cronscale_executions: ExecutionsTable;
  cronscale_usage_monthly: UsageMonthlyTable;
  cronscale_billed_runs: BilledRunsTable;
}

const migrations: Record<string, Migration> = {
  "0001_executions_and_usage": {
    async up(db: Kysely<unknown>) {
      await sql`
        create table cronscale_executions (
          namespace text not null,
          name text not null,
          task_uid text not null,
          task_name text not null,
          completion_time timestamptz not null,
          result text not null,
          billed_seconds integer not null,
          cost numeric(20, 9) not null,
          currency text not null,
          record jsonb not null,
          output_gz bytea not null,
          archived_at timestamptz not null default now(),
          primary key (namespace, name, task_uid)
        )`.execute(db);
      // History of a task, newest first; failed-only lists filter on result within it.
      await sql`create index cronscale_executions_task on cronscale_executions
        (namespace, task_name, completion_time desc)`.execute(db);
      // Retention: one range delete.
      await sql`create index cronscale_executions_completion on cronscale_executions
        (completion_time)`.execute(db);
      await sql`
        create table cronscale_usage_monthly (
          namespace text not null,
          task_name text not null,
          month date not null,
          currency text not null,
          runs bigint not null,
          billed_seconds bigint not null,
          cost numeric(24, 9) not null,
          primary key (namespace, month, task_name, currency)
        )`.execute(db);
      // Every run ever counted in the usage, kept beyond the runs' retention: a run that reaches
      // the archive again after it was pruned (re-sent from etcd) is stored but not billed twice.
      await sql`
        create table cronscale_billed_runs (
          namespace text not null,
          name text not null,
          task_uid text not null,
          month date not null,
          primary key (namespace, name, task_uid)
        )`.execute(db);
      await sql`create index cronscale_billed_runs_month on cronscale_billed_runs (month)`.execute(db);
    },
  },
  // Paging a task's history by keyset (completion time, then name, both descending) reads one
  // index range per page at any depth, filtered by result or not: a task run every minute has
  // 10,080 runs in 7 days. The first index's leading columns make the old history index redundant.
  "0002_history_paging_indexes": {
    async up(db: Kysely<unknown>) {
      await sql`create index cronscale_executions_task_page on cronscale_executions
        (namespace, task_name, completion_time desc, name desc)`.execute(db);
      await sql`create index cronscale_executions_task_result on cronscale_executions
        (namespace, task_name, result, completion_time desc, name desc)`.execute(db);
      await sql`drop index cronscale_executions_task`.execute(db);
    },
  },
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Brings the schema to the latest migration; throws with the failing migration's name. */
export async function migrateArchive(db: Kysely<ArchiveDatabase>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider,
    migrationTableName: "cronscale_migrations",
    migrationLockTableName: "cronscale_migrations_lock",
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error) {
    throw new Error(
      `archive migration ${failed?.migrationName ?? ""} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
