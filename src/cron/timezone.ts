import type { ValidationIssue } from "./types.ts";
import { knowsZone } from "./zone.ts";
import { GO_ZONE_NAMES } from "./zones.generated.ts";

// A zone must be one Kubernetes accepts in the CronJob's spec.timeZone (Go's time.LoadLocation:
// the names of Go's tzdata, GO_ZONE_NAMES) and whose TZif data this operator can read to compute
// next-run times (zone.ts). Go's lookup is case-sensitive and has no fixed offsets ("+05:00") or
// "Local" for CronJobs, so those are refused with a hint.

// kube-apiserver's per-component rule for spec.timeZone (pkg/apis/batch/validation).
const K8S_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;

const lowerIndex = new Map<string, string>();
for (const z of GO_ZONE_NAMES) lowerIndex.set(z.toLowerCase(), z);

function issue(value: string, rule: string, text: string): ValidationIssue {
  return { field: "timezone", path: "spec.timezone", value, rule, message: `spec.timezone: ${text}` };
}

/**
 * Validates the name alone, as Kubernetes (Go's tzdata names) accepts it: what the CRD's CEL rule
 * enumerates, the same on every machine whatever zone files it has.
 */
export function validateTimezoneName(zone: string): ValidationIssue[] {
  if (zone === "") return [issue(zone, "required", "must not be empty")];
  if (zone.toLowerCase() === "local") {
    return [issue(zone, "local", `"${zone}" is not allowed; name an IANA zone such as "Europe/Berlin"`)];
  }
  if (!GO_ZONE_NAMES.has(zone) && /^(UTC|GMT)?[+-]\d{1,2}(:?\d{2})?$/i.test(zone)) {
    return [
      issue(
        zone,
        "fixed-offset",
        `"${zone}" is a fixed offset, not an IANA zone name; use e.g. "UTC" or "Etc/GMT-5" (= UTC+5)`,
      ),
    ];
  }
  const partsOk = zone
    .split("/")
    .every((p) => p !== "." && p !== ".." && !p.startsWith("-") && K8S_PART.test(p));
  if (!partsOk || !GO_ZONE_NAMES.has(zone)) {
    const suggestion = lowerIndex.get(zone.toLowerCase());
    const hint = suggestion
      ? ` (names are case-sensitive: did you mean "${suggestion}"?)`
      : `; use an IANA zone name such as "Europe/Berlin"`;
    return [issue(zone, "unknown-zone", `unknown time zone "${zone}"${hint}`)];
  }
  return [];
}

/** Validates an IANA zone name as Kubernetes (Go tzdata) accepts it and this operator can read it. */
export function validateTimezone(zone: string): ValidationIssue[] {
  const nameIssues = validateTimezoneName(zone);
  if (nameIssues.length > 0) return nameIssues;
  if (!knowsZone(zone)) {
    return [issue(zone, "unsupported-zone", `time zone "${zone}" is not in this operator's time zone data`)];
  }
  return [];
}
