import type { KubeObject, ObjectMeta } from "./types.ts";

// Cache trimming helpers (see InformerOptions.transform). Informers keep what controllers read,
// not whole objects: managedFields alone are often the largest part of a small object.

/** The metadata without managedFields (the server's bookkeeping of who set which field). */
export function trimMetadata(meta: ObjectMeta): ObjectMeta {
  const { managedFields: _m, ...rest } = meta;
  return rest;
}

/** The object without metadata.managedFields; everything else kept. */
export function withoutManagedFields<T extends KubeObject>(obj: T): T {
  return obj.metadata.managedFields === undefined ? obj : { ...obj, metadata: trimMetadata(obj.metadata) };
}
