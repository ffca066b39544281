import { describe, expect, it } from "vitest";
import { computeStatus, taskPhase } from "./status.ts";
import { makeTask } from "./testing.ts";
import { validateTask } from "./validate.ts";

const now = new Date("2026-03-29T00:30:00Z");
const task = makeTask("t", { language: "Bash", script: "true", plan: "Large" });
const cronJob = {
  apiVersion: "batch/v1",
  kind: "CronJob",
  metadata: { name: "t" },
  spec: { schedule: "* * * * *" },
};

describe("task status", () => {
  it("is Pending until the CronJob exists, then Running", () => {
    expect(taskPhase({ task, spec: task.spec, executions: [], now })).toBe("Pending");
    expect(taskPhase({ task, spec: task.spec, cronJob, executions: [], now })).toBe("Running");
  });

  it("is Stopped while suspended, whatever the last run", () => {
    const spec = { ...task.spec, suspend: true };
    expect(taskPhase({ task, spec, cronJob, executions: [], now })).toBe("Stopped");
  });

  it("moves lastTransitionTime only when a condition's status flips", () => {
    const first = computeStatus({ task, spec: task.spec, executions: [], now });
    const later = new Date(now.getTime() + 60_000);
    const same = computeStatus({
      task: { ...task, status: first },
      spec: task.spec,
      executions: [],
      now: later,
    });
    expect(same.conditions).toEqual(first.conditions);
    const flipped = computeStatus({
      task: { ...task, status: first },
      spec: task.spec,
      cronJob,
      executions: [],
      now: later,
    });
    const ready = flipped.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({
      status: "True",
      reason: "Scheduled",
      lastTransitionTime: "2026-03-29T00:31:00Z",
    });
  });

  it("shows the plan's resources and the normalised schedule", () => {
    const s = computeStatus({
      task,
      spec: task.spec,
      cronJob,
      executions: [],
      now,
      nextRun: new Date("2026-03-29T00:31:00Z"),
    });
    expect(s).toMatchObject({
      resources: { vcpu: "2", memory: "2 GB" },
      schedule: "* * * * *",
      nextRunTime: "2026-03-29T00:31:00Z",
    });
  });
});

describe("validateTask", () => {
  it("refuses what the CRD refuses, with the field named", () => {
    expect(
      validateTask(makeTask("a".repeat(53), { language: "Bash", script: "x", plan: "Micro" })),
    ).toMatchObject({
      invalid: { reason: "InvalidSpec" },
    });
    const badZone = makeTask("z", { language: "Bash", script: "x", plan: "Micro" });
    badZone.spec.timezone = "Mars/Base";
    expect(validateTask(badZone)).toMatchObject({
      invalid: { reason: "InvalidTimezone", message: expect.stringMatching(/^spec\.timezone/) },
    });
    const badTimeout = makeTask("o", { language: "Bash", script: "x", plan: "Micro" });
    badTimeout.spec.timeoutSeconds = 5;
    expect(validateTask(badTimeout)).toMatchObject({
      invalid: { reason: "InvalidSpec", message: expect.stringMatching(/^spec\.timeoutSeconds/) },
    });
  });
});
