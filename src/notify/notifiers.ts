import { API_VERSION } from "../api/v1alpha1/kind.ts";
import {
  LABEL_NOTIFICATION_SOURCE,
  LABEL_NOTIFICATION_SOURCE_KIND,
  LABEL_TASK,
} from "../api/v1alpha1/labels.ts";
import type { Notification } from "../api/v1alpha1/notification.ts";
import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformRestore } from "../api/v1alpha1/scaleplatformrestore.ts";
import type { ScheduledTask } from "../api/v1alpha1/scheduledtask.ts";
import type { TaskExecution } from "../api/v1alpha1/taskexecution.ts";
import { formatTime } from "../runtime/conditions.ts";
import { isConflict } from "../runtime/errors.ts";
import type {
  KubeObject,
  ObjectKey,
  ReconcileContext,
  ReconcileResult,
  Reconciler,
} from "../runtime/types.ts";
import { buildNotification, type Decided } from "./build.ts";
import type { NotificationsConfig } from "./config.ts";
import type { NotificationMetrics } from "./metrics.ts";
import { decidePlatform } from "./platform.ts";
import { decideTask } from "./task.ts";

// The deciding half: turns transitions of tasks and platforms into Notification objects. A
// decision is first made on the informer cache; only when it finds something to send is it made
// again on a live list of the source's Notifications (a cache that has not yet seen the last
// Notification would otherwise decide the same transition twice, or fold differently). Creating
// the object is the commitment: its name is the transition's, so a repeat gets 409.

const DAY_MS = 86_400_000;

/** What both notifiers share. */
export interface NotifierDeps {
  config: NotificationsConfig;
  metrics?: NotificationMetrics;
}

function sourceSelector(kind: string, name: string): string {
  return `${LABEL_NOTIFICATION_SOURCE_KIND}=${kind},${LABEL_NOTIFICATION_SOURCE}=${name}`;
}

/** The source's Notifications (same uid: a recreated object starts afresh), cached or live. */
async function notesOf(ctx: ReconcileContext, source: KubeObject, live: boolean): Promise<Notification[]> {
  const ns = source.metadata.namespace ?? "";
  const sel = sourceSelector(source.kind, source.metadata.name ?? "");
  const list =
    live || !ctx.cache
      ? await ctx.client.list<Notification>(API_VERSION, "Notification", ns, sel)
      : ctx.cache.list<Notification>(API_VERSION, "Notification", ns, sel);
  return list.filter((n) => n.spec.source.uid === source.metadata.uid);
}

