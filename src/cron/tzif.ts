// Zone data read from TZif files (RFC 8536), looked up exactly as Go's `time` package does
// (time/zoneinfo.go, zoneinfo_read.go): kube-controller-manager decides when a CronJob fires
// with Go's time.LoadLocation, which reads these files, so next-run times computed from the same
// files agree with the cluster to the second. ICU's data (Intl) is compiled into Node and is
// often of another tzdata release, which made some next-run times differ from the cluster's.
// Written by hand: no package on npm reads TZif with Go's rules for the time before the first
// transition and after the last one (the POSIX TZ footer).

const OMEGA = Number.MAX_SAFE_INTEGER;

interface ZoneType {
  offset: number; // seconds east of UTC
  isDst: boolean;
}

interface Rule {
  kind: "julian" | "doy" | "mwd";
  day: number;
  week: number;
  mon: number;
  time: number; // seconds after local midnight
}

interface Extend {
  stdOffset: number;
  dstOffset?: number;
  start?: Rule;
  end?: Rule;
}

/** A parsed TZif file: transitions (Unix seconds) into zone types, and the rule after the last. */
export interface TzifZone {
  types: ZoneType[];
  when: number[];
  index: number[];
  extend?: Extend;
}

/** Parses TZif data (version 1, or the 64-bit section of version 2 and later). */
export function parseTzif(buf: Uint8Array): TzifZone {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const magic = String.fromCharCode(...buf.subarray(0, 4));
  if (magic !== "TZif") throw new Error("not a TZif file");
  const version = buf[4] ?? 0;
  const counts = (at: number) => {
    const n = (k: number) => view.getUint32(at + 20 + 4 * k);
    return { isut: n(0), isstd: n(1), leap: n(2), time: n(3), type: n(4), char: n(5) };
  };
  let at = 0;
  let c = counts(0);
  let timeSize = 4;
  if (version >= 0x32 /* '2' */) {
    at = 44 + c.time * 4 + c.time + c.type * 6 + c.char + c.leap * 8 + c.isstd + c.isut;
    if (String.fromCharCode(...buf.subarray(at, at + 4)) !== "TZif") throw new Error("bad TZif v2 header");
    c = counts(at);
    timeSize = 8;
  }
  let p = at + 44;
  const when: number[] = [];
  for (let i = 0; i < c.time; i++, p += timeSize)
    when.push(timeSize === 8 ? Number(view.getBigInt64(p)) : view.getInt32(p));
  const index: number[] = [];
  for (let i = 0; i < c.time; i++) index.push(buf[p++] ?? 0);
  const types: ZoneType[] = [];
  for (let i = 0; i < c.type; i++, p += 6) types.push({ offset: view.getInt32(p), isDst: buf[p + 4] !== 0 });
  p += c.char + c.leap * (timeSize + 4) + c.isstd + c.isut;
  let extend: Extend | undefined;
  if (timeSize === 8 && buf[p] === 0x0a) {
    const endAt = buf.indexOf(0x0a, p + 1);
    if (endAt > p) extend = parsePosixTz(new TextDecoder().decode(buf.subarray(p + 1, endAt)));
  }
  if (types.length === 0) throw new Error("TZif file without zone types");
  // Go: a file without transitions (e.g. Etc/GMT+5) gets one at the beginning of time.
  if (when.length === 0) {
    when.push(-OMEGA);
    index.push(0);
  }
  return { types, when, index, extend };
}

/** Go's lookupFirstZone: the zone type in force before the first transition. */
function firstZone(z: TzifZone): number {
  if (!z.index.includes(0)) return 0;
  const first = z.index[0] ?? 0;
  if (z.types[first]?.isDst) {
    for (let i = first - 1; i >= 0; i--) if (!z.types[i]?.isDst) return i;
  }
  const std = z.types.findIndex((t) => !t.isDst);
  return Math.max(std, 0);
}

/** An offset and the span of Unix seconds [start, end) it surely holds for. */
export interface Span {
  offset: number;
  start: number;
  end: number;
}

/** UTC offset (seconds) of the zone at Unix second `sec` and its span, as Go's Location.lookup. */
export function tzifSpan(z: TzifZone, sec: number): Span {
  const first = z.when[0] ?? OMEGA;
  if (sec < first) return { offset: z.types[firstZone(z)]?.offset ?? 0, start: -OMEGA, end: first };
  let lo = 0;
  let hi = z.when.length;
  let end = OMEGA;
  while (hi - lo > 1) {
    const m = (lo + hi) >>> 1;
    const lim = z.when[m] ?? OMEGA;
    if (sec < lim) {
      end = lim;
      hi = m;
    } else lo = m;
  }
  if (lo === z.when.length - 1 && z.extend) return extendSpan(z.extend, sec, z.when[lo] ?? -OMEGA);
  return { offset: z.types[z.index[lo] ?? 0]?.offset ?? 0, start: z.when[lo] ?? -OMEGA, end };
}

/** UTC offset (seconds) of the zone at Unix second `sec`. */
export function tzifOffset(z: TzifZone, sec: number): number {
  return tzifSpan(z, sec).offset;
}

