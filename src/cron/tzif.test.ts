import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parsePosixTz, parseTzif, tzifOffset } from "./tzif.ts";
import { knowsZone, zoneOffset } from "./zone.ts";

// Against the system's TZif files (Debian's tzdata; hack/cluster/host-deps.sh installs it).
const zone = (name: string) => parseTzif(readFileSync(`/usr/share/zoneinfo/${name}`));
const at = (iso: string) => Date.parse(iso) / 1000;
const hours = (z: ReturnType<typeof zone>, iso: string) => tzifOffset(z, at(iso)) / 3600;

describe("TZif data, looked up as Go's time package does", () => {
  it("reads transitions, the time before the first one, and the footer rule after the last", () => {
    const berlin = zone("Europe/Berlin");
    expect(hours(berlin, "2026-01-15T12:00:00Z")).toBe(1);
    expect(hours(berlin, "2026-07-15T12:00:00Z")).toBe(2);
    // 2026-03-29 01:00 UTC: 02:00 CET becomes 03:00 CEST; one second before, still CET.
    expect(hours(berlin, "2026-03-29T00:59:59Z")).toBe(1);
    expect(hours(berlin, "2026-03-29T01:00:00Z")).toBe(2);
    // Far beyond any transition in the file: the POSIX footer decides.
    expect(hours(berlin, "2091-07-01T00:00:00Z")).toBe(2);
    expect(hours(berlin, "2091-12-01T00:00:00Z")).toBe(1);
    expect(hours(berlin, "2091-10-28T00:59:59Z")).toBe(2);
    expect(hours(berlin, "2091-10-28T01:00:00Z")).toBe(1);
    // Local mean time before railway time (Go's first standard zone): +0:53:28.
    expect(tzifOffset(berlin, at("1850-01-01T00:00:00Z"))).toBe(3208);
  });

  it("follows southern-hemisphere rules across the new year", () => {
    const sydney = zone("Australia/Sydney");
    expect(hours(sydney, "2090-01-15T00:00:00Z")).toBe(11);
    expect(hours(sydney, "2090-07-15T00:00:00Z")).toBe(10);
  });

  it("reads zones without transitions", () => {
    expect(hours(zone("Etc/GMT-5"), "2030-01-01T00:00:00Z")).toBe(5);
  });

  it("parses POSIX TZ strings with quoted names, minutes, negative and Julian rule times", () => {
    expect(parsePosixTz("<+0330>-3:30")).toEqual({ stdOffset: 12600 });
    expect(parsePosixTz("EST5EDT")).toMatchObject({
      stdOffset: -18000,
      dstOffset: -14400,
      start: { kind: "mwd", mon: 3, week: 2, day: 0, time: 7200 },
      end: { kind: "mwd", mon: 11, week: 1, day: 0, time: 7200 },
    });
    // Ireland: "standard" time is summer time, winter is negative DST.
    expect(parsePosixTz("IST-1GMT0,M10.5.0,M3.5.0/1")).toMatchObject({ stdOffset: 3600, dstOffset: 0 });
    expect(parsePosixTz("<-02>2<-01>,M3.5.0/-1,M10.5.0/0")?.start?.time).toBe(-3600);
    expect(parsePosixTz("XXX3YYY,J60/2,300")).toMatchObject({
      start: { kind: "julian", day: 60 },
      end: { kind: "doy", day: 300 },
    });
    expect(parsePosixTz("AB3")).toBeUndefined();
    expect(parsePosixTz("EST5EDT,M3.2.0")).toBeUndefined();
  });

  it("refuses data that is not TZif", () => {
    expect(() => parseTzif(new TextEncoder().encode("not a zone file at all, no header here......"))).toThrow(
      /not a TZif file/,
    );
  });
});

describe("zone lookup", () => {
  it("finds zones by their exact name and never outside the zoneinfo directories", () => {
    expect(knowsZone("Europe/Berlin")).toBe(true);
    expect(knowsZone("europe/berlin")).toBe(false);
    expect(knowsZone("Europe/../Europe/Berlin")).toBe(false);
    expect(knowsZone("/usr/share/zoneinfo/UTC")).toBe(false);
    expect(knowsZone("UTC")).toBe(true);
    expect(zoneOffset("Asia/Kathmandu", Date.parse("2026-01-01T00:00:00Z"))).toBe(20_700_000);
    expect(() => zoneOffset("Mars/Olympus", 0)).toThrow(/unknown time zone/);
  });
});
