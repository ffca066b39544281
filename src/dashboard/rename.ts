import { API_VERSION } from "../api/v1alpha1/kind.ts";
import { LABEL_TASK } from "../api/v1alpha1/labels.ts";
import { taskDashboardEnvSecretName as envSecretName } from "../api/v1alpha1/names.ts";
import type { ScheduledTask } from "../api/v1alpha1/scheduledtask.ts";
import type { TaskExecution } from "../api/v1alpha1/taskexecution.ts";
import { ApiError } from "../runtime/errors.ts";
import type { KubeObject } from "../runtime/types.ts";
import type { ViewerApi } from "./kube.ts";

// Renaming a task. Kubernetes names are immutable, so a rename is: the task created under the
// new name from the old spec, its execution records copied to it, the old task deleted. Made
// as the viewer, step by step, so that nothing is lost, doubled or left half-done:
//
// 1. The old task is suspended (its CronJob stops starting runs) and the operator is waited
//    for (phase Stopped at the current generation); a run still in progress makes the rename
//    refuse, as its record would be written to the old task after the switch.
// 2. The new task is created suspended, with a copy of the dashboard's env Secret. The API
//    server has validated it first (dry run), so a bad or taken name changes nothing.
// 3. Each TaskExecution is copied to the new task (same record, the new task's name, label and
//    owner); a copy that exists already (a retried rename) is kept. The copies are counted.
// 4. The old task is deleted (its records and Secret go with it, by owner reference), and the
//    new one resumed if the old one was running.
// A failure before step 4 deletes what was created (the copies go with the new task) and
// resumes the old task: the old task is then exactly as before.

/** Steps of a rename, as reported to the page. */
export interface RenameResult {
  copied: number;
}

/** The same spec under `to`, suspended; env references to the old dashboard Secret renamed. */
export function renamedTask(old: ScheduledTask, to: string): KubeObject {
  const from = old.metadata.name ?? "";
  const env = (old.spec.env ?? []).map((e) =>
    e.valueFrom?.secretKeyRef.name === envSecretName(from)
      ? { ...e, valueFrom: { secretKeyRef: { ...e.valueFrom.secretKeyRef, name: envSecretName(to) } } }
      : e,
  );
  return {
    apiVersion: API_VERSION,
    kind: "ScheduledTask",
    metadata: {
      name: to,
      namespace: old.metadata.namespace,
      ...(old.metadata.labels ? { labels: old.metadata.labels } : {}),
    },
    spec: { ...old.spec, ...(old.spec.env ? { env } : {}), suspend: true },
  };
}

/** A TaskExecution of `from` as a record of the task `to` (same run, new name, label and owner). */
export function movedExecution(x: TaskExecution, from: string, to: ScheduledTask): KubeObject {
  const name = x.metadata.name ?? "";
  const toName = to.metadata.name ?? "";
  return {
    apiVersion: API_VERSION,
    kind: "TaskExecution",
    metadata: {
      name: name.startsWith(`${from}-`) ? `${toName}-${name.slice(from.length + 1)}` : `${toName}-${name}`,
      namespace: x.metadata.namespace,
      labels: { ...x.metadata.labels, [LABEL_TASK]: toName },
      ...(x.metadata.annotations ? { annotations: x.metadata.annotations } : {}),
      // Not blockOwnerDeletion: setting that needs update on the owner's finalizers, which a
      // task editor need not have; garbage collection deletes the copies with the task anyway.
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: "ScheduledTask",
          name: toName,
          uid: to.metadata.uid ?? "",
          controller: true,
        },
      ],
    },
    spec: { ...x.spec, taskName: toName },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Renames `from` to `to` in `ns` as the viewer `v` (see above). Throws the API server's refusal. */
export async function renameTask(
  v: ViewerApi,
  ns: string,
  from: string,
  to: string,
  opts: { settleMs?: number; pollMs?: number } = {},
): Promise<RenameResult> {
  const { settleMs = 20_000, pollMs = 250 } = opts;
  const old = await v.getTask(ns, from);
  const wasSuspended = old.spec.suspend === true;
  const draft = renamedTask(old, to);
  await v.createTask(draft, true);

  if (!wasSuspended) await v.patchTask(ns, from, { spec: { suspend: true } });
  const resumeOld = () =>
    wasSuspended
      ? Promise.resolve()
      : v.patchTask(ns, from, { spec: { suspend: false } }).then(() => undefined);
  let created: ScheduledTask | undefined;
  let secretCopied = false;
  let history: TaskExecution[] = [];
  try {
    const deadline = Date.now() + settleMs;
    for (;;) {
      const t = await v.getTask(ns, from);
      const settled =
        t.status?.phase === "Stopped" && (t.status.observedGeneration ?? 0) >= (t.metadata.generation ?? 0);
      if (settled) break;
      if (Date.now() > deadline)
        throw new ApiError(409, "Conflict", `task ${from} did not stop in time; nothing was renamed`);
      await sleep(pollMs);
    }
    if ((await v.listActivePods(ns, from)).length > 0)
      throw new ApiError(
        409,
        "Conflict",
        `a run of ${from} is in progress; rename it once the run has finished`,
      );

    const secretRefs = (old.spec.env ?? []).some(
      (e) => e.valueFrom?.secretKeyRef.name === envSecretName(from),
    );
    if (secretRefs) {
      const secret = await v.getSecret(ns, envSecretName(from));
      await v.createSecret({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: envSecretName(to), namespace: ns, labels: secret.metadata.labels ?? {} },
        type: "Opaque",
        data: secret.data ?? {},
      } as KubeObject);
      secretCopied = true;
    }
    created = await v.createTask(draft, false);
    if (secretCopied)
      await v.patchSecret(ns, envSecretName(to), {
        metadata: {
          ownerReferences: [
            { apiVersion: API_VERSION, kind: "ScheduledTask", name: to, uid: created.metadata.uid },
          ],
        },
      });

    history = await v.listExecutions(ns, from);
    for (const x of history) {
      try {
        await v.createExecution(movedExecution(x, from, created));
      } catch (err) {
        if (!(err instanceof ApiError) || err.statusCode !== 409) throw err;
      }
    }
    const copies = await v.listExecutions(ns, to);
    if (copies.length < history.length)
      throw new ApiError(
        500,
        "Incomplete",
        `only ${copies.length} of ${history.length} records reached ${to}`,
      );

    await v.deleteTask(ns, from);
  } catch (err) {
    // Back to exactly the old state: what was created goes (the copies with the new task).
    if (created) await v.deleteTask(ns, to).catch(() => undefined);
    if (secretCopied) await v.deleteSecret(ns, envSecretName(to)).catch(() => undefined);
    await resumeOld().catch(() => undefined);
    throw err;
  }
  // The switch is made: from here on the new task is the task (a failure leaves it suspended,
  // which the page says, rather than undoing a deletion).
  if (!wasSuspended) await v.patchTask(ns, to, { spec: { suspend: false } });
  return { copied: history.length };
}
