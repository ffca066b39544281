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

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/**
 * `value` with every part that equals the same part of `reference` replaced by the reference's
 * instance, and whether all of it did. JSON.parse makes a fresh copy of every string and object,
 * so 10,000 CronJobs built from one template hold 10,000 copies of the same runner script,
 * security context and resources; after this they hold one.
 */
function share(value: unknown, reference: unknown): [unknown, boolean] {
  // Equal strings are distinct copies: keep the reference's.
  if (value === reference) return [reference, true];
  if (typeof value === "string") return value === reference ? [reference, true] : [value, false];
  if (Array.isArray(value)) {
    const ref = Array.isArray(reference) ? reference : [];
    let same = Array.isArray(reference) && ref.length === value.length;
    const out = value.map((v, i) => {
      const [s, eq] = share(v, ref[i]);
      same &&= eq;
      return s;
    });
    return same ? [reference, true] : [out, false];
  }
  if (isPlainObject(value)) {
    const ref = isPlainObject(reference) ? reference : {};
    const keys = Object.keys(value);
    let same = isPlainObject(reference) && keys.length === Object.keys(ref).length;
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      const [s, eq] = share(value[k], ref[k]);
      same &&= eq && k in ref;
      out[k] = s;
    }
    return same ? [reference, true] : [out, false];
  }
  return [value, value === reference];
}

/**
 * A cache transform step that shares, between the objects it is given, the parts they have in
 * common (hash-consing against one reference, the previous object, rather than a global table:
 * nothing grows with churn and no entry outlives the cache). The objects of an informer cache are
 * read-only, so sharing is safe; whoever wants to change one copies it first (as every reconciler
 * here builds desired objects fresh).
 */
export function sharingWithPrevious<T extends KubeObject>(): (obj: T) => T {
  let previous: T | undefined;
  return (obj) => {
    const shared = (previous === undefined ? obj : share(obj, previous)[0]) as T;
    previous = shared;
    return shared;
  };
}
