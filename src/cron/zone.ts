// UTC offsets of an IANA zone at an instant, from the ICU time zone data built into Node (Intl),
// memoised per zone and UTC hour. Next-run computation asks for many offsets close together
// (robfig steps minute by minute and hour by hour), and Intl costs microseconds per call.

const HOUR = 3_600_000;
const MAX_CACHED_HOURS = 200_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      era: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, f);
  }
  return f;
}

/** Offset in ms (local wall clock minus UTC) straight from Intl, at whole-second precision. */
function intlOffset(zone: string, ms: number): number {
  const instant = Math.floor(ms / 1000) * 1000;
  const p: Record<string, number> = {};
  let bc = false;
  for (const part of formatter(zone).formatToParts(instant)) {
    if (part.type === "era") bc = part.value.startsWith("B");
    else if (part.type !== "literal") p[part.type] = Number(part.value);
  }
  const d = new Date(0);
  d.setUTCFullYear(bc ? 1 - (p.year ?? 0) : (p.year ?? 0), (p.month ?? 1) - 1, p.day ?? 1);
  d.setUTCHours(p.hour ?? 0, p.minute ?? 0, p.second ?? 0, 0);
  return d.getTime() - instant;
}

/** Per UTC hour: the offset at its start, and (rarely) the instant and offset of a change inside it. */
interface HourEntry {
  start: number;
  changeAt?: number;
  after?: number;
}

const hourCache = new Map<string, Map<number, HourEntry>>();

function hourEntry(zone: string, hourIndex: number): HourEntry {
  let zoneCache = hourCache.get(zone);
  if (!zoneCache) {
    zoneCache = new Map();
    hourCache.set(zone, zoneCache);
  }
  const hit = zoneCache.get(hourIndex);
  if (hit) return hit;
  if (zoneCache.size > MAX_CACHED_HOURS) zoneCache.clear();
  const t0 = hourIndex * HOUR;
  const start = intlOffset(zone, t0);
  const end = intlOffset(zone, t0 + HOUR - 1000);
  const entry: HourEntry = { start };
  if (end !== start) {
    // Bisect to the first second with the new offset. Zones change offset at most once an hour.
    let lo = t0; // offset === start here
    let hi = t0 + HOUR - 1000; // offset !== start here
    while (hi - lo > 1000) {
      const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
      if (intlOffset(zone, mid) === start) lo = mid;
      else hi = mid;
    }
    entry.changeAt = hi;
    entry.after = end;
  }
  zoneCache.set(hourIndex, entry);
  return entry;
}

/** UTC offset (ms) of `zone` at instant `ms`. */
export function zoneOffset(zone: string, ms: number): number {
  const e = hourEntry(zone, Math.floor(ms / HOUR));
  return e.changeAt !== undefined && ms >= e.changeAt ? (e.after ?? e.start) : e.start;
}

/** True when Intl (ICU) knows the zone, in any spelling. */
export function intlKnowsZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}
