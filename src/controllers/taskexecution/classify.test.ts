import { describe, expect, it } from "vitest";
import { classify } from "./classify.ts";
import { assembleOutput, maskSecrets } from "./output.ts";

const run = (exitCode: number, seconds: number, reason?: string) => ({
  terminated: {
    exitCode,
    reason,
    startedAt: "2026-01-01T00:00:00Z",
    finishedAt: new Date(Date.parse("2026-01-01T00:00:00Z") + seconds * 1000).toISOString(),
  },
  timeoutSeconds: 30,
  plan: "Micro" as const,
});

describe("classify", () => {
  it("reads exit 0 as Succeeded with the rounded duration", () => {
    expect(classify(run(0, 2))).toMatchObject({ result: "Succeeded", exitCode: 0, durationSeconds: 2 });
  });
  it("reads a non-zero exit as Failed with its code", () => {
    expect(classify(run(3, 1))).toMatchObject({ result: "Failed", exitCode: 3, message: "exit code 3" });
  });
  it("reads 137 after the whole timeout as TimedOut", () => {
    expect(classify(run(137, 30))).toMatchObject({ result: "TimedOut", message: "timed out after 30 s" });
  });
  it("reads 137 well before the timeout as a failure of the script", () => {
    expect(classify(run(137, 3))).toMatchObject({ result: "Failed", exitCode: 137 });
  });
  it("reads OOMKilled as exceeding the plan's memory", () => {
    expect(classify(run(137, 3, "OOMKilled"))).toMatchObject({
      result: "Failed",
      reason: "OOMKilled",
      message: "exceeded the plan's memory (256 MB)",
    });
  });
  it("reads a Job deadline without a terminated container as TimedOut", () => {
    expect(
      classify({ jobFailedReason: "DeadlineExceeded", timeoutSeconds: 30, plan: "Micro" }),
    ).toMatchObject({ result: "TimedOut" });
  });
  it("reads a pod that never started as StartFailed", () => {
    expect(
      classify({
        jobFailedReason: "DeadlineExceeded",
        waitingReason: "ErrImagePull",
        timeoutSeconds: 30,
        plan: "Micro",
      }),
    ).toMatchObject({ result: "Failed", reason: "StartFailed", message: "did not start: ErrImagePull" });
  });
});

describe("output", () => {
  it("masks every secret value, longest first, and leaves short values alone", () => {
    expect(maskSecrets("token=abcdef, part=abcd, x=1", ["abcd", "abcdef", "1"])).toBe(
      "token=****, part=****, x=1",
    );
  });
  it("keeps head and tail around a marked cut", () => {
    const out = assembleOutput("a".repeat(50), "b".repeat(50), 20, []);
    expect(out.truncated).toBe(true);
    expect(out.text).toMatch(
      /^a{10}\n\[… output truncated by cronscale: kept the first 10 and the last 10 characters …\]\nb{10}$/,
    );
  });
  it("masks before cutting", () => {
    const out = assembleOutput(`${"x".repeat(8)}SECRETVALUE`, `SECRETVALUE${"y".repeat(8)}`, 12, [
      "SECRETVALUE",
    ]);
    expect(out.text).not.toContain("SECRET");
  });
});
