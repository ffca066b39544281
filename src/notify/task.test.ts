import { describe, expect, it } from "vitest";
import type { Notification } from "../api/v1alpha1/notification.ts";
import type { TaskExecution } from "../api/v1alpha1/taskexecution.ts";
import { decideTask, outputTail } from "./task.ts";
import { asNotes, makeRun, makeTask } from "./testing.ts";

const MAX_AGE = 1440;
const at = (min: number, sec = 5) =>
  new Date(Date.UTC(2026, 0, 1, 1, min, sec)).toISOString().replace(/\.\d{3}Z$/, "Z");

/** Runs the decision at `now` and "creates" what it decided (as the notifier would). */
function step(
  task: ReturnType<typeof makeTask>,
  runs: TaskExecution[],
  notes: Notification[],
  now: string,
): { made: Notification[]; requeueAfterMs?: number } {
  const d = decideTask(task, runs, notes, new Date(now), MAX_AGE);
  const made = asNotes(task, d.decided, now);
  notes.push(...made);
  return { made, requeueAfterMs: d.requeueAfterMs };
}

describe("decideTask", () => {
  it("announces a failure once, naming the task, result, exit code, duration and output tail", () => {
    const task = makeTask("nightly");
    const runs = [
      makeRun(task, at(1), "Succeeded"),
      makeRun(task, at(2), "Failed", "step 1\nboom: disk full"),
    ];
    const notes: Notification[] = [];
    const { made } = step(task, runs, notes, at(2, 30));
    expect(made).toHaveLength(1);
    const n = made[0] as Notification;
    expect(n.spec.event).toBe("TaskFailed");
    expect(n.spec.subject).toBe("Task ns/nightly failed");
    expect(n.spec.text).toContain("Task: nightly (namespace ns)");
    expect(n.spec.text).toContain("Exit code: 3");
    expect(n.spec.text).toContain("Duration: 2 s");
    expect(n.spec.text).toContain("boom: disk full");
    expect(n.spec.details).toMatchObject({
      task: "nightly",
      namespace: "ns",
      result: "Failed",
      exitCode: "3",
    });
    expect(n.spec.recipients).toEqual({ email: ["dev@example.test"], webhooks: ["http://hook.test/x"] });
    // A resync or a restarted operator decides nothing more.
    expect(step(task, runs, notes, at(3)).made).toEqual([]);
    expect(step(task, runs, notes, at(50)).made).toEqual([]);
  });

  it("decides the same transition under the same name and id (a repeat collides instead of resending)", () => {
    const task = makeTask("nightly");
    const runs = [makeRun(task, at(2), "Failed")];
    const a = asNotes(task, decideTask(task, runs, [], new Date(at(2, 30)), MAX_AGE).decided, at(2, 30));
    const b = asNotes(task, decideTask(task, runs, [], new Date(at(4)), MAX_AGE).decided, at(4));
    expect(a[0]?.metadata.name).toBe(b[0]?.metadata.name);
    expect(a[0]?.spec.id).toBe(b[0]?.spec.id);
    expect(a[0]?.metadata.name).toMatch(/^nightly-task-failed-[0-9a-f]{10}$/);
  });

  it("announces the first success after failures as a recovery, once", () => {
    const task = makeTask("nightly");
    const runs = [makeRun(task, at(2), "Failed")];
    const notes: Notification[] = [];
    step(task, runs, notes, at(2, 30));
    runs.push(makeRun(task, at(3), "Succeeded"));
    const { made } = step(task, runs, notes, at(3, 30));
    expect(made.map((n) => n.spec.event)).toEqual(["TaskRecovered"]);
    expect(made[0]?.spec.subject).toBe("Task ns/nightly recovered");
    expect(made[0]?.spec.text).toContain("after 1 failed run since");
    runs.push(makeRun(task, at(4), "Succeeded"));
    expect(step(task, runs, notes, at(4, 30)).made).toEqual([]);
  });

  it("folds a task failing every minute for 10 minutes into one message per interval, with counts", () => {
    const task = makeTask("flaky", { foldMinutes: 4 });
    const runs: TaskExecution[] = [];
    const notes: Notification[] = [];
    const sent: Notification[] = [];
    let requeue: number | undefined;
    for (let m = 0; m < 10; m++) {
      runs.push(makeRun(task, at(m), "Failed"));
      const r = step(task, runs, notes, at(m, 20));
      sent.push(...r.made);
      requeue = r.requeueAfterMs;
    }
    // Minute 0 at once, then the failures of minutes 1-4 at minute 4, 5-8 at minute 8.
    expect(sent.map((n) => n.spec.count)).toEqual([1, 4, 4]);
    expect(sent[1]?.spec.subject).toBe("Task ns/flaky failed 4 more times");
    expect(sent[2]?.spec.text).toContain("9 in a row");
    // The 9th minute's failure waits for the interval: the notifier is asked back for it.
    expect(requeue).toBe(3 * 60_000);
    // The recovery carries the one failure never reported on its own.
    runs.push(makeRun(task, at(10), "Succeeded"));
    const rec = step(task, runs, notes, at(10, 20)).made;
    expect(rec.map((n) => [n.spec.event, n.spec.count])).toEqual([["TaskRecovered", 2]]);
    expect(rec[0]?.spec.text).toContain("after 10 failed runs");
    expect(rec[0]?.spec.text).toContain("1 of them not reported before");
  });

  it("reports timeouts as TaskTimedOut and only the events asked for", () => {
    const task = makeTask("slow", { on: ["Timeout"] });
    const runs = [makeRun(task, at(1), "Failed"), makeRun(task, at(2), "TimedOut")];
    const notes: Notification[] = [];
    const { made } = step(task, runs, notes, at(2, 30));
    expect(made.map((n) => n.spec.event)).toEqual(["TaskTimedOut"]);
    runs.push(makeRun(task, at(3), "Succeeded"));
    expect(step(task, runs, notes, at(3, 30)).made).toEqual([]);
  });

  it("with EveryRun announces each success too", () => {
    const task = makeTask("report", { on: ["EveryRun"] });
    const runs = [makeRun(task, at(1), "Succeeded"), makeRun(task, at(2), "Succeeded")];
    const notes: Notification[] = [];
    expect(step(task, runs, notes, at(2, 30)).made.map((n) => n.spec.event)).toEqual([
      "TaskSucceeded",
      "TaskSucceeded",
    ]);
    expect(step(task, runs, notes, at(3)).made).toEqual([]);
  });

  it("does not replay runs older than maxAge when nothing was announced yet", () => {
    const task = makeTask("old");
    const runs = [makeRun(task, at(1), "Failed"), makeRun(task, at(2), "Failed")];
    const d = decideTask(task, runs, [], new Date(at(30)), 10);
    expect(d.decided).toEqual([]);
    // …but a success after that old failure is still a recovery.
    runs.push(makeRun(task, at(29), "Succeeded"));
    expect(decideTask(task, runs, [], new Date(at(30)), 10).decided.map((x) => x.event)).toEqual([
      "TaskRecovered",
    ]);
  });

  it("decides nothing for a task without notifications", () => {
    const task = makeTask("quiet");
    delete task.spec.notifications;
    expect(decideTask(task, [makeRun(task, at(1), "Failed")], [], new Date(at(2)), MAX_AGE).decided).toEqual(
      [],
    );
  });
});

describe("outputTail", () => {
  it("keeps the last 20 lines and at most 1500 characters", () => {
    const out = Array.from({ length: 50 }, (_, i) => `line ${i}`).join("\n");
    const tail = outputTail(out);
    expect(tail.split("\n")).toHaveLength(20);
    expect(tail.startsWith("line 30")).toBe(true);
    expect(outputTail("x".repeat(5000))).toHaveLength(1500);
  });
});
