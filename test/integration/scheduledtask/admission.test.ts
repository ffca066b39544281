import { beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { kubectl, useNamespace } from "../../support/cluster.ts";
import { installCrds } from "./operator.ts";

// Bad input is rejected at `kubectl apply` by the CRD's schema and CEL rules alone (no webhook,
// no operator running), each with a message naming the field.

const ns = useNamespace("stask-adm");

type Manifest = { metadata: Record<string, unknown>; spec: Record<string, unknown> };

function task(name: string, spec: Record<string, unknown> = {}): Manifest {
  return {
    metadata: { name },
    spec: {
      schedule: "*/5 * * * *",
      timezone: "UTC",
      language: "Bash",
      script: "echo hi",
      plan: "Micro",
      ...spec,
    },
  };
}

function without(m: Manifest, field: string): Manifest {
  const spec = { ...m.spec };
  delete spec[field];
  return { ...m, spec };
}

async function apply(m: Manifest) {
  const doc = { apiVersion: "cronscale.io/v1alpha1", kind: "ScheduledTask", ...m };
  return kubectl(["apply", "--dry-run=server", "-f", "-"], {
    namespace: ns.name,
    input: stringify(doc),
    allowFailure: true,
  });
}

// [what, manifest, text the rejection must contain (the field, and the rule)]
const INVALID: [string, Manifest, RegExp][] = [
  ["name with uppercase letters", task("Hello"), /metadata\.name/],
  ["name with a dot", task("a.b"), /metadata\.name may contain only lowercase letters, digits and hyphens/],
  ["name longer than 52", task("a".repeat(53)), /metadata\.name must be at most 52 characters/],
  ["schedule with four fields", task("s1", { schedule: "* * * *" }), /spec\.schedule.*exactly five/],
  ["schedule with six fields", task("s2", { schedule: "0 * * * * *" }), /spec\.schedule.*exactly five/],
  ["minute 60", task("s3", { schedule: "60 * * * *" }), /spec\.schedule.*minute field/],
  ["hour 24", task("s4", { schedule: "0 24 * * *" }), /spec\.schedule.*hour field/],
  ["day-of-month 0", task("s5", { schedule: "0 0 0 * *" }), /spec\.schedule.*day-of-month field/],
  ["day-of-month 32", task("s6", { schedule: "0 0 32 * *" }), /spec\.schedule.*day-of-month field/],
  ["month 13", task("s7", { schedule: "0 0 1 13 *" }), /spec\.schedule.*month field/],
  ["day-of-week 8", task("s8", { schedule: "0 0 * * 8" }), /spec\.schedule.*day-of-week field/],
  ["day names", task("s9", { schedule: "0 0 * * MON" }), /spec\.schedule may contain only digits/],
  ["a descriptor", task("s10", { schedule: "@hourly" }), /spec\.schedule may contain only digits/],
  ["a question mark", task("s11", { schedule: "0 0 ? * *" }), /spec\.schedule may contain only digits/],
  ["step 0", task("s12", { schedule: "*/0 * * * *" }), /spec\.schedule.*minute field/],
  ["step beyond the field", task("s13", { schedule: "0 */24 * * *" }), /spec\.schedule.*hour field/],
  ["value/step without a range", task("s14", { schedule: "5/15 * * * *" }), /spec\.schedule.*minute field/],
  ["reversed range", task("s15", { schedule: "0 5-1 * * *" }), /spec\.schedule: a range a-b must have a ≤ b/],
  ["empty list element", task("s16", { schedule: "1,,2 * * * *" }), /spec\.schedule.*minute field/],
  ["a day that never comes", task("s17", { schedule: "0 0 31 2 *" }), /spec\.schedule.*never/],
  [
    "unknown timezone",
    task("z1", { timezone: "Mars/Olympus_Mons" }),
    /spec\.timezone must be an IANA time zone/,
  ],
  [
    "timezone in the wrong case",
    task("z2", { timezone: "europe/paris" }),
    /spec\.timezone must be an IANA time zone/,
  ],
  ["timezone Local", task("z3", { timezone: "Local" }), /spec\.timezone must be an IANA time zone/],
  ["fixed offset", task("z4", { timezone: "+02:00" }), /spec\.timezone must be an IANA time zone/],
  [
    "timeout below 10",
    task("t1", { timeoutSeconds: 5 }),
    /spec\.timeoutSeconds.*greater than or equal to 10/,
  ],
  [
    "timeout above 3600",
    task("t2", { timeoutSeconds: 3601 }),
    /spec\.timeoutSeconds.*less than or equal to 3600/,
  ],
  ["timeout not a number", task("t3", { timeoutSeconds: "soon" }), /spec\.timeoutSeconds/],
  ["unknown language", task("l1", { language: "Ruby" }), /spec\.language.*Unsupported value: "Ruby"/],
  ["language missing", without(task("l2"), "language"), /spec\.language: Required value/],
  ["unknown plan", task("p1", { plan: "Huge" }), /spec\.plan.*Unsupported value: "Huge"/],
  ["plan missing", without(task("p2"), "plan"), /spec\.plan: Required value/],
  ["script missing", without(task("c1"), "script"), /spec\.script: Required value/],
  ["empty script", task("c2", { script: "" }), /spec\.script.*at least 1 chars long/],
  ["script over 64 Ki characters", task("c3", { script: "x".repeat(65537) }), /spec\.script: Too long/],
  [
    "env name starting with a digit",
    task("e1", { env: [{ name: "1ABC", value: "x" }] }),
    /spec\.env\[0\]\.name.*env name must start/,
  ],
  [
    "env name with a hyphen",
    task("e2", { env: [{ name: "MY-VAR", value: "x" }] }),
    /spec\.env\[0\]\.name.*env name must start/,
  ],
  [
    "duplicate env name",
    task("e3", {
      env: [
        { name: "A", value: "1" },
        { name: "A", value: "2" },
      ],
    }),
    /spec\.env\[1\]: Duplicate value/,
  ],
  [
    "env value and valueFrom together",
    task("e4", { env: [{ name: "A", value: "1", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }] }),
    /spec\.env\[0\].*either value or valueFrom/,
  ],
  [
    "unknown concurrency policy",
    task("x1", { concurrencyPolicy: "Sometimes" }),
    /spec\.concurrencyPolicy.*Unsupported value/,
  ],
  ["retries above 5", task("x2", { retries: 6 }), /spec\.retries.*less than or equal to 5/],
];

describe("ScheduledTask admission", () => {
  beforeAll(installCrds, 120_000);

  it.each(INVALID)("rejects %s at apply, naming the field", async (_what, manifest, expected) => {
    const r = await apply(manifest);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(expected);
  });

  it(`has a table of at least 25 invalid manifests (${INVALID.length})`, () => {
    expect(INVALID.length).toBeGreaterThanOrEqual(25);
  });

  it("accepts every form of the spec's cron grammar, day-of-week 7, case-sensitive env names and defaults", async () => {
    for (const schedule of [
      "* * * * *",
      "*/15 0-6 1,15 */2 1-5",
      "0 0 * * 7",
      "5-55/10 * * * 0,7",
      "00 09 * * 5-7",
    ]) {
      const r = await apply(
        task("ok", {
          schedule,
          timezone: "America/New_York",
          env: [
            { name: "FOO", value: "1" },
            { name: "foo", value: "2" },
          ],
        }),
      );
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
    }
    const r = await apply(without(without(task("defaults"), "schedule"), "timezone"));
    expect(r.code).toBe(0);
  });

  it("refuses a name already in use", async () => {
    const doc = stringify({ apiVersion: "cronscale.io/v1alpha1", kind: "ScheduledTask", ...task("taken") });
    await kubectl(["create", "-f", "-"], { namespace: ns.name, input: doc });
    const again = await kubectl(["create", "-f", "-"], {
      namespace: ns.name,
      input: doc,
      allowFailure: true,
    });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/scheduledtasks.cronscale.io "taken" already exists/);
    const got = await kubectl(
      ["get", "stask", "taken", "-o", "jsonpath={.spec.schedule}|{.spec.timezone}|{.spec.timeoutSeconds}"],
      {
        namespace: ns.name,
      },
    );
    expect(got.stdout).toBe("*/5 * * * *|UTC|300");
  });

  it("refuses a language change without a new script, and accepts it with one", async () => {
    const doc = (spec: Record<string, unknown>) =>
      stringify({ apiVersion: "cronscale.io/v1alpha1", kind: "ScheduledTask", ...task("lang", spec) });
    const applyReal = (spec: Record<string, unknown>) =>
      kubectl(["apply", "-f", "-"], { namespace: ns.name, input: doc(spec), allowFailure: true });
    expect((await applyReal({})).code).toBe(0);
    const same = await applyReal({ language: "Python" });
    expect(same.code).not.toBe(0);
    expect(same.stderr).toMatch(
      /spec\.language: Forbidden: cannot change language from Bash to Python without a new script/,
    );
    const live = await kubectl(["get", "stask", "lang", "-o", "jsonpath={.spec.language}"], {
      namespace: ns.name,
    });
    expect(live.stdout).toBe("Bash");
    const rewritten = await applyReal({ language: "Python", script: "print('hi')" });
    expect(rewritten.stderr).toBe("");
    expect(rewritten.code).toBe(0);
  });
});
