import pino from "pino";
import { API_VERSION } from "../api/v1alpha1/kind.ts";
import { LABEL_MANAGED_BY, LABEL_TASK, MANAGED_BY } from "../api/v1alpha1/labels.ts";
import type { Notification, TaskNotifications } from "../api/v1alpha1/notification.ts";
import { type ScheduledTask, scheduledTaskSpecSchema } from "../api/v1alpha1/scheduledtask.ts";
import type { TaskExecution } from "../api/v1alpha1/taskexecution.ts";
import { FakeClock } from "../runtime/clock.ts";
import { MemoryEventRecorder } from "../runtime/events.ts";
import { FakeKubeClient } from "../runtime/fake-client.ts";
import type { KubeObject, ReconcileContext } from "../runtime/types.ts";
import { buildNotification, type Decided } from "./build.ts";
import { DEFAULT_NOTIFICATIONS_CONFIG, type NotificationsConfig } from "./config.ts";

// Shared fixtures of the notification unit tests (not a test file itself).

/** Channels configured as an administrator would. */
export const TEST_CONFIG: NotificationsConfig = {
  ...DEFAULT_NOTIFICATIONS_CONFIG,
  secretNamespace: "cronscale-system",
  email: { ...DEFAULT_NOTIFICATIONS_CONFIG.email, host: "smtp.test", from: "ops@example.test" },
  sms: { ...DEFAULT_NOTIFICATIONS_CONFIG.sms, url: "http://sms.test/send" },
};

/** A task with notifications (defaults applied as the API server would). */
export function makeTask(name: string, notifications: Partial<TaskNotifications> = {}): ScheduledTask {
  return {
    apiVersion: API_VERSION,
    kind: "ScheduledTask",
    metadata: {
      name,
      namespace: "ns",
      uid: `uid-${name}`,
      generation: 1,
      creationTimestamp: "2026-01-01T00:00:00Z",
    },
    spec: scheduledTaskSpecSchema.parse({
      language: "Bash",
      plan: "Micro",
      script: "exit 1",
      notifications: { email: ["dev@example.test"], webhooks: ["http://hook.test/x"], ...notifications },
    }),
  };
}

/** A finished run of `task` completing at `completion` (ISO, second precision). */
export function makeRun(
  task: ScheduledTask,
  completion: string,
  result: "Succeeded" | "Failed" | "TimedOut",
  output = "line 1\nline 2",
): TaskExecution {
  const sec = Math.floor(Date.parse(completion) / 1000);
  return {
    apiVersion: API_VERSION,
    kind: "TaskExecution",
    metadata: {
      name: `${task.metadata.name}-${9_999_999_999 - sec}-${sec}`,
      namespace: "ns",
      labels: { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_TASK]: task.metadata.name ?? "" },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: "ScheduledTask",
          name: task.metadata.name ?? "",
          uid: task.metadata.uid ?? "",
        },
      ],
    },
    spec: {
      taskName: task.metadata.name ?? "",
      trigger: "Schedule",
      jobName: `${task.metadata.name}-${sec}`,
      language: "Bash",
      plan: "Micro",
      completionTime: completion,
      durationSeconds: 2,
      result,
      exitCode: result === "Succeeded" ? 0 : result === "Failed" ? 3 : undefined,
      reason: result === "Succeeded" ? "Completed" : result === "Failed" ? "Error" : "TimedOut",
      message:
        result === "Succeeded" ? "exit code 0" : result === "Failed" ? "exit code 3" : "timed out after 10 s",
      output,
      outputTruncated: false,
      expiresAt: completion,
    },
  };
}

/** The Notification objects of decisions, as if created at `now`. */
export function asNotes(source: KubeObject, decided: Decided[], now: string): Notification[] {
  return decided.map((d) => buildNotification(source, d, now));
}

/** A reconcile context over a fake client, fake clock and in-memory event recorder. */
export function makeCtx(objects: KubeObject[] = [], now = "2026-01-01T00:00:30Z") {
  const clock = new FakeClock(now);
  const client = new FakeKubeClient({ clock, objects });
  const events = new MemoryEventRecorder();
  const lines: string[] = [];
  const log = pino({ level: "debug" }, { write: (s: string) => lines.push(s) });
  const ctx: ReconcileContext = { client, clock, events, log, reconcileId: "test" };
  return { ctx, client, clock, events, lines };
}
