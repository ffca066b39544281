import { describe, expect, it } from "vitest";
import {
  ANNOTATION_APPLIED_HASH,
  canonicalJson,
  desiredHash,
  isSubset,
  needsApply,
  needsApplyHashed,
  ownsFieldsNotDesired,
  statusNeedsApply,
  withAppliedHash,
} from "./apply.ts";
import type { KubeObject } from "./types.ts";

const desired: KubeObject = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "ns", labels: { app: "web" } },
  spec: {
    replicas: 2,
    template: { spec: { containers: [{ name: "c", image: "img:1", ports: [{ containerPort: 80 }] }] } },
  },
};

/** What the server returns: our fields plus defaults and bookkeeping. */
function live(overrides: (o: KubeObject) => void = () => {}): KubeObject {
  const o = structuredClone(desired) as KubeObject & { spec: Record<string, any> };
  o.metadata = {
    ...o.metadata,
    uid: "u1",
    resourceVersion: "42",
    generation: 3,
    creationTimestamp: "2026-01-01T00:00:00Z",
    labels: { app: "web", "pod-template-hash": "x" },
    annotations: { "deployment.kubernetes.io/revision": "1" },
    managedFields: [
      {
        manager: "cronscale",
        operation: "Apply",
        fieldsV1: {
          "f:metadata": { "f:labels": { "f:app": {} } },
          "f:spec": {
            "f:replicas": {},
            "f:template": {
              "f:spec": {
                "f:containers": {
                  'k:{"name":"c"}': {
                    ".": {},
                    "f:name": {},
                    "f:image": {},
                    "f:ports": { 'k:{"containerPort":80,"protocol":"TCP"}': {} },
                  },
                },
              },
            },
          },
        },
      },
    ],
  };
  o.spec.strategy = { type: "RollingUpdate" };
  o.spec.template.spec.containers[0].imagePullPolicy = "IfNotPresent";
  o.spec.template.spec.containers[0].ports[0].protocol = "TCP";
  o.status = { readyReplicas: 2 };
  overrides(o);
  return o;
}

describe("needsApply", () => {
  it("is false when live has every desired field (server defaults and bookkeeping ignored)", () => {
    expect(needsApply(desired, live())).toBe(false);
  });

  it("is true when the object does not exist", () => {
    expect(needsApply(desired, undefined)).toBe(true);
  });

  it("is true when a desired value differs", () => {
    const d = structuredClone(desired) as any;
    d.spec.template.spec.containers[0].image = "img:2";
    expect(needsApply(d, live())).toBe(true);
  });

  it("is true when a list gained or lost elements", () => {
    const d = structuredClone(desired) as any;
    d.spec.template.spec.containers.push({ name: "sidecar", image: "s" });
    expect(needsApply(d, live())).toBe(true);
  });

  it("is true when a label we applied earlier is no longer desired (apply would remove it)", () => {
    const d = structuredClone(desired) as any;
    d.metadata.labels = {};
    expect(needsApply(d, live())).toBe(true);
  });

  it("is false when someone else's label is on the live object", () => {
    expect(
      needsApply(
        desired,
        live((o) => (o.metadata.labels!.other = "x")),
      ),
    ).toBe(false);
  });

  it("ignores status when comparing the main resource", () => {
    expect(
      needsApply(
        desired,
        live((o) => (o.status = { readyReplicas: 0 })),
      ),
    ).toBe(false);
  });

  it("treats a number and its string form as equal (int-or-string fields)", () => {
    expect(isSubset({ port: 8080 }, { port: "8080" })).toBe(true);
    expect(isSubset({ port: 8080 }, { port: "8081" })).toBe(false);
  });

  it("treats empty desired maps, lists and false as matching an absent live field", () => {
    expect(isSubset({ a: {}, b: [], c: false }, {})).toBe(true);
    expect(isSubset({ a: "" }, {})).toBe(false);
  });

  it("notices a keyed list element we own that desired dropped", () => {
    const fields = { "f:spec": { "f:ports": { 'k:{"port":80}': {}, 'k:{"port":443}': {} } } };
    expect(ownsFieldsNotDesired(fields, { spec: { ports: [{ port: 80 }, { port: 443 }] } })).toBe(false);
    expect(ownsFieldsNotDesired(fields, { spec: { ports: [{ port: 80 }] } })).toBe(true);
  });

  it("notices a set element we own that desired dropped", () => {
    const fields = { "f:metadata": { "f:finalizers": { 'v:"a"': {}, 'v:"b"': {} } } };
    expect(ownsFieldsNotDesired(fields, { metadata: { finalizers: ["a", "b"] } })).toBe(false);
    expect(ownsFieldsNotDesired(fields, { metadata: { finalizers: ["a"] } })).toBe(true);
  });
});

describe("statusNeedsApply", () => {
  const obj = (status: unknown, owned?: Record<string, unknown>): KubeObject => ({
    apiVersion: "cronscale.io/v1alpha1",
    kind: "ScheduledTask",
    metadata: {
      name: "t",
      managedFields: owned
        ? [{ manager: "cronscale", operation: "Apply", subresource: "status", fieldsV1: owned }]
        : [],
    },
    status,
  });

  it("is false when live status already has the desired values", () => {
    expect(
      statusNeedsApply(
        { phase: "Ready", observedGeneration: 2 },
        obj({ phase: "Ready", observedGeneration: 2 }),
      ),
    ).toBe(false);
  });

  it("is true when a value differs", () => {
    expect(statusNeedsApply({ phase: "Ready" }, obj({ phase: "Failed" }))).toBe(true);
  });

  it("is true when a status field we own is no longer desired", () => {
    const owned = { "f:status": { "f:phase": {}, "f:lastError": {} } };
    expect(statusNeedsApply({ phase: "Ready" }, obj({ phase: "Ready", lastError: "x" }, owned))).toBe(true);
  });
});

