import { beforeAll, describe, expect, it } from "vitest";
import { normalize, validateSchedule, validateTimezone } from "../../src/cron/index.ts";
import { GO_ZONE_NAMES } from "../../src/cron/zones.generated.ts";
import { type Case, compareNext } from "./compare.ts";
import { prng, randomExpression, randomJunk, randomStart, transitions } from "./generate.ts";
import { type OracleRequest, oracleUnavailable, oracleZoneNames, runOracle, zoneinfoDir } from "./oracle.ts";

// Differential test: our next-run times and validation against robfig/cron v3 itself, run the
// way kube-controller-manager runs it (ParseStandard("TZ=<zone> <expr>"), Next from the last
// result). See README.md in src/cron for the behaviour this pins down.

const unavailable = oracleUnavailable();
if (unavailable) console.warn(`skipping the robfig/cron differential test: ${unavailable}`);
// src/cron reads $ZONEINFO first, as Go does: both sides read Go's tzdata, file for file.
else process.env.ZONEINFO = zoneinfoDir();

const ZONES = [
  "UTC",
  "America/New_York",
  "America/Los_Angeles",
  "America/St_Johns",
  "America/Havana",
  "America/Santiago",
  "America/Sao_Paulo",
  "America/Asuncion",
  "Europe/London",
  "Europe/Berlin",
  "Europe/Dublin",
  "Africa/Casablanca",
  "Asia/Tehran",
  "Asia/Beirut",
  "Asia/Kolkata",
  "Asia/Kathmandu",
  "Australia/Sydney",
  "Australia/Lord_Howe",
  "Antarctica/Troll",
  "Pacific/Chatham",
  "Pacific/Apia",
  "Pacific/Kiritimati",
];

const FROM = Date.UTC(2020, 0, 1);
const TO = Date.UTC(2035, 11, 31);
const RUNS = 5;

// Generous timeouts: the runs take ~15 s on an idle 2-core machine, much longer on a busy one.
describe.skipIf(unavailable !== undefined)(
  "next-run times equal robfig/cron v3 (kube-controller-manager)",
  { timeout: 300_000 },
  () => {
    let trans = new Map<string, number[]>();
    beforeAll(() => {
      trans = new Map(ZONES.map((z) => [z, transitions(z, FROM, TO + 40 * 86_400_000)]));
    }, 300_000);

    it("matches on every DST transition 2020-2035 of every zone, for schedules that straddle it", () => {
      const exprs = [
        "* * * * *",
        "*/15 * * * *",
        "30 * * * *",
        "0 2 * * *",
        "30 2 * * *",
        "0 1 * * *",
        "0,30 0-3 * * *",
        "0 0 * * *",
        "59 23 * * *",
        "45 1-3 * * 0,7",
      ];
      const cases: Case[] = [];
      for (const zone of ZONES) {
        for (const t of trans.get(zone) ?? []) {
          for (const expr of exprs) cases.push({ expr, zone, from: new Date(t - 3 * 3_600_000), count: 12 });
        }
      }
      const started = performance.now();
      const { mismatches, runs } = compareNext(cases);
      const transitionCount = [...trans.values()].reduce((n, ts) => n + ts.length, 0);
      console.log(
        `DST transitions: ${transitionCount} in ${ZONES.length} zones, ${cases.length} cases, ${runs} run times compared in ${Math.round(performance.now() - started)} ms, ${mismatches.length} mismatches`,
      );
      expect(mismatches.slice(0, 5)).toEqual([]);
    });

    it("matches for thousands of random expressions x zones x start times", () => {
      const r = prng(20260522);
      const cases: Case[] = [];
      const exprs = new Set<string>();
      let neverFires = 0;
      while (exprs.size < 3000) {
        const expr = randomExpression(r);
        const issues = validateSchedule(expr);
        if (issues.length > 0) {
          // The generator writes only the accepted grammar; the sole legitimate refusal is a
          // day-of-month that no chosen month has (robfig accepts it and never fires).
          expect(issues.map((i) => i.rule)).toEqual(["never-fires"]);
          neverFires++;
          continue;
        }
        exprs.add(expr);
      }
      for (const expr of exprs) {
        for (let k = 0; k < 8; k++) {
          const zone = ZONES[Math.floor(r() * ZONES.length)] ?? "UTC";
          cases.push({ expr, zone, from: randomStart(r, FROM, TO, trans.get(zone) ?? []), count: RUNS });
        }
      }
      const started = performance.now();
      const { mismatches, runs } = compareNext(cases);
      console.log(
        `random: ${exprs.size} expressions (${neverFires} never-firing ones refused), ${ZONES.length} zones, ${cases.length} cases, ${runs} run times compared in ${Math.round(performance.now() - started)} ms, ${mismatches.length} mismatches`,
      );
      expect(mismatches.slice(0, 5)).toEqual([]);
    });
  },
);

