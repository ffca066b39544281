import type { Logger } from "pino";
import { gvkOf } from "../api/v1alpha1/kind.ts";
import { type ScheduledTask, scheduledTaskKind } from "../api/v1alpha1/scheduledtask.ts";
import { SharedListCache, type SourceFor } from "./list-cache.ts";

// The task list shared by every viewer (list-cache.ts): opening the list or typing a search never
// LISTs 10,000 tasks per request; each viewer's right to list tasks is checked first.

/** Where the list of one namespace comes from, as the dashboard (not a viewer). */
export type TaskSourceFor = SourceFor;

/** Tasks of a namespace, shared by all viewers; undefined when the namespace is not cached. */
export interface TaskCache {
  tasks(namespace: string): Promise<readonly ScheduledTask[] | undefined>;
  stop(): Promise<void>;
}

export class SharedTaskCache extends SharedListCache<ScheduledTask> implements TaskCache {
  constructor(opts: { sourceFor: TaskSourceFor; log: Logger }) {
    super({ ...opts, what: "tasks" });
  }

  tasks(namespace: string): Promise<readonly ScheduledTask[] | undefined> {
    return this.list(namespace);
  }
}

/** The resource type of the shared list. */
export const TASK_TYPE = gvkOf(scheduledTaskKind);
