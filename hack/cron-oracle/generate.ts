import { zoneOffset } from "../../src/cron/zone.ts";

// Deterministic case generation for the differential test: cron expressions in every accepted
// form, junk strings for the validation comparison, and start times near DST transitions.

/** A seeded PRNG (mulberry32); same seed, same cases. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

const BOUNDS: readonly [number, number][] = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 7],
];

function item(r: Rand, lo: number, hi: number): string {
  const span = hi - lo;
  const a = int(r, lo, hi);
  const b = int(r, a, hi);
  const step = int(r, 1, Math.max(1, Math.min(span, r() < 0.7 ? 6 : span)));
  switch (pick(r, ["value", "value", "range", "rangeStep", "starStep"] as const)) {
    case "value":
      return r() < 0.05 ? `0${a}` : `${a}`;
    case "range":
      return `${a}-${b}`;
    case "rangeStep":
      return `${a}-${b}/${step}`;
    case "starStep":
      return `*/${step}`;
  }
}

/** One field: mostly `*`, else a single item or a comma list. */
function field(r: Rand, i: number, starWeight: number): string {
  const [lo, hi] = BOUNDS[i] ?? [0, 0];
  if (r() < starWeight) return r() < 0.9 ? "*" : "*/1";
  if (r() < 0.6) return item(r, lo, hi);
  const n = int(r, 2, 4);
  return Array.from({ length: n }, () => item(r, lo, hi)).join(",");
}

/** A random expression in the accepted grammar (it may still be one that never fires). */
export function randomExpression(r: Rand): string {
  // Star weights per field keep a good share of frequent schedules (where DST shows) while
  // covering restricted day-of-month/day-of-week pairs (robfig's OR rule).
  const weights = [0.15, 0.35, 0.6, 0.7, 0.6];
  return weights.map((w, i) => field(r, i, w)).join(" ");
}

const JUNK_TOKENS = [
  "*",
  "?",
  "/",
  "-",
  ",",
  "0",
  "1",
  "5",
  "7",
  "8",
  "12",
  "13",
  "24",
  "31",
  "32",
  "59",
  "60",
  "00",
  "007",
  "+5",
  "L",
  "W",
  "#",
  "MON",
  "jan",
  "Sun",
  "*/0",
  "*/1",
  "*/15",
  "*/60",
  "5/15",
  "1-5",
  "5-1",
  "1-5/2",
  "*-5",
  "x",
];

/** A random string that is often almost a cron expression, for the validation comparison. */
export function randomJunk(r: Rand): string {
  // Half are valid expressions with one field replaced or one item appended, so both "we
  // accept" and "we refuse" get thousands of inputs.
  if (r() < 0.5) {
    const fields = randomExpression(r).split(" ");
    const i = int(r, 0, 4);
    const junk = pick(r, JUNK_TOKENS);
    const roll = r();
    if (roll < 0.3) fields[i] = junk;
    else if (roll < 0.6) fields[i] = `${fields[i]},${junk}`;
    return fields.join(" ");
  }
  const specials = ["@hourly", "@daily", "@every 5m", "@reboot", "", "   ", "TZ=UTC * * * * *"];
  if (r() < 0.03) return pick(r, specials);
  const nFields = r() < 0.85 ? 5 : int(r, 1, 7);
  const fields: string[] = [];
  for (let i = 0; i < nFields; i++) {
    const parts = int(r, 1, 3);
    let f = "";
    for (let p = 0; p < parts; p++) f += (p > 0 && r() < 0.5 ? "," : "") + pick(r, JUNK_TOKENS);
    fields.push(f);
  }
  return fields.join(r() < 0.95 ? " " : "  ");
}

const DAY = 86_400_000;

/** Instants where `zone` changes its UTC offset between two dates (sampled daily, then bisected). */
export function transitions(zone: string, fromMs: number, toMs: number): number[] {
  const out: number[] = [];
  let prev = zoneOffset(zone, fromMs);
  for (let t = fromMs + DAY; t <= toMs; t += DAY) {
    const o = zoneOffset(zone, t);
    if (o !== prev) {
      let lo = t - DAY;
      let hi = t;
      while (hi - lo > 1000) {
        const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
        if (zoneOffset(zone, mid) === prev) lo = mid;
        else hi = mid;
      }
      out.push(hi);
      prev = o;
    }
  }
  return out;
}

/** A start time: uniform over the range, or shortly before a transition, or on an awkward second. */
export function randomStart(r: Rand, lo: number, hi: number, trans: readonly number[]): Date {
  const roll = r();
  if (trans.length > 0 && roll < 0.6) {
    const t = pick(r, trans);
    // Minutes to days before the change, sometimes right at it or just after.
    const before = pick(r, [60_000, 3_600_000, 7_200_000, DAY, 3 * DAY, 14 * DAY]);
    return new Date(t - Math.floor(r() * before) + (r() < 0.1 ? int(r, 0, 3) * 1_800_000 : 0));
  }
  const ms = lo + Math.floor(r() * (hi - lo));
  // Whole minutes most of the time (the controller calls Next from a schedule time), else any ms.
  return new Date(roll < 0.85 ? Math.floor(ms / 60_000) * 60_000 : ms);
}
