import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Manager } from "../../../src/runtime/manager.ts";
import { useNamespace, waitFor } from "../../support/cluster.ts";
import { type HttpSink, startHttpSink } from "../../support/notification-sinks.ts";
import {
  createSigningSecret,
  SIGNING_SECRET,
  startNotifier,
  testNotificationsConfig,
  waitNotificationCrd,
} from "../notifications/support.ts";
import { applyTask, executions } from "../scheduledtask/helpers.ts";
import { installCrds, localTaskConfig, startOperator, type TestOperator } from "../scheduledtask/operator.ts";

// Drill (not part of the suite; hack/bench/notify-storm.sh runs it, the suite has the short form
// in test/integration/notifications/tasks.test.ts): a task failing every minute for MINUTES
// minutes, foldMinutes FOLD, sends folded messages — the first failure, then one per interval
// with a count — not one per run. Prints the messages received.

const DRILL = process.env.CRONSCALE_DRILL === "notify-storm";
const MINUTES = Number(process.env.DRILL_MINUTES ?? 10);
const FOLD = Number(process.env.DRILL_FOLD ?? 5);

describe.runIf(DRILL)("drill: an every-minute failing task", () => {
  const ns = useNamespace("drill-storm", { "pod-security.kubernetes.io/enforce": "restricted" });
  let op: TestOperator;
  let notifier: Manager;
  let http: HttpSink;

  beforeAll(async () => {
    await installCrds();
    await waitNotificationCrd();
    http = await startHttpSink(SIGNING_SECRET);
    await createSigningSecret(ns.name);
    op = await startOperator(ns.name, localTaskConfig({}, ["Bash"]));
    notifier = await startNotifier(ns.name, testNotificationsConfig(ns.name, 1));
  }, 900_000);
  afterAll(async () => {
    await notifier?.stop();
    await op?.stop();
    await http?.close();
  });

  it(`sends folded messages for ${MINUTES} failed runs, not ${MINUTES}`, async () => {
    const t0 = Date.now();
    await applyTask(ns.name, "storm", {
      schedule: "* * * * *",
      language: "Bash",
      plan: "Micro",
      timeoutSeconds: 30,
      script: "echo upstream down; exit 1",
      notifications: { webhooks: [`${http.url}/hook`], foldMinutes: FOLD },
    });
    await waitFor(async () => ((await executions(ns.name, "storm")).length >= MINUTES ? true : undefined), {
      timeoutMs: (MINUTES + 3) * 60_000,
      intervalMs: 10_000,
      what: `${MINUTES} failed runs`,
    });
    const runs = (await executions(ns.name, "storm")).length;
    await new Promise((r) => setTimeout(r, 5000));
    const msgs = http.posts
      .filter((p) => p.status === 200)
      .map((p) => JSON.parse(p.body).data as { event: string; count: number; subject: string });
    const at = http.posts.map((p) => Math.round((Number(p.headers["webhook-timestamp"]) * 1000 - t0) / 1000));
    process.stderr.write(
      [
        `drill notify-storm: ${runs} failed runs in ${((Date.now() - t0) / 60_000).toFixed(1)} min, foldMinutes ${FOLD}`,
        `  messages: ${msgs.length}; runs they report: ${msgs.reduce((s, m) => s + m.count, 0)}`,
        ...msgs.map((m, i) => `  +${at[i]} s  ${m.event} x${m.count}: ${m.subject}`),
        "",
      ].join("\n"),
    );
    expect(http.posts.every((p) => p.verified)).toBe(true);
    expect(msgs[0]).toMatchObject({ event: "TaskFailed", count: 1 });
    // The first failure at once, then at most one message per interval.
    expect(msgs.length).toBeLessThanOrEqual(1 + Math.ceil(MINUTES / FOLD));
    expect(msgs.length).toBeLessThan(runs);
  });
});
