import type { ExecutionArchive } from "../../../src/archive/store.ts";
import { kubectl } from "../../support/cluster.ts";
import { executions, getTask } from "../scheduledtask/helpers.ts";

// What the archive test prints when it fails, so a failure explains itself: the task's records
// in etcd and in the archive, its Jobs, its conditions, and the operator's recent log lines about
// it (all with runs named by their run-now token instead of their Job's hash).

/** What one diagnosis reads from. */
export interface DiagnoseFrom {
  namespace: string;
  task: string;
  archive: ExecutionArchive;
  /** The in-process operator's log lines (pino JSON). */
  logLines: readonly string[];
  /** "run 3" for the Job (or record) of run 3; the name itself for any other. */
  runOf: (jobName: string) => string;
}

const safe = async (f: () => Promise<string>) => f().catch((err: unknown) => `unreadable: ${String(err)}`);

/** A multi-line account of the task's state, for a failure message. */
export async function diagnose(d: DiagnoseFrom): Promise<string> {
  const etcd = await safe(async () =>
    (await executions(d.namespace, d.task))
      .map(
        (e) =>
          `  ${d.runOf(e.spec.jobName)} completed ${e.spec.completionTime}` +
          `${e.metadata.deletionTimestamp ? ` deleting since ${e.metadata.deletionTimestamp}` : ""}`,
      )
      .join("\n"),
  );
  const archived = await safe(async () =>
    (await d.archive.history({ namespace: d.namespace, taskName: d.task, limit: 100 }))
      .map((r) => `  ${d.runOf(r.spec.jobName)} completed ${r.spec.completionTime}`)
      .join("\n"),
  );
  const jobs = await safe(async () => {
    const r = await kubectl(["get", "jobs", "-l", `cronscale.io/task=${d.task}`, "-o", "json"], {
      namespace: d.namespace,
    });
    const items = (
      JSON.parse(r.stdout) as {
        items: { metadata: { name: string }; status?: { completionTime?: string; succeeded?: number } }[];
      }
    ).items;
    return items
      .map((j) => `  ${d.runOf(j.metadata.name)} completed ${j.status?.completionTime ?? "-"}`)
      .join("\n");
  });
  const conditions = await safe(async () =>
    ((await getTask(d.namespace, d.task))?.status?.conditions ?? [])
      .map((c) => `  ${c.type}=${c.status} ${c.reason}: ${c.message}`)
      .join("\n"),
  );
  // The operator logs one JSON object a line; keep what concerns this task (not debug), newest last.
  const logs = d.logLines
    .flatMap((l) => l.split("\n"))
    .filter((l) => !l.includes('"level":"debug"') && (l.includes(d.task) || /"level":"(warn|error)"/.test(l)))
    .slice(-40)
    .map((l) => {
      try {
        const { time, level, msg, task, execution, job, deleted, err } = JSON.parse(l) as Record<
          string,
          unknown
        >;
        const run = (v: unknown) => (typeof v === "string" ? `${v} (${d.runOf(v)})` : v);
        const fields = { task, execution: run(execution), job: run(job), deleted, err };
        const kept = Object.entries(fields).filter(([, v]) => v !== undefined);
        return `  ${time} ${level} ${msg} ${JSON.stringify(Object.fromEntries(kept))}`;
      } catch {
        return `  ${l}`;
      }
    })
    .join("\n");
  return [
    `TaskExecutions in etcd:\n${etcd || "  none"}`,
    `runs in the archive:\n${archived || "  none"}`,
    `Jobs:\n${jobs || "  none"}`,
    `task conditions:\n${conditions || "  none"}`,
    `operator log (this task, warnings and errors):\n${logs || "  none"}`,
  ].join("\n");
}
