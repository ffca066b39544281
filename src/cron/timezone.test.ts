import { describe, expect, it } from "vitest";
import { nextRuns, validateTimezone } from "./index.ts";

describe("validateTimezone accepts what Kubernetes (Go tzdata) knows and the zone data here has", () => {
  it.each([
    "UTC",
    "Etc/UTC",
    "Europe/Berlin",
    "America/Argentina/Buenos_Aires",
    "Asia/Kathmandu",
    "US/Eastern",
    "Asia/Calcutta",
    "Etc/GMT-5",
    "GMT+0",
  ])("accepts %j", (zone) => {
    expect(validateTimezone(zone)).toEqual([]);
  });

  it.each([
    ["", "required", "spec.timezone: must not be empty"],
    ["Local", "local", 'spec.timezone: "Local" is not allowed; name an IANA zone such as "Europe/Berlin"'],
    ["local", "local", 'spec.timezone: "local" is not allowed; name an IANA zone such as "Europe/Berlin"'],
    [
      "+05:00",
      "fixed-offset",
      'spec.timezone: "+05:00" is a fixed offset, not an IANA zone name; use e.g. "UTC" or "Etc/GMT-5" (= UTC+5)',
    ],
    [
      "UTC+5",
      "fixed-offset",
      'spec.timezone: "UTC+5" is a fixed offset, not an IANA zone name; use e.g. "UTC" or "Etc/GMT-5" (= UTC+5)',
    ],
    [
      "america/new_york",
      "unknown-zone",
      'spec.timezone: unknown time zone "america/new_york" (names are case-sensitive: did you mean "America/New_York"?)',
    ],
    [
      "Mars/Olympus",
      "unknown-zone",
      'spec.timezone: unknown time zone "Mars/Olympus"; use an IANA zone name such as "Europe/Berlin"',
    ],
    [
      "Europe/../Berlin",
      "unknown-zone",
      'spec.timezone: unknown time zone "Europe/../Berlin"; use an IANA zone name such as "Europe/Berlin"',
    ],
    // ICU still knows these; Go's tzdata (and so Kubernetes) does not.
    [
      "US/Pacific-New",
      "unknown-zone",
      'spec.timezone: unknown time zone "US/Pacific-New"; use an IANA zone name such as "Europe/Berlin"',
    ],
    [
      "SystemV/AST4",
      "unknown-zone",
      'spec.timezone: unknown time zone "SystemV/AST4"; use an IANA zone name such as "Europe/Berlin"',
    ],
  ])("refuses %j (%s)", (zone, rule, message) => {
    expect(validateTimezone(zone)).toEqual([
      { field: "timezone", path: "spec.timezone", value: zone, rule, message },
    ]);
  });

  it("nextRuns refuses a zone it cannot evaluate instead of guessing", () => {
    expect(() => nextRuns("* * * * *", "Mars/Olympus", new Date(0), 1)).toThrow(
      /unknown time zone "Mars\/Olympus"/,
    );
  });
});
