import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { FIELD_MANAGER, type KubeClient } from "./client.ts";
import type { KubeObject } from "./types.ts";

/** Metadata fields a desired object may carry; the rest of metadata is server-owned. */
const OWNED_METADATA = ["name", "namespace", "labels", "annotations", "ownerReferences", "finalizers"];

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** A desired value the server omits when stored (so "missing live" is not a difference). */
function isEmptyish(x: unknown): boolean {
  return (
    x === undefined ||
    x === null ||
    x === false ||
    (Array.isArray(x) && x.length === 0) ||
    (isObject(x) && Object.values(x).every(isEmptyish))
  );
}

/**
 * True when every field set in `desired` has the same value in `live`. Maps compare as subsets
 * (the server adds defaults), lists element by element with equal length.
 */
export function isSubset(desired: unknown, live: unknown): boolean {
  if (desired === undefined) return true;
  if (live === undefined || live === null) return isEmptyish(desired);
  if (Array.isArray(desired)) {
    if (!Array.isArray(live) || live.length !== desired.length) return false;
    return desired.every((d, i) => isSubset(d, live[i]));
  }
  if (isObject(desired)) {
    if (!isObject(live)) return false;
    return Object.entries(desired).every(([k, v]) => isSubset(v, live[k]));
  }
  // Numbers may come back as strings for int-or-string fields written as numbers, and vice versa.
  if (typeof desired !== typeof live && (typeof desired === "number" || typeof live === "number")) {
    return String(desired) === String(live);
  }
  return isDeepStrictEqual(desired, live);
}

type FieldsV1 = Record<string, unknown>;

/** Finds the element of a desired list that a managedFields "k:{...}" key names. */
function findKeyed(list: unknown[], keyJson: string): unknown {
  let key: Record<string, unknown>;
  try {
    key = JSON.parse(keyJson) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  // Key fields the server defaulted (e.g. ports' protocol) may be absent from desired: skip those,
  // but at least one key field must be there and match.
  return list.find(
    (el) =>
      isObject(el) &&
      Object.entries(key).some(([k]) => el[k] !== undefined) &&
      Object.entries(key).every(([k, v]) => el[k] === undefined || isSubset(el[k], v)),
  );
}

/**
 * True when the live object still has a field our manager applied earlier but `desired` no longer
 * sets: applying again would remove it, so an apply is needed.
 */
export function ownsFieldsNotDesired(fields: FieldsV1, desired: unknown): boolean {
  for (const [k, sub] of Object.entries(fields)) {
    if (k === ".") continue;
    let child: unknown;
    if (k.startsWith("f:")) {
      if (!isObject(desired)) return true;
      child = desired[k.slice(2)];
    } else if (k.startsWith("k:")) {
      if (!Array.isArray(desired)) return true;
      child = findKeyed(desired, k.slice(2));
    } else if (k.startsWith("v:")) {
      if (!Array.isArray(desired)) return true;
      const v = JSON.parse(k.slice(2)) as unknown;
      if (!desired.some((d) => isDeepStrictEqual(d, v))) return true;
      continue;
    } else if (k.startsWith("i:")) {
      if (!Array.isArray(desired)) return true;
      child = desired[Number(k.slice(2))];
    } else {
      continue;
    }
    if (child === undefined || child === null) return true;
    if (isObject(sub) && Object.keys(sub).length > 0 && ownsFieldsNotDesired(sub, child)) return true;
  }
  return false;
}

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  fieldsV1?: FieldsV1;
}

function ourFields(live: KubeObject, subresource: string): FieldsV1 | undefined {
  const entries = (live.metadata.managedFields ?? []) as ManagedFieldsEntry[];
  const e = entries.find(
    (m) => m.manager === FIELD_MANAGER && m.operation === "Apply" && (m.subresource ?? "") === subresource,
  );
  return e?.fieldsV1;
}

/** The comparable part of an object: owned metadata plus everything but status. */
function mainPart(o: KubeObject): Record<string, unknown> {
  const { metadata, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
  const meta: Record<string, unknown> = {};
  for (const f of OWNED_METADATA) if (metadata[f] !== undefined) meta[f] = metadata[f];
  return { ...rest, metadata: meta };
}

/**
 * Whether applying `desired` would change `live`: false means skip the write (zero writes at steady
 * state). Compares only the fields desired sets, ignoring server-populated ones, and also detects
 * fields we applied before that desired no longer sets (via managedFields).
 */
export function needsApply(desired: KubeObject, live: KubeObject | undefined): boolean {
  if (!live) return true;
  if (!isSubset(mainPart(desired), mainPart(live))) return true;
  const owned = ourFields(live, "");
  if (!owned) return false;
  const { status: _s, ...ownedMain } = owned as Record<string, unknown>;
  return ownsFieldsNotDesired(ownedMain, { ...desired, metadata: mainPart(desired).metadata });
}

/** Annotation holding the hash of the desired object last applied (see {@link withAppliedHash}). */
export const ANNOTATION_APPLIED_HASH = "cronscale.io/applied-hash";

/** JSON.stringify of object keys already seen (a small vocabulary: field names, label keys). */
const quotedKeys = new Map<string, string>();

function quotedKey(k: string): string {
  let q = quotedKeys.get(k);
  if (q === undefined) {
    q = JSON.stringify(k);
    if (quotedKeys.size < 4096) quotedKeys.set(k, q);
  }
  return q;
}

/** The keys of `x` in the order of Array.prototype.sort's default (UTF-16 code units). */
function sortedKeys(x: object): string[] {
  const keys = Object.keys(x);
  if (keys.length > 32) return keys.sort();
  // Insertion sort in place: objects here have a handful of keys, often already in order, and
  // the built-in sort allocates a work area per call.
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > k) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = k;
  }
  return keys;
}

