import { goAddDate, goDate, goTruncate, wall } from "./gotime.ts";
import { parseSchedule } from "./parse.ts";
import type { CronSchedule } from "./types.ts";
import { knowsZone } from "./zone.ts";

// A port of robfig/cron v3's SpecSchedule.Next (the scheduler inside the Kubernetes CronJob
// controller), written from its documented algorithm: find the first matching month, then day,
// hour, minute and second, each loop stepping its own field with Go time arithmetic in the
// schedule's zone and restarting from the month when a field wraps. Reproducing the same steps,
// not just the same "matching" rule, is what makes DST behave identically (see README.md).

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

function dayMatches(s: CronSchedule, zone: string, t: number): boolean {
  const w = wall(zone, t);
  const domMatch = s.dom[w.day] === true;
  const dowMatch = s.dow[w.weekday] === true;
  // robfig: if either field is a plain `*` (or `*/1`), both must match; otherwise either may.
  return s.domStar || s.dowStar ? domMatch && dowMatch : domMatch || dowMatch;
}

/** Smallest k in 1..limit with set[(start + k) % size] true, or limit when none before the wrap. */
function stepsToNext(set: readonly boolean[], start: number, size: number): number {
  for (let k = 1; start + k < size; k++) if (set[start + k]) return k;
  return size - start;
}

/**
 * The first activation strictly after `from` (at whole-second precision), in `zone`, exactly as
 * robfig/cron v3 computes it; undefined when nothing matches within five years (robfig returns
 * the zero time then).
 */
export function nextAfter(s: CronSchedule, zone: string, from: Date): Date | undefined {
  let t = goTruncate(from.getTime(), SECOND) + SECOND;
  let added = false;
  const yearLimit = wall(zone, t).year + 5;

  wrap: for (;;) {
    if (wall(zone, t).year > yearLimit) return undefined;

    while (!s.month[wall(zone, t).month]) {
      if (!added) {
        added = true;
        const w = wall(zone, t);
        t = goDate(zone, w.year, w.month, 1, 0, 0, 0);
      }
      t = goAddDate(zone, t, 0, 1, 0);
      if (wall(zone, t).month === 1) continue wrap;
    }

    while (!dayMatches(s, zone, t)) {
      if (!added) {
        added = true;
        const w = wall(zone, t);
        t = goDate(zone, w.year, w.month, w.day, 0, 0, 0);
      }
      t = goAddDate(zone, t, 0, 0, 1);
      // robfig: midnight may not exist (or exist twice); pull the time back to 00:xx.
      const h = wall(zone, t).hour;
      if (h !== 0) t += h > 12 ? (24 - h) * HOUR : -h * HOUR;
      if (wall(zone, t).day === 1) continue wrap;
    }

    while (!s.hour[wall(zone, t).hour]) {
      if (!added) {
        added = true;
        const w = wall(zone, t);
        t = goDate(zone, w.year, w.month, w.day, w.hour, 0, 0);
      }
      t = advance(zone, t, HOUR, (w) => w.hour, s.hour, 24);
      if (wall(zone, t).hour === 0) continue wrap;
    }

    while (!s.minute[wall(zone, t).minute]) {
      if (!added) {
        added = true;
        t = goTruncate(t, MINUTE);
      }
      t = advance(zone, t, MINUTE, (w) => w.minute, s.minute, 60);
      if (wall(zone, t).minute === 0) continue wrap;
    }

    // The standard parser fixes seconds to 0.
    const sec = wall(zone, t).second;
    if (sec !== 0) {
      if (!added) {
        added = true;
        t = goTruncate(t, SECOND);
      }
      t += (60 - sec) * SECOND;
      continue;
    }

    return new Date(t);
  }
}

/**
 * One or several of robfig's single-unit steps at once. robfig adds one unit at a time and
 * stops at the first matching value or at the wrap to 0; when the zone's offset does not change
 * over the jump, the wall field moves in lockstep with the instant and the jump lands on the
 * same value. Across an offset change it falls back to a single step, like robfig.
 */
function advance(
  zone: string,
  t: number,
  unit: number,
  get: (w: ReturnType<typeof wall>) => number,
  set: readonly boolean[],
  size: number,
): number {
  const k = stepsToNext(set, get(wall(zone, t)), size);
  const jumped = t + k * unit;
  if (k > 1 && sameOffsetThroughout(zone, t, jumped)) return jumped;
  return t + unit;
}

function sameOffsetThroughout(zone: string, a: number, b: number): boolean {
  const wa = wall(zone, a);
  const wb = wall(zone, b);
  const wallDelta =
    Date.UTC(wb.year, wb.month - 1, wb.day, wb.hour, wb.minute, wb.second) -
    Date.UTC(wa.year, wa.month - 1, wa.day, wa.hour, wa.minute, wa.second);
  // Equal end offsets are not enough in principle (a change and its reversal inside the jump),
  // but zones change offset months apart, and jumps here are at most a day.
  return wallDelta === b - a;
}

/**
 * The next `count` activations after `from`, each computed from the previous one, which is
 * the sequence the Kubernetes CronJob controller follows (it calls Next from the last schedule
 * time). Stops early when robfig would return the zero time.
 */
export function nextRuns(expr: string, zone: string, from: Date, count: number): Date[] {
  // Parsing is remembered by expression (parse.ts): every reconcile of a task asks for this.
  const s = parseSchedule(expr);
  if (!knowsZone(zone)) throw new RangeError(`unknown time zone "${zone}"`);
  const out: Date[] = [];
  let t = from;
  for (let i = 0; i < count; i++) {
    const n = nextAfter(s, zone, t);
    if (!n) break;
    out.push(n);
    t = n;
  }
  return out;
}