// Where we refuse what robfig accepts, the spec is stricter; these are the documented rules.
const STRICTER_RULES = new Set([
  "names",
  "question-mark",
  "descriptor",
  "timezone-in-schedule",
  "step-base",
  "step",
  "syntax",
  "never-fires",
]);

describe.skipIf(unavailable !== undefined)(
  "validation agrees with robfig/cron v3 where the spec allows",
  { timeout: 300_000 },
  () => {
    it("refuses everything robfig refuses (except day-of-week 7), and refuses more only by documented rules", () => {
      const r = prng(7);
      const inputs = new Set<string>();
      while (inputs.size < 20000) inputs.add(randomJunk(r));
      const list = [...inputs];
      const accepted = list.filter((e) => validateSchedule(e).length === 0);
      const answers = runOracle([
        ...list.map((expr): OracleRequest => ({ op: "parse", expr })),
        ...accepted.map((e): OracleRequest => ({ op: "parse", expr: normalize(e) })),
      ]);
      const problems: string[] = [];
      const stricter = new Map<string, { count: number; sample: string }>();
      list.forEach((expr, i) => {
        const robfigError = answers[i]?.error;
        const ours = validateSchedule(expr);
        if (ours.length === 0 && robfigError && !/above maximum \(6\)/.test(robfigError)) {
          problems.push(`we accept "${expr}", robfig refuses: ${robfigError}`);
        }
        if (ours.length > 0 && !robfigError) {
          const rule = ours[0]?.rule ?? "";
          if (!STRICTER_RULES.has(rule)) problems.push(`we refuse "${expr}" by ${rule}, robfig accepts it`);
          const s = stricter.get(rule) ?? { count: 0, sample: expr };
          s.count++;
          stricter.set(rule, s);
        }
      });
      accepted.forEach((e, i) => {
        const err = answers[list.length + i]?.error;
        if (err) problems.push(`robfig refuses normalize("${e}") = "${normalize(e)}": ${err}`);
      });
      console.log(
        `validation: ${list.length} inputs, ${accepted.length} accepted by us; refused by us but accepted by robfig: ${[
          ...stricter,
        ]
          .map(([rule, s]) => `${rule} ${s.count} (e.g. "${s.sample}")`)
          .join(", ")}`,
      );
      expect(problems.slice(0, 10)).toEqual([]);
    });

    it("zones.generated.ts lists exactly Go's tzdata zone names (else run hack/cron-oracle/gen-zones.sh)", () => {
      expect([...GO_ZONE_NAMES].sort()).toEqual(oracleZoneNames().sort());
    });

    it("accepts a zone only if Go's time.LoadLocation (Kubernetes) does, and every IANA name both know", () => {
      const names = new Set<string>([
        ...GO_ZONE_NAMES,
        ...Intl.supportedValuesOf("timeZone"),
        ...[...GO_ZONE_NAMES].map((z) => z.toLowerCase()),
        "Local",
        "local",
        "",
        "+05:00",
        "-03:30",
        "UTC+5",
        "GMT-2",
        "US/Pacific-New",
        "SystemV/AST4",
        "Europe/../Berlin",
        "../etc/passwd",
        "/etc/localtime",
        "Mars/Olympus_Mons",
        "America/Argentina/ComodRivadavia",
      ]);
      const list = [...names];
      const answers = runOracle(list.map((zone): OracleRequest => ({ op: "zone", zone })));
      const problems: string[] = [];
      const refusedGoAccepts: string[] = [];
      list.forEach((zone, i) => {
        const goOk = !answers[i]?.error;
        const oursOk = validateTimezone(zone).length === 0;
        if (oursOk && !goOk) problems.push(`we accept "${zone}", Go refuses: ${answers[i]?.error}`);
        if (!oursOk && goOk) refusedGoAccepts.push(zone);
      });
      console.log(
        `timezones: ${list.length} names checked, accepted by Go but refused by us: ${refusedGoAccepts.join(", ")}`,
      );
      expect(problems).toEqual([]);
      // Kubernetes itself refuses "Local"; "" is Go's name for UTC, refused as a missing value.
      expect(refusedGoAccepts.sort()).toEqual(["", "Local"].sort());
    });
  },
);