/**
 * JSON with object keys sorted and undefined members dropped: equal objects, equal text. (Loops,
 * not map/filter/join: it runs over every desired object of every pass. The text must stay the
 * same byte for byte: the hashes stored on live objects are made of it.)
 */
export function canonicalJson(x: unknown): string {
  if (Array.isArray(x)) {
    let out = "[";
    for (let i = 0; i < x.length; i++) {
      if (i > 0) out += ",";
      const v = x[i];
      out += v === undefined ? "null" : canonicalJson(v);
    }
    return `${out}]`;
  }
  if (isObject(x)) {
    let out = "{";
    for (const k of sortedKeys(x)) {
      const v = x[k];
      if (v === undefined) continue;
      if (out.length > 1) out += ",";
      out += quotedKey(k);
      out += ":";
      out += canonicalJson(v);
    }
    return `${out}}`;
  }
  return JSON.stringify(x) ?? "null";
}

/** A short hash of everything `desired` sets (its own hash annotation excluded). */
export function desiredHash(desired: KubeObject): string {
  const { [ANNOTATION_APPLIED_HASH]: _h, ...annotations } = desired.metadata.annotations ?? {};
  const body = { ...desired, metadata: { ...desired.metadata, annotations } };
  return createHash("sha256").update(canonicalJson(body)).digest("base64url").slice(0, 22);
}

/**
 * `desired` carrying the hash of itself in an annotation. Compare-before-apply with
 * {@link needsApplyHashed} then needs no managedFields in the cache: a field we stop setting
 * changes the hash, so the apply that removes it still happens.
 */
export function withAppliedHash<T extends KubeObject>(desired: T): T {
  const hash = desiredHash(desired);
  return {
    ...desired,
    metadata: {
      ...desired.metadata,
      annotations: { ...desired.metadata.annotations, [ANNOTATION_APPLIED_HASH]: hash },
    },
  };
}

/**
 * Whether applying `desired` (made by {@link withAppliedHash}) would change `live`, for caches
 * without managedFields: the hash names what we applied last; the fields desired sets are still
 * compared so a change by someone else is put back. Immutable objects (ConfigMaps and Secrets
 * with `immutable: true`) cannot drift, so their metadata suffices — which lets them be cached
 * metadata-only.
 */
export function needsApplyHashed(desired: KubeObject, live: KubeObject | undefined): boolean {
  if (!live) return true;
  const want = desired.metadata.annotations?.[ANNOTATION_APPLIED_HASH];
  if (!want || live.metadata.annotations?.[ANNOTATION_APPLIED_HASH] !== want) return true;
  if (desired.immutable === true) return !isSubset(mainPart(desired).metadata, mainPart(live).metadata);
  return !isSubset(mainPart(desired), mainPart(live));
}

/**
 * Whether applying `desiredStatus` through the status subresource would change `live.status`.
 * With managedFields (whole objects), fields we set before and no longer want are found there;
 * without (a trimmed cache), status is compared both ways — the status is ours alone.
 */
export function statusNeedsApply(desiredStatus: unknown, live: KubeObject | undefined): boolean {
  if (!live) return true;
  if (!isSubset(desiredStatus, live.status)) return true;
  if (live.metadata.managedFields === undefined) return !isSubset(live.status ?? {}, desiredStatus ?? {});
  const owned = ourFields(live, "status");
  const ownedStatus = owned?.["f:status"];
  if (!isObject(ownedStatus)) return false;
  return ownsFieldsNotDesired(ownedStatus, desiredStatus ?? {});
}

/**
 * Applies `status` to `live` (of `type`: cached list items may lack apiVersion/kind) through the status subresource only when it differs from what is
 * stored; returns whether it wrote. The one place reconcilers keep status writes at zero.
 */
export async function applyStatusIfChanged(
  client: KubeClient,
  type: { apiVersion: string; kind: string },
  live: KubeObject,
  status: unknown,
): Promise<boolean> {
  if (!statusNeedsApply(status, live)) return false;
  await client.applyStatus({
    apiVersion: type.apiVersion,
    kind: type.kind,
    metadata: { name: live.metadata.name, namespace: live.metadata.namespace },
    status,
  });
  return true;
}
