import { sumCosts } from "../controllers/scheduledtask/billing.ts";
import type { ArchivedRun, ExecutionArchive, HistoryQuery, RunSummary, UsageRow } from "./store.ts";

// In-memory ExecutionArchive for the controllers' unit tests (the SQL itself is tested against a
// real PostgreSQL in store.test.ts). `down = true` makes every call fail, as an outage would.

/** Newest completion first, then name descending (PgExecutionArchive's order). */
const byPosition = (
  a: { name: string; spec: { completionTime: string } },
  b: { name: string; spec: { completionTime: string } },
) => Date.parse(b.spec.completionTime) - Date.parse(a.spec.completionTime) || b.name.localeCompare(a.name);

const key = (r: { namespace: string; name: string; taskUid: string }) =>
  `${r.namespace}/${r.name}/${r.taskUid}`;

/** Runs and usage in maps; same contract as PgExecutionArchive. */
export class MemoryExecutionArchive implements ExecutionArchive {
  readonly runs = new Map<string, ArchivedRun>();
  /** Every run ever counted (usage and its ledger outlive pruning, as in the real archive). */
  private readonly counted: ArchivedRun[] = [];
  private readonly billed = new Set<string>();
  down = false;

  private check(): void {
    if (this.down) throw new Error("connect ECONNREFUSED (archive down)");
  }

  async insert(runs: readonly ArchivedRun[]): Promise<number> {
    this.check();
    let n = 0;
    for (const r of runs) {
      if (this.runs.has(key(r))) continue;
      this.runs.set(key(r), structuredClone(r));
      if (!this.billed.has(key(r))) this.counted.push(r);
      this.billed.add(key(r));
      n++;
    }
    return n;
  }

  async archived(namespace: string, taskUid: string, names: readonly string[]): Promise<Set<string>> {
    this.check();
    return new Set(names.filter((name) => this.runs.has(key({ namespace, name, taskUid }))));
  }

  async prune(before: Date): Promise<number> {
    this.check();
    let n = 0;
    for (const [k, r] of this.runs) {
      if (Date.parse(r.spec.completionTime) < before.getTime()) {
        this.runs.delete(k);
        n++;
      }
    }
    return n;
  }

  async history(q: HistoryQuery): Promise<RunSummary[]> {
    this.check();
    return [...this.runs.values()]
      .filter((r) => r.namespace === q.namespace && r.spec.taskName === q.taskName)
      .filter((r) => !q.since || Date.parse(r.spec.completionTime) >= q.since.getTime())
      .filter((r) => !q.failedOnly || r.spec.result !== "Succeeded")
      .filter((r) => !q.result || r.spec.result === q.result)
      .sort(byPosition)
      .filter((r) => !q.after || byPosition(r, { name: q.after.name, spec: q.after }) > 0)
      .slice(0, q.limit)
      .map((r) => {
        const { output: _o, ...spec } = r.spec;
        return { name: r.name, spec };
      });
  }

  async run(namespace: string, taskName: string, name?: string): Promise<ArchivedRun | undefined> {
    this.check();
    return [...this.runs.values()]
      .filter((r) => r.namespace === namespace && r.spec.taskName === taskName && (!name || r.name === name))
      .sort((a, b) => b.spec.completionTime.localeCompare(a.spec.completionTime))[0];
  }

  async usage(namespace: string, month: string, taskName?: string): Promise<UsageRow[]> {
    this.check();
    const rows = new Map<string, ArchivedRun[]>();
    for (const r of this.counted) {
      if (r.namespace !== namespace || !r.spec.completionTime.startsWith(month)) continue;
      if (taskName && r.spec.taskName !== taskName) continue;
      const k = `${r.spec.taskName}|${r.spec.currency ?? ""}`;
      rows.set(k, [...(rows.get(k) ?? []), r]);
    }
    return [...rows.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([, rs]) => ({
        namespace,
        taskName: rs[0]?.spec.taskName ?? "",
        month,
        currency: rs[0]?.spec.currency ?? "",
        runs: rs.length,
        billedSeconds: rs.reduce((n, r) => n + (r.spec.billedSeconds ?? 0), 0),
        cost: sumCosts(rs.map((r) => r.spec.cost ?? "0")),
      }));
  }

  async close(): Promise<void> {}
}