describe("compare-before-apply without managedFields", () => {
  const stored = (d: KubeObject, extra: Record<string, unknown> = {}): KubeObject => ({
    ...structuredClone(d),
    ...extra,
    metadata: { ...structuredClone(d.metadata), uid: "u", resourceVersion: "7" },
  });

  it("skips an apply when the hash and the fields match, and applies when a field is dropped or changed", () => {
    const d = withAppliedHash(desired);
    expect(d.metadata.annotations?.[ANNOTATION_APPLIED_HASH]).toMatch(/^[\w-]{22}$/);
    // Key order does not change the hash.
    const reordered = withAppliedHash({
      ...desired,
      spec: { template: (desired.spec as Record<string, unknown>).template, replicas: 2 },
    });
    expect(reordered.metadata.annotations).toEqual(d.metadata.annotations);
    const l = stored(d, { status: { ready: 1 } });
    expect(needsApplyHashed(d, l)).toBe(false);
    expect(needsApplyHashed(d, undefined)).toBe(true);
    // We stop setting replicas: the live object still has it, only the hash tells.
    const { replicas: _r, ...spec } = desired.spec as Record<string, unknown>;
    expect(needsApplyHashed(withAppliedHash({ ...desired, spec }), l)).toBe(true);
    // Someone else changed a field we set: put it back.
    const drifted = stored(d);
    (drifted.spec as { replicas: number }).replicas = 5;
    expect(needsApplyHashed(d, drifted)).toBe(true);
  });

  it("compares an immutable object by its metadata only (cached metadata-only)", () => {
    const cmap = withAppliedHash({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "s", namespace: "ns", labels: { a: "b" } },
      immutable: true,
      data: { script: "echo" },
    });
    const metaOnly: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: structuredClone(cmap.metadata),
    };
    expect(needsApplyHashed(cmap, metaOnly)).toBe(false);
    expect(needsApplyHashed(cmap, { ...metaOnly, metadata: { ...metaOnly.metadata, labels: {} } })).toBe(
      true,
    );
  });

  it("status without managedFields is compared both ways (a field we stop setting is removed)", () => {
    const l: KubeObject = { ...desired, status: { phase: "Running", nextRunTime: "t" } };
    expect(statusNeedsApply({ phase: "Running", nextRunTime: "t" }, l)).toBe(false);
    expect(statusNeedsApply({ phase: "Running" }, l)).toBe(true);
  });
});

describe("desiredHash", () => {
  it("stays the same text for the same object: live objects carry hashes made by earlier versions", () => {
    const o = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "n",
        namespace: "ns",
        labels: { b: "2", a: "1", "10": "x", "2": "y" },
        annotations: { [ANNOTATION_APPLIED_HASH]: "ignored", q: 'é"\n' },
      },
      data: { z: "1", y: undefined },
      spec: { list: [1, undefined, { b: true, a: null }, [], {}], n: 1.5, s: "" },
    } as unknown as KubeObject;
    // Pinned: a different text would change every stored hash and re-apply every child once.
    expect(desiredHash(o)).toBe("Y3Yn7bue6OcSwtScaFt6_v");
    expect(desiredHash({ ...o, data: { y: undefined, z: "1" } } as KubeObject)).toBe(
      "Y3Yn7bue6OcSwtScaFt6_v",
    );
  });
});

describe("canonicalJson", () => {
  // The plain definition it must equal byte for byte: keys by Array.prototype.sort's default order.
  const reference = (x: unknown): string => {
    if (Array.isArray(x)) return `[${x.map((v) => (v === undefined ? "null" : reference(v))).join(",")}]`;
    if (x !== null && typeof x === "object") {
      const parts = Object.keys(x)
        .sort()
        .filter((k) => (x as Record<string, unknown>)[k] !== undefined)
        .map((k) => `${JSON.stringify(k)}:${reference((x as Record<string, unknown>)[k])}`);
      return `{${parts.join(",")}}`;
    }
    return JSON.stringify(x) ?? "null";
  };
  // Deterministic pseudo-random values (mulberry32), so a failure names a reproducible seed.
  const rng = (seed: number) => () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const alphabet = ["a", "B", "z", "_", "-", "0", "9", "10", "é", "Z", "ß", "😀", ".", "/"];
  const value = (r: () => number, depth: number): unknown => {
    const pick = r();
    if (depth > 2 || pick < 0.3)
      return [r().toString(36), 42, -1.5, true, null, undefined, 'q"\n'][Math.floor(r() * 7)];
    if (pick < 0.5) return Array.from({ length: Math.floor(r() * 5) }, () => value(r, depth + 1));
    // Up to 40 keys at the top (past 32 the built-in sort takes over), a few below.
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(r() * (depth === 0 ? 40 : 6)); i > 0; i--) {
      const key = Array.from(
        { length: 1 + Math.floor(r() * 3) },
        () => alphabet[Math.floor(r() * alphabet.length)],
      ).join("");
      o[key] = value(r, depth + 1);
    }
    return o;
  };

  it("equals the plain definition on 2,000 random objects, with integer-like and non-ASCII keys", () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const x = value(rng(seed), 0);
      expect(canonicalJson(x), `seed ${seed}`).toBe(reference(x));
    }
  });
});
