import { readFileSync } from "node:fs";
import { parseTzif, type Span, type TzifZone, tzifSpan } from "./tzif.ts";

// UTC offsets of an IANA zone, from the TZif files Go's time.LoadLocation reads — the data
// kube-controller-manager fires CronJobs by — found the way Go finds them: the directory named
// by $ZONEINFO, then the system's zoneinfo directories. The operator's image carries the
// system's (Debian's tzdata package); the cluster's controller manager reads its own host's or
// container's copy, so keeping both on a current tzdata keeps them in step.

const SYSTEM_SOURCES = [
  "/usr/share/zoneinfo",
  "/usr/share/lib/zoneinfo",
  "/usr/lib/locale/TZ",
  "/etc/zoneinfo",
];

const loaded = new Map<string, TzifZone | undefined>();
// The last span looked up per zone: next-run search asks for many offsets close together.
const lastSpan = new Map<TzifZone, Span>();

function sources(): string[] {
  const env = process.env.ZONEINFO;
  return env ? [env, ...SYSTEM_SOURCES] : SYSTEM_SOURCES;
}

/** Go's rule: no "..", no absolute paths. */
function safeName(zone: string): boolean {
  return (
    zone !== "" && !zone.startsWith("/") && !zone.startsWith("\\") && !zone.split(/[/\\]/).includes("..")
  );
}

/**
 * The zone's TZif data, or undefined when no source has it. Read once per zone and process
 * ($ZONEINFO included: reading the environment on every lookup would cost more than the lookup).
 */
function load(zone: string): TzifZone | undefined {
  const key = zone;
  const hit = loaded.get(key);
  if (hit !== undefined || loaded.has(key)) return hit;
  let found: TzifZone | undefined;
  if (safeName(zone) && zone !== "UTC") {
    for (const dir of sources()) {
      try {
        found = parseTzif(readFileSync(`${dir}/${zone}`));
        break;
      } catch {
        // not in this source (or not a TZif file): try the next, as Go does
      }
    }
  }
  loaded.set(key, found);
  return found;
}

/** UTC offset (ms, local wall clock minus UTC) of `zone` at instant `ms`; "UTC" needs no file. */
export function zoneOffset(zone: string, ms: number): number {
  if (zone === "UTC") return 0;
  const z = load(zone);
  if (!z) throw new RangeError(`unknown time zone "${zone}"`);
  const sec = Math.floor(ms / 1000);
  let span = lastSpan.get(z);
  if (!span || sec < span.start || sec >= span.end) {
    span = tzifSpan(z, sec);
    lastSpan.set(z, span);
  }
  return span.offset * 1000;
}

/** True when the zone's TZif data is found (exact spelling, as Go's lookup is case-sensitive). */
export function knowsZone(zone: string): boolean {
  return zone === "UTC" || load(zone) !== undefined;
}
