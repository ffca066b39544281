/**
 * Label selectors in the Kubernetes string syntax, evaluated locally (fake client, informer cache).
 * Supports `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`.
 */

type Requirement =
  | { op: "eq" | "neq"; key: string; value: string }
  | { op: "exists" | "notexists"; key: string }
  | { op: "in" | "notin"; key: string; values: string[] };

/** Splits on commas that are not inside parentheses. */
function splitTerms(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  out.push(cur);
  return out.map((t) => t.trim()).filter((t) => t.length > 0);
}

function parseTerm(t: string): Requirement {
  const set = /^([^\s!=]+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(t);
  if (set) {
    const values = set[3]!.split(",").map((v) => v.trim());
    return { op: set[2] as "in" | "notin", key: set[1]!, values };
  }
  const neq = /^([^\s!=]+)\s*!=\s*(\S*)$/.exec(t);
  if (neq) return { op: "neq", key: neq[1]!, value: neq[2]! };
  const eq = /^([^\s!=]+)\s*==?\s*(\S*)$/.exec(t);
  if (eq) return { op: "eq", key: eq[1]!, value: eq[2]! };
  const not = /^!\s*(\S+)$/.exec(t);
  if (not) return { op: "notexists", key: not[1]! };
  if (/^\S+$/.test(t)) return { op: "exists", key: t };
  throw new Error(`invalid label selector term: ${t}`);
}

/** Compiles a selector string into a predicate over a label map; empty selects everything. */
export function parseSelector(
  selector: string | undefined,
): (labels: Record<string, string> | undefined) => boolean {
  if (!selector?.trim()) return () => true;
  const reqs = splitTerms(selector).map(parseTerm);
  return (labels) => {
    const l = labels ?? {};
    return reqs.every((r) => {
      const has = Object.hasOwn(l, r.key);
      const v = l[r.key];
      switch (r.op) {
        case "eq":
          return has && v === r.value;
        case "neq":
          return !has || v !== r.value;
        case "exists":
          return has;
        case "notexists":
          return !has;
        case "in":
          return has && r.values.includes(v!);
        case "notin":
          return !has || !r.values.includes(v!);
        default:
          return false;
      }
    });
  };
}

/** Formats a label map as an equality selector ("a=b,c=d"), keys sorted for stable output. */
export function selectorFromLabels(labels: Record<string, string>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(",");
}
