import { LABEL_MANAGED_BY, LABEL_TASK, MANAGED_BY } from "../../api/v1alpha1/labels.ts";
import type { CacheOptions } from "../../runtime/controller.ts";
import { sharingWithPrevious, trimMetadata, withoutManagedFields } from "../../runtime/trim.ts";
import type { KubeObject } from "../../runtime/types.ts";

// What the task controllers' informers keep. Memory follows the tasks, and only the fields the
// controllers read are cached (managedFields never: compare-before-apply uses a hash annotation,
// see runtime/apply.ts). Each transform is one shared function, so both controllers share the
// informer. At 10,000 tasks this is what keeps the operator within its memory limit
// (docs/benchmarks.md). Each transform also shares with the previous object of its kind the parts
// they have in common (runtime/trim.ts): children built from one template are mostly identical.

const MANAGED = `${LABEL_MANAGED_BY}=${MANAGED_BY}`;

function pick<T extends Record<string, unknown>>(o: T | undefined, keys: readonly string[]) {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (o?.[k] !== undefined) out[k] = o[k];
  return out;
}

const shareTasks = sharingWithPrevious();
/** Tasks: whole, without managedFields (the script and spec build the children). */
export const TASK_CACHE: CacheOptions = {
  transform: function trimTask(o: KubeObject): KubeObject {
    return shareTasks(withoutManagedFields(o));
  },
};

/**
 * Script ConfigMaps and env Secrets: metadata only (they are immutable; existence, owner and
 * revision are all the controller reads), so script bodies and Secret values never sit in the
 * operator's memory. Not label-selected: a same-named object of someone else must be seen in the
 * cache, so a cache miss means "absent" and needs no confirming GET.
 */
const shareScriptsAndSecrets = sharingWithPrevious();
export const SCRIPT_AND_SECRET_CACHE: CacheOptions = {
  metadataOnly: true,
  transform: function trimScriptOrSecret(o: KubeObject): KubeObject {
    return shareScriptsAndSecrets(withoutManagedFields(o));
  },
  indexLabels: [LABEL_TASK],
};

const shareCronJobs = sharingWithPrevious();
/** CronJobs: spec (compared before apply) and the last schedule time; unfiltered, as above. */
export const CRONJOB_CACHE: CacheOptions = {
  transform: function trimCronJob(o: KubeObject): KubeObject {
    const status = pick(o.status as Record<string, unknown> | undefined, ["lastScheduleTime"]);
    return shareCronJobs({
      apiVersion: o.apiVersion,
      kind: o.kind,
      metadata: trimMetadata(o.metadata),
      spec: o.spec,
      status,
    });
  },
};

const shareJobs = sharingWithPrevious();
/** Jobs: the revision they run and whether and when they finished. */
export const JOB_CACHE: CacheOptions = {
  labelSelector: MANAGED,
  indexLabels: [LABEL_TASK],
  transform: function trimJob(o: KubeObject): KubeObject {
    const spec = o.spec as { template?: { metadata?: { annotations?: Record<string, string> } } } | undefined;
    const status = pick(o.status as Record<string, unknown> | undefined, [
      "startTime",
      "completionTime",
      "conditions",
    ]);
    return shareJobs({
      apiVersion: o.apiVersion,
      kind: o.kind,
      metadata: trimMetadata(o.metadata),
      spec: { template: { metadata: { annotations: spec?.template?.metadata?.annotations } } },
      status,
    });
  },
};

type PodJson = {
  spec?: {
    containers?: {
      name: string;
      env?: { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
    }[];
  };
  status?: { containerStatuses?: unknown[] };
};

const sharePods = sharingWithPrevious();
/** Task pods: container names, the Secret keys their env refers to, container states. */
export const POD_CACHE: CacheOptions = {
  labelSelector: `${MANAGED},${LABEL_TASK}`,
  indexLabels: ["batch.kubernetes.io/job-name"],
  transform: function trimPod(o: KubeObject): KubeObject {
    const p = o as unknown as PodJson;
    const containers = (p.spec?.containers ?? []).map((c) => ({
      name: c.name,
      env: (c.env ?? [])
        .filter((e) => e.valueFrom?.secretKeyRef)
        .map((e) => ({ name: e.name, valueFrom: { secretKeyRef: e.valueFrom?.secretKeyRef } })),
    }));
    return sharePods({
      apiVersion: o.apiVersion,
      kind: o.kind,
      metadata: trimMetadata(o.metadata),
      spec: { containers },
      status: { containerStatuses: p.status?.containerStatuses },
    });
  },
};

const shareExecutions = sharingWithPrevious();
/** Execution records: everything but the captured output (up to 64 KiB each). */
export const EXECUTION_CACHE: CacheOptions = {
  labelSelector: MANAGED,
  indexLabels: [LABEL_TASK],
  transform: function trimExecution(o: KubeObject): KubeObject {
    const { output: _o, ...spec } = (o.spec ?? {}) as Record<string, unknown>;
    return shareExecutions({ ...o, metadata: trimMetadata(o.metadata), spec });
  },
};
