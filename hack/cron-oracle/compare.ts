import { formatInZone, nextRuns, normalize } from "../../src/cron/index.ts";
import { type OracleRequest, runOracle } from "./oracle.ts";

// Comparison helpers of the differential test (differential.test.ts). Both sides read the same
// TZif files (oracle.ts zoneinfoDir), so every difference is the algorithm's: nothing is skipped.

const normalizeOffset = (s: string) => s.replace(/Z$/, "+00:00");

/** One next-run comparison: `count` runs of `expr` in `zone` after `from`. */
export interface Case {
  expr: string;
  zone: string;
  from: Date;
  count: number;
}

/** Runs the cases through the oracle and through nextRuns; lists the differences. */
export function compareNext(cases: Case[]): { mismatches: string[]; runs: number } {
  const answers = runOracle(
    cases.map(
      (c): OracleRequest => ({
        op: "next",
        expr: normalize(c.expr),
        zone: c.zone,
        from: c.from.toISOString(),
        count: c.count,
      }),
    ),
  );
  const mismatches: string[] = [];
  let runs = 0;
  cases.forEach((c, i) => {
    const want = answers[i]?.error
      ? [`error: ${answers[i]?.error}`]
      : (answers[i]?.times ?? []).map(normalizeOffset);
    const dates = nextRuns(c.expr, c.zone, c.from, c.count);
    const got = dates.map((d) => formatInZone(d, c.zone));
    runs += got.length;
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      mismatches.push(
        `${c.expr} | ${c.zone} | from ${c.from.toISOString()}\n  ours:   ${got.join(" ")}\n  robfig: ${want.join(" ")}`,
      );
    }
  });
  return { mismatches, runs };
}
