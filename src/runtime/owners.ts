import type { KubeObject } from "./types.ts";

/** Whether `obj` is controlled by (has a controller ownerReference to) the object with this uid. */
export function controlledBy(obj: KubeObject, uid: string | undefined): boolean {
  return (obj.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === uid);
}
