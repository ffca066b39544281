import type { ValidationIssue } from "./types.ts";
import { intlKnowsZone } from "./zone.ts";
import { GO_ZONE_NAMES } from "./zones.generated.ts";

// Two databases must agree on a zone: Go's tzdata decides what Kubernetes accepts in the
// CronJob's spec.timeZone and when the Job fires; Node's ICU data (Intl) is what this operator
// computes next-run times with. A zone is accepted only when both know it under exactly this
// spelling. Go's lookup is case-sensitive and has no fixed offsets ("+05:00") or "Local";
// ICU is case-insensitive and accepts offsets, so ICU alone would let through names the API
// server then refuses.

// kube-apiserver's per-component rule for spec.timeZone (pkg/apis/batch/validation).
const K8S_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;

const lowerIndex = new Map<string, string>();
for (const z of GO_ZONE_NAMES) lowerIndex.set(z.toLowerCase(), z);

function issue(value: string, rule: string, text: string): ValidationIssue {
  return { field: "timezone", path: "spec.timezone", value, rule, message: `spec.timezone: ${text}` };
}

/** Validates an IANA zone name as Kubernetes (Go tzdata) and Node (ICU) both accept it. */
export function validateTimezone(zone: string): ValidationIssue[] {
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
  if (!intlKnowsZone(zone)) {
    return [issue(zone, "unsupported-zone", `time zone "${zone}" is not in this operator's time zone data`)];
  }
  return [];
}
