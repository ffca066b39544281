import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import type { ScheduledTask } from "../../api/v1alpha1/scheduledtask.ts";
import { readOne } from "../../runtime/read.ts";
import type { ObjectKey, ReconcileContext } from "../../runtime/types.ts";

/**
 * Reads the ScheduledTask named by `key`; undefined when it is gone or being deleted (both the
 * task and the execution reconcilers have nothing to do then: owner references clean up).
 */
export async function readTask(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  key: ObjectKey,
): Promise<ScheduledTask | undefined> {
  const task = await readOne<ScheduledTask>(
    ctx,
    cached,
    API_VERSION,
    "ScheduledTask",
    key.namespace,
    key.name,
  );
  return task && !task.metadata.deletionTimestamp ? task : undefined;
}
