import { ANNOTATION_CONFIG_REVISION } from "../../api/v1alpha1/labels.ts";
import { controlledBy } from "../../runtime/owners.ts";
import type { KubeObject } from "../../runtime/types.ts";

// Which per-revision ConfigMaps/Secrets may go. Pure.
//
// Kept: the current revision; the previous one (a Job the CronJob created a moment ago may not be
// in the cache yet); and every revision a Job that still exists refers to — its pod may still be
// starting or running, and the output capture reads the Secret to mask its values.

/** Revision an object (ConfigMap, Secret, Job) belongs to. */
export function revisionOf(obj: KubeObject): string | undefined {
  const jobAnn = (
    obj.spec as { template?: { metadata?: { annotations?: Record<string, string> } } } | undefined
  )?.template?.metadata?.annotations?.[ANNOTATION_CONFIG_REVISION];
  return obj.metadata.annotations?.[ANNOTATION_CONFIG_REVISION] ?? jobAnn;
}

/** The children (of one task) that no Job needs any more. */
export function childrenToPrune(
  children: readonly KubeObject[],
  jobs: readonly KubeObject[],
  currentRevision: string,
  taskUid: string | undefined,
): KubeObject[] {
  const keep = new Set<string>([currentRevision, String(Number(currentRevision) - 1)]);
  for (const j of jobs) {
    const r = revisionOf(j);
    if (r) keep.add(r);
  }
  return children.filter((c) => {
    const r = revisionOf(c);
    return controlledBy(c, taskUid) && r !== undefined && !keep.has(r);
  });
}
