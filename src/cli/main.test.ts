import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkScheduleShape } from "../api/v1alpha1/schedule-rules.ts";

// The CLI as users run it: the package bin in a child process of the same Node.

const bin = fileURLToPath(new URL("../../bin/cronscale.js", import.meta.url));

function cronscale(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8" });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

// Each case starts a Node process; on a busy 2-core machine that takes seconds.
describe("cronscale next-runs", { timeout: 60_000 }, () => {
  it("prints N run times with the zone's offset, skipping the New York spring-forward gap", () => {
    const r = cronscale(
      "next-runs",
      "30 2 * * *",
      "--timezone",
      "America/New_York",
      "--from",
      "2021-03-13T00:00:00Z",
      "--count",
      "3",
    );
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toBe("2021-03-13T02:30:00-05:00\n2021-03-15T02:30:00-04:00\n2021-03-16T02:30:00-04:00\n");
  });

  it("runs twice in the fall-back overlap, like the Kubernetes CronJob controller", () => {
    const r = cronscale(
      "next-runs",
      "30 1 * * *",
      "-z",
      "America/New_York",
      "--from",
      "2021-11-06T12:00:00Z",
      "-c",
      "3",
    );
    expect(r.out.trim().split("\n")).toEqual([
      "2021-11-07T01:30:00-04:00",
      "2021-11-07T01:30:00-05:00",
      "2021-11-08T01:30:00-05:00",
    ]);
  });

  it("defaults to UTC and 5 runs from now", () => {
    const r = cronscale("next-runs", "* * * * *");
    expect(r.code).toBe(0);
    const lines = r.out.trim().split("\n");
    expect(lines).toHaveLength(5);
    for (const l of lines) expect(l).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\+00:00$/);
    const first = Date.parse(lines[0] ?? "");
    expect(first).toBeGreaterThan(Date.now() - 1000);
    expect(first).toBeLessThanOrEqual(Date.now() + 61_000);
  });

  it("accepts day-of-week 7 as Sunday", () => {
    const r = cronscale("next-runs", "0 9 * * 7", "--from", "2026-11-02T00:00:00Z", "-c", "2");
    expect(r.out).toBe("2026-11-08T09:00:00+00:00\n2026-11-15T09:00:00+00:00\n");
  });

  it("prints the error kubectl apply gives for an invalid schedule, then the precise reason, and exits 1", () => {
    const r = cronscale("next-runs", "0 0 * * 8");
    expect(r.code).toBe(1);
    expect(r.out).toBe("");
    expect(r.err).toBe(
      `${checkScheduleShape("0 0 * * 8")}\nspec.schedule: day-of-week value 8 is out of range 0-7\n`,
    );
  });

  it("prints the admission error for an unknown zone and exits 1", () => {
    const r = cronscale("next-runs", "0 0 * * *", "--timezone", "Europe/Atlantis");
    expect(r.code).toBe(1);
    expect(r.err).toContain('spec.timezone: unknown time zone "Europe/Atlantis"');
  });

  it("refuses a bad --count or --from with a usage error (exit 2)", () => {
    expect(cronscale("next-runs", "* * * * *", "--count", "0").code).toBe(2);
    expect(cronscale("next-runs", "* * * * *", "--from", "yesterday").code).toBe(2);
    expect(cronscale("next-runs", "*", "*", "*", "*", "*").err).toContain(
      "expected exactly one cron expression",
    );
  });

  it("lists commands on --help and refuses unknown ones", () => {
    expect(cronscale("--help").out).toContain("next-runs");
    const r = cronscale("frobnicate");
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown command "frobnicate"');
  });
});
