import pino from "pino";
import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import type { ScheduledTask, ScheduledTaskSpec } from "../../api/v1alpha1/scheduledtask.ts";
import { scheduledTaskSpecSchema } from "../../api/v1alpha1/scheduledtask.ts";
import { FakeClock } from "../../runtime/clock.ts";
import { MemoryEventRecorder } from "../../runtime/events.ts";
import { FakeKubeClient } from "../../runtime/fake-client.ts";
import type { ReconcileContext } from "../../runtime/types.ts";
import { DEFAULT_TASK_CONTROLLER_CONFIG, type TaskControllerConfig } from "./config.ts";

// Shared fixtures of the ScheduledTask/TaskExecution unit tests (not a test file itself).

/** Config with recognisable image names. */
export const TEST_CONFIG: TaskControllerConfig = {
  ...DEFAULT_TASK_CONTROLLER_CONFIG,
  images: { Bash: "img/bash:1", Python: "img/python:1", Go: "img/go:1", Bun: "img/bun:1" },
};

/** A task as the apiserver would store it (defaults applied). */
export function makeTask(
  name: string,
  spec: Partial<ScheduledTaskSpec> & Pick<ScheduledTaskSpec, "language" | "script" | "plan">,
  meta: { generation?: number; uid?: string; annotations?: Record<string, string> } = {},
): ScheduledTask {
  return {
    apiVersion: API_VERSION,
    kind: "ScheduledTask",
    metadata: {
      name,
      namespace: "ns",
      uid: meta.uid ?? `uid-${name}`,
      generation: meta.generation ?? 1,
      creationTimestamp: "2026-01-01T00:00:00Z",
      annotations: meta.annotations,
    },
    spec: scheduledTaskSpecSchema.parse(spec),
  };
}

/** A reconcile context over a fake client, fake clock and in-memory event recorder. */
export function makeCtx(objects: ScheduledTask[] = [], now = "2026-01-01T00:00:30Z") {
  const clock = new FakeClock(now);
  const client = new FakeKubeClient({ clock, objects });
  const events = new MemoryEventRecorder();
  const lines: string[] = [];
  const log = pino({ level: "debug" }, { write: (s: string) => lines.push(s) });
  const ctx: ReconcileContext = { client, clock, events, log, reconcileId: "test" };
  return { ctx, client, clock, events, lines };
}
