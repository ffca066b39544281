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
 * instance: the result is `reference` itself exactly when all of `value` equals it. JSON.parse
 * makes a fresh copy of every string and object, so 10,000 CronJobs built from one template hold
 * 10,000 copies of the same runner script, security context and resources; after this they hold
 * one. (It runs on every object entering a cache: no tuples, and a new container is made only
 * once a part differs, since a part shared so far is the reference's own.)
 */
function share(value: unknown, reference: unknown): unknown {
  // Equal primitives are ===; answering with the reference keeps its copy of an equal string.
  if (value === reference) return reference;
  if (Array.isArray(value)) {
    const ref = Array.isArray(reference) ? reference : undefined;
    let out: unknown[] | undefined = ref && ref.length === value.length ? undefined : [];
    for (let i = 0; i < value.length; i++) {
      const s = share(value[i], ref?.[i]);
      // The parts before this one were the reference's own.
      if (!out && s !== ref?.[i]) out = (ref as unknown[]).slice(0, i);
      out?.push(s);
    }
    return out ?? reference;
  }
  if (isPlainObject(value)) {
    const ref = isPlainObject(reference) ? reference : undefined;
    let out: Record<string, unknown> | undefined = ref ? undefined : {};
    let n = 0;
    for (const k in value) {
      const s = share(value[k], ref?.[k]);
      if (!out && (s !== ref?.[k] || !(k in (ref as object)))) {
        out = {};
        // The keys before this one were the reference's own values.
        for (const j in value) {
          if (j === k) break;
          out[j] = ref?.[j];
        }
      }
      if (out) out[k] = s;
      n++;
    }
    if (!out && n !== Object.keys(ref as object).length) {
      // Every key of value is the reference's, which has more: equal parts, but not equal.
      out = {};
      for (const k in value) out[k] = ref?.[k];
    }
    return out ?? reference;
  }
  return value;
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
    const shared = (previous === undefined ? obj : share(obj, previous)) as T;
    previous = shared;
    return shared;
  };
}
