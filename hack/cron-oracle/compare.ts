import { formatInZone, nextRuns, normalize } from "../../src/cron/index.ts";
import { zoneOffset } from "../../src/cron/zone.ts";
import { type OracleRequest, runOracle } from "./oracle.ts";

// Comparison helpers of the differential test (differential.test.ts).

const normalizeOffset = (s: string) => s.replace(/Z$/, "+00:00");

/**
 * Per zone, the first instant where Go's tzdata and Node's ICU data disagree on the UTC offset
 * (Infinity when they agree over the test range). Past it a difference is the data's, not the
 * algorithm's: such cases are counted and skipped, and the zones are printed.
 */
export function dataCutoffs(
  zones: readonly string[],
  trans: Map<string, number[]>,
  from: number,
  to: number,
): Map<string, number> {
  const answers = runOracle(
    zones.map(
      (zone): OracleRequest => ({
        op: "offsets",
        zone,
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
      }),
    ),
  );
  const out = new Map<string, number>();
  zones.forEach((zone, i) => {
    const go = answers[i]?.offsets ?? [];
    const ours: [number, number][] = [
      [from / 1000, zoneOffset(zone, from) / 1000],
      ...(trans.get(zone) ?? []).map((t): [number, number] => [t / 1000, zoneOffset(zone, t) / 1000]),
    ];
    let cutoff = Number.POSITIVE_INFINITY;
    for (let k = 0; k < Math.max(go.length, ours.length); k++) {
      const a = go[k];
      const b = ours[k];
      if (!a || !b || a[0] !== b[0] || a[1] !== b[1]) {
        cutoff = Math.min(a?.[0] ?? Number.POSITIVE_INFINITY, b?.[0] ?? Number.POSITIVE_INFINITY) * 1000;
        break;
      }
    }
    out.set(zone, cutoff);
  });
  return out;
}

/** One next-run comparison: `count` runs of `expr` in `zone` after `from`. */
export interface Case {
  expr: string;
  zone: string;
  from: Date;
  count: number;
}

/** Runs the cases through the oracle and through nextRuns; lists the differences. */
export function compareNext(
  cases: Case[],
  cutoffs: Map<string, number>,
): { mismatches: string[]; runs: number; dataSkipped: number } {
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
  let dataSkipped = 0;
  cases.forEach((c, i) => {
    const want = answers[i]?.error
      ? [`error: ${answers[i]?.error}`]
      : (answers[i]?.times ?? []).map(normalizeOffset);
    const dates = nextRuns(c.expr, c.zone, c.from, c.count);
    const cutoff = cutoffs.get(c.zone) ?? Number.POSITIVE_INFINITY;
    const lastWanted = Date.parse(answers[i]?.times?.at(-1) ?? "") || 0;
    if (Math.max(lastWanted, dates.at(-1)?.getTime() ?? 0, c.from.getTime()) >= cutoff - 86_400_000) {
      dataSkipped++;
      return;
    }
    const got = dates.map((d) => formatInZone(d, c.zone));
    runs += got.length;
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      mismatches.push(
        `${c.expr} | ${c.zone} | from ${c.from.toISOString()}\n  ours:   ${got.join(" ")}\n  robfig: ${want.join(" ")}`,
      );
    }
  });
  return { mismatches, runs, dataSkipped };
}
