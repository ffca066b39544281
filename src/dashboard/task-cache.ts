import type { Logger } from "pino";
import { gvkOf } from "../api/v1alpha1/kind.ts";
import { type ScheduledTask, scheduledTaskKind } from "../api/v1alpha1/scheduledtask.ts";
import { ApiError } from "../runtime/errors.ts";
import { Informer } from "../runtime/informer.ts";
import type { ListWatchSource } from "../runtime/listwatch.ts";
import type { KubeObject } from "../runtime/types.ts";

// The task list shared by every viewer: one informer (LIST once, then WATCH) per namespace the
// dashboard serves, made with the dashboard's own ServiceAccount, so opening the list or typing
// a search never LISTs 10,000 tasks per request. It is only a read-side copy: the routes show a
// namespace's cached tasks to a viewer only after a SelfSubjectAccessReview says that viewer may
// `list scheduledtasks` there (what the API server would check for the viewer's own LIST), and
// every change still goes to the API server as the viewer. A namespace the dashboard itself may
// not list (its LIST answered 403) is not cached: those viewers' lists are read with their token.

/** Where the list of one namespace comes from, as the dashboard (not a viewer). */
export type TaskSourceFor = (namespace: string) => ListWatchSource;

/** Tasks of a namespace, shared by all viewers; undefined when the namespace is not cached. */
export interface TaskCache {
  tasks(namespace: string): Promise<readonly ScheduledTask[] | undefined>;
  stop(): Promise<void>;
}

interface Entry {
  informer?: Informer<ScheduledTask>;
  ready: Promise<boolean>;
  /** The namespace's tasks sorted by name, rebuilt on the first read after a change. */
  sorted?: ScheduledTask[];
}

/** The fields the list pages never show: dropped on entry, to keep 10,000 tasks small. */
function trim(o: KubeObject): KubeObject {
  const { managedFields: _m, ...metadata } = o.metadata as KubeObject["metadata"] & {
    managedFields?: unknown;
  };
  return { ...o, metadata };
}

export class SharedTaskCache implements TaskCache {
  private readonly entries = new Map<string, Entry>();
  private readonly sourceFor: TaskSourceFor;
  private readonly log: Logger;

  constructor(opts: { sourceFor: TaskSourceFor; log: Logger }) {
    this.sourceFor = opts.sourceFor;
    this.log = opts.log;
  }

  async tasks(namespace: string): Promise<readonly ScheduledTask[] | undefined> {
    let e = this.entries.get(namespace);
    if (!e) {
      e = this.open(namespace);
      this.entries.set(namespace, e);
    }
    if (!(await e.ready) || !e.informer) return undefined;
    e.sorted ??= e.informer
      .list(namespace)
      .sort((a, b) => ((a.metadata.name ?? "") < (b.metadata.name ?? "") ? -1 : 1));
    return e.sorted;
  }

  private open(namespace: string): Entry {
    const source = this.sourceFor(namespace);
    const e: Entry = { ready: Promise.resolve(false) };
    e.ready = (async () => {
      // One small LIST first: a 403 means the dashboard was given no read access here (the chart
      // grants it in the namespaces it serves), and the viewers' own lists are used instead.
      try {
        await source.list({ limit: 1 });
      } catch (err) {
        if (err instanceof ApiError && (err.statusCode === 403 || err.statusCode === 401)) {
          this.log.info(
            { namespace, status: err.statusCode },
            "task list not cached: the dashboard may not list tasks here",
          );
          return false;
        }
        // Anything else (API server unreachable): forget the entry so a later request tries again.
        this.entries.delete(namespace);
        throw err;
      }
      const informer = new Informer<ScheduledTask>({ source, log: this.log, transform: trim });
      const dirty = () => {
        e.sorted = undefined;
      };
      informer.addHandlers({ onAdd: dirty, onUpdate: dirty, onDelete: dirty });
      informer.start();
      await informer.waitForSync();
      e.informer = informer;
      this.log.info({ namespace, tasks: informer.list(namespace).length }, "task list cached");
      return true;
    })();
    return e;
  }

  async stop(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map((e) => e.informer?.stop()));
  }
}

/** The resource type of the shared list. */
export const TASK_TYPE = gvkOf(scheduledTaskKind);
