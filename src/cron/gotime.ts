import { zoneOffset } from "./zone.ts";

// The few pieces of Go's `time` package that robfig/cron's SpecSchedule.Next uses, reproduced
// with their exact semantics, including Go's answer for wall-clock times that do not exist (DST
// gap) or exist twice (DST overlap). An instant is a number of ms since the Unix epoch; wall-clock
// fields are read in the schedule's zone.

/** Wall-clock fields of an instant in a zone (like Go's t.Date(), t.Clock(), t.Weekday()). */
export interface Wall {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: number; // 0 = Sunday
}

/** Reads the wall clock of `ms` in `zone`. */
export function wall(zone: string, ms: number): Wall {
  const d = new Date(ms + zoneOffset(zone, ms));
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    weekday: d.getUTCDay(),
  };
}

/**
 * Go's time.Date(y, mo, d, h, mi, s, 0, loc): out-of-range fields are normalised (month 13 is
 * January of the next year, day 32 rolls over...), then the wall time is converted with Go's
 * rule: take the offset in force at the wall time read as if it were UTC; if the resulting
 * instant lies outside that offset's period, use the offset in force at that instant instead.
 * For a gap this lands one offset-change early or late depending on the zone's side of UTC;
 * for an overlap it picks the first occurrence west of Greenwich and the second east of it.
 */
export function goDate(
  zone: string,
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  const unix = d.getTime();
  const guess = zoneOffset(zone, unix);
  return unix - zoneOffset(zone, unix - guess);
}

/** Go's t.AddDate(years, months, days): add to the wall-clock fields, then goDate. */
export function goAddDate(zone: string, ms: number, years: number, months: number, days: number): number {
  const w = wall(zone, ms);
  return goDate(zone, w.year + years, w.month + months, w.day + days, w.hour, w.minute, w.second);
}

/** Go's t.Truncate(d) for d dividing a minute: rounds the instant down (not the wall clock). */
export function goTruncate(ms: number, unitMs: number): number {
  return Math.floor(ms / unitMs) * unitMs;
}