/** Creates the decided Notifications in order; an existing one (409) was decided before. */
async function commit(ctx: ReconcileContext, source: KubeObject, decided: Decided[], deps: NotifierDeps) {
  for (const d of decided) {
    const obj = buildNotification(source, d, formatTime(ctx.clock.now()));
    try {
      await ctx.client.create(obj);
      deps.metrics?.decided.inc({ event: d.event });
      ctx.log.info(
        { source: source.metadata.name, kind: source.kind, notification: obj.metadata.name, event: d.event },
        "notification decided",
      );
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
}

/**
 * Deletes finished Notifications older than the retention, keeping the newest of each event
 * (they carry what later decisions read: the task's cursor, the platform's last outage).
 */
async function prune(ctx: ReconcileContext, notes: Notification[], deps: NotifierDeps): Promise<void> {
  const cutoff = ctx.clock.now().getTime() - deps.config.retentionDays * DAY_MS;
  const newest = new Map<string, Notification>();
  for (const n of notes) {
    const cur = newest.get(n.spec.event);
    if (!cur || (cur.spec.through ?? cur.spec.occurredAt) < (n.spec.through ?? n.spec.occurredAt))
      newest.set(n.spec.event, n);
  }
  const keep = new Set(newest.values());
  for (const n of notes) {
    const done = n.status?.phase === "Delivered" || n.status?.phase === "Failed";
    if (done && !keep.has(n) && Date.parse(n.spec.occurredAt) < cutoff)
      await ctx.client.delete(API_VERSION, "Notification", n.metadata.namespace ?? "", n.metadata.name ?? "");
  }
}

/**
 * The cache keeps execution records without their output (up to 64 KiB each; see
 * EXECUTION_CACHE): the decision needs none of it, only the messages do. So the records a decision
 * quotes are read whole, one GET each, and the decision is made again on them.
 */
async function withOutput(ctx: ReconcileContext, runs: TaskExecution[], decided: Decided[]) {
  const quoted = new Set(decided.map((d) => d.details.execution).filter((n) => n));
  return Promise.all(
    runs.map(async (r) => {
      if (!quoted.has(r.metadata.name) || typeof r.spec.output === "string") return r;
      const whole = await ctx.client.get<TaskExecution>(
        API_VERSION,
        "TaskExecution",
        r.metadata.namespace ?? "",
        r.metadata.name ?? "",
      );
      return whole ?? r;
    }),
  );
}

/**
 * Whether a task asks for notifications: a task that does not is passed over at once, so its
 * events need not wake the notifier at all (the predicate in index.ts).
 */
export function wantsNotifications(task: KubeObject): boolean {
  return Boolean((task as ScheduledTask).spec?.notifications) && !task.metadata.deletionTimestamp;
}

/** Decides the Notifications of a ScheduledTask from its TaskExecutions. */
export class TaskNotifier implements Reconciler {
  private readonly d: NotifierDeps;

  constructor(deps: NotifierDeps) {
    this.d = deps;
  }

  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const task =
      ctx.cache?.get<ScheduledTask>(API_VERSION, "ScheduledTask", key.namespace, key.name) ??
      (await ctx.client.get<ScheduledTask>(API_VERSION, "ScheduledTask", key.namespace, key.name));
    if (!task || !wantsNotifications(task)) return {};
    const sel = `${LABEL_TASK}=${key.name}`;
    const runs = ctx.cache
      ? ctx.cache.list<TaskExecution>(API_VERSION, "TaskExecution", key.namespace, sel)
      : await ctx.client.list<TaskExecution>(API_VERSION, "TaskExecution", key.namespace, sel);
    let mine = runs.filter((r) => r.metadata.ownerReferences?.some((o) => o.uid === task.metadata.uid));
    const now = ctx.clock.now();
    let notes = await notesOf(ctx, task, false);
    let decision = decideTask(task, mine, notes, now, this.d.config.maxAgeMinutes);
    if (decision.decided.length > 0 && ctx.cache) {
      notes = await notesOf(ctx, task, true);
      mine = await withOutput(ctx, mine, decision.decided);
      decision = decideTask(task, mine, notes, now, this.d.config.maxAgeMinutes);
    }
    await commit(ctx, task, decision.decided, this.d);
    await prune(ctx, notes, this.d);
    return decision.requeueAfterMs ? { requeueAfter: decision.requeueAfterMs } : {};
  }
}

/** The platform's restores (from the cache when the manager watches them). */
async function restoresOf(ctx: ReconcileContext, p: ScalePlatform): Promise<ScalePlatformRestore[]> {
  const ns = p.metadata.namespace ?? "";
  const all =
    ctx.cache?.list<ScalePlatformRestore>(API_VERSION, "ScalePlatformRestore", ns) ??
    (await ctx.client.list<ScalePlatformRestore>(API_VERSION, "ScalePlatformRestore", ns));
  return all.filter((r) => r.spec.platformName === p.metadata.name);
}

/** Decides the Notifications of a ScalePlatform from its status and its restores. */
export class PlatformNotifier implements Reconciler {
  private readonly d: NotifierDeps;

  constructor(deps: NotifierDeps) {
    this.d = deps;
  }

  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const p =
      ctx.cache?.get<ScalePlatform>(API_VERSION, "ScalePlatform", key.namespace, key.name) ??
      (await ctx.client.get<ScalePlatform>(API_VERSION, "ScalePlatform", key.namespace, key.name));
    if (!p || p.metadata.deletionTimestamp) return {};
    const now = ctx.clock.now();
    const restores = await restoresOf(ctx, p);
    let notes = await notesOf(ctx, p, false);
    let decision = decidePlatform(p, notes, now, this.d.config.maxAgeMinutes, restores);
    if (decision.decided.length > 0 && ctx.cache) {
      notes = await notesOf(ctx, p, true);
      decision = decidePlatform(p, notes, now, this.d.config.maxAgeMinutes, restores);
    }
    await commit(ctx, p, decision.decided, this.d);
    await prune(ctx, notes, this.d);
    return decision.requeueAfterMs ? { requeueAfter: decision.requeueAfterMs } : {};
  }
}
