import { describe, expect, it } from "vitest";
import { validateSchedule } from "../../cron/index.ts";
import { checkScheduleShape } from "./schedule-rules.ts";

// The CRD's CEL rules are the JS regexes of schedule-rules.ts; this test holds them to the cron
// module's validator, so `kubectl apply` and the operator (and `cronscale next-runs`) agree.

const ATOMS: Record<number, string[]> = {
  0: [
    "*",
    "*/5",
    "*/59",
    "*/60",
    "0",
    "59",
    "60",
    "00",
    "007",
    "0-59",
    "5-1",
    "1-5/2",
    "5/2",
    "*/0",
    "a",
    "?",
    "1-",
    "-1",
    "00000",
  ],
  1: ["*", "*/2", "*/23", "*/24", "0", "23", "24", "1-3", "3-1", "0-23/6", "12", "*/1", "2/4"],
  2: ["*", "1", "0", "31", "32", "30", "30-31", "31", "*/2", "*/30", "*/31", "1-31/30", "15,30", "29"],
  3: ["*", "1", "0", "12", "13", "2", "4,6", "4", "2,4", "1-12/11", "1-12/12", "*/3", "JAN", "11"],
  4: ["*", "0", "7", "8", "1-5", "5-7", "0-7/7", "*/7", "*/8", "*/1", "*/01", "MON", "6,7", "1-7/2"],
};

function* corpus(): Generator<string> {
  // Deterministic pseudo-random combinations of atoms and lists.
  let seed = 12345;
  const rnd = (n: number) => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  const pick = (f: number) => {
    const atoms = ATOMS[f] ?? ["*"];
    const a = atoms[rnd(atoms.length)] ?? "*";
    return rnd(5) === 0 ? `${a},${atoms[rnd(atoms.length)]}` : a;
  };
  for (let i = 0; i < 20000; i++) yield [0, 1, 2, 3, 4].map(pick).join(rnd(10) === 0 ? "  " : " ");
  yield* [
    "",
    "* * * *",
    "* * * * * *",
    " * * * * * ",
    "*\t*\t*\t*\t*",
    "0 0 31 2 *",
    "0 0 30 2 *",
    "0 0 31 4,6 *",
  ];
  yield* [
    "0 0 31 2 1",
    "0 0 30-31 2,4 *",
    "0 0 31 2 */1",
    "0 0 31 2 */2",
    "1,,2 * * * *",
    "* * * * 7",
    "@hourly",
  ];
}

describe("schedule CEL rules", () => {
  it("accept exactly what validateSchedule accepts (20,000 generated expressions)", () => {
    const disagreements: string[] = [];
    let valid = 0;
    for (const expr of corpus()) {
      const cel = checkScheduleShape(expr) === undefined;
      const issues = validateSchedule(expr);
      if (issues.length === 0) valid++;
      // CEL cannot expand stepped/ranged months for the never-fires rule; the operator refuses those.
      const tolerated = cel && issues.length === 1 && issues[0]?.rule === "never-fires";
      if (cel !== (issues.length === 0) && !tolerated)
        disagreements.push(
          `${JSON.stringify(expr)} cel=${cel} cron=${issues.map((i) => i.message).join("; ")}`,
        );
    }
    expect(disagreements.slice(0, 20)).toEqual([]);
    expect(valid).toBeGreaterThan(1000);
  });

  it("names the failing field", () => {
    expect(checkScheduleShape("60 * * * *")).toMatch(/minute field/);
    expect(checkScheduleShape("* 24 * * *")).toMatch(/hour field/);
    expect(checkScheduleShape("* * 0 * *")).toMatch(/day-of-month field/);
    expect(checkScheduleShape("* * * 13 *")).toMatch(/month field/);
    expect(checkScheduleShape("* * * * 8")).toMatch(/day-of-week field/);
    expect(checkScheduleShape("* * * *")).toMatch(/exactly five/);
    expect(checkScheduleShape("0 0 31 2 *")).toMatch(/never occurs/);
    expect(checkScheduleShape("5-1 * * * *")).toMatch(/a ≤ b/);
  });
});