// POSIX TZ strings ("CET-1CEST,M3.5.0,M10.5.0/3"), with the RFC 8536 extensions Go accepts
// (hours up to 167, negative rule times).

function parseName(s: string): string | undefined {
  if (s.startsWith("<")) {
    const end = s.indexOf(">");
    return end < 0 ? undefined : s.slice(end + 1);
  }
  const m = /^[^0-9,+-]{3,}/.exec(s);
  return m ? s.slice(m[0].length) : undefined;
}

/** "[+-]hh[:mm[:ss]]" → [seconds, rest]. */
function parseOffset(s: string): [number, string] | undefined {
  const m = /^([+-]?)(\d{1,3})(?::(\d{1,2})(?::(\d{1,2}))?)?/.exec(s);
  if (!m) return undefined;
  const secs = Number(m[2]) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0);
  if (Number(m[2]) > 24 * 7) return undefined;
  return [m[1] === "-" ? -secs : secs, s.slice(m[0].length)];
}

function parseRule(s: string): [Rule, string] | undefined {
  const julian = /^J(\d{1,3})/.exec(s);
  const doy = /^(\d{1,3})/.exec(s);
  const mwd = /^M(\d{1,2})\.(\d)\.(\d)/.exec(s);
  let rule: Rule;
  let m: RegExpExecArray;
  if (julian) [rule, m] = [{ kind: "julian", day: Number(julian[1]), week: 0, mon: 0, time: 7200 }, julian];
  else if (doy) [rule, m] = [{ kind: "doy", day: Number(doy[1]), week: 0, mon: 0, time: 7200 }, doy];
  else if (mwd)
    [rule, m] = [
      { kind: "mwd", mon: Number(mwd[1]), week: Number(mwd[2]), day: Number(mwd[3]), time: 7200 },
      mwd,
    ];
  else return undefined;
  let rest = s.slice(m[0].length);
  if (rest.startsWith("/")) {
    const t = parseOffset(rest.slice(1));
    if (!t) return undefined;
    [rule.time, rest] = t;
  }
  return [rule, rest];
}

/** Parses a POSIX TZ string as Go's tzset does; undefined when Go would not use it. */
export function parsePosixTz(tz: string): Extend | undefined {
  let s = parseName(tz);
  const std = s === undefined ? undefined : parseOffset(s);
  if (!std) return undefined;
  const stdOffset = -std[0] || 0; // POSIX offsets are west of UTC (and no -0)
  s = std[1];
  if (s === "" || s.startsWith(",")) return { stdOffset };
  s = parseName(s);
  if (s === undefined) return undefined;
  let dstOffset = stdOffset + 3600;
  if (s !== "" && !s.startsWith(",")) {
    const dst = parseOffset(s);
    if (!dst) return undefined;
    dstOffset = -dst[0] || 0;
    s = dst[1];
  }
  if (s === "") s = ",M3.2.0,M11.1.0";
  if (!s.startsWith(",") && !s.startsWith(";")) return undefined;
  const start = parseRule(s.slice(1));
  if (!start?.[1].startsWith(",")) return undefined;
  const end = parseRule(start[1].slice(1));
  if (end?.[1] !== "") return undefined;
  return { stdOffset, dstOffset, start: start[0], end: end[0] };
}

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** Go's tzruleTime: seconds from the start of `year` (UTC) at which `r` happens at offset `off`. */
function ruleTime(year: number, r: Rule, off: number): number {
  let day: number;
  if (r.kind === "julian") day = r.day - 1 + (isLeap(year) && r.day >= 60 ? 1 : 0);
  else if (r.kind === "doy") day = r.day;
  else {
    const first = new Date(Date.UTC(year, r.mon - 1, 1));
    const daysIn = new Date(Date.UTC(year, r.mon, 0)).getUTCDate();
    let d = (r.day - first.getUTCDay() + 7) % 7;
    for (let i = 1; i < r.week && d + 7 < daysIn; i++) d += 7;
    day = Math.round((first.getTime() - Date.UTC(year, 0, 1)) / 86_400_000) + d;
  }
  return day * 86_400 + r.time - off;
}

function extendSpan(e: Extend, sec: number, lastTransition: number): Span {
  if (e.dstOffset === undefined || !e.start || !e.end)
    return { offset: e.stdOffset, start: lastTransition, end: OMEGA };
  const year = new Date(sec * 1000).getUTCFullYear();
  const yearStart = Date.UTC(year, 0, 1) / 1000;
  const yearEnd = Date.UTC(year + 1, 0, 1) / 1000;
  const ysec = sec - yearStart;
  let start = ruleTime(year, e.start, e.stdOffset);
  let end = ruleTime(year, e.end, e.dstOffset);
  let [stdOff, dstOff] = [e.stdOffset, e.dstOffset];
  // Southern hemisphere: daylight time spans the new year; Go swaps the roles.
  if (end < start) {
    [start, end] = [end, start];
    [stdOff, dstOff] = [dstOff, stdOff];
  }
  if (ysec < start) return { offset: stdOff, start: yearStart, end: yearStart + start };
  if (ysec >= end) return { offset: stdOff, start: yearStart + end, end: yearEnd };
  return { offset: dstOff, start: yearStart + start, end: yearStart + end };
}
