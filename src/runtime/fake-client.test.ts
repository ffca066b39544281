import { describe, expect, it } from "vitest";
import { FakeClock } from "./clock.ts";
import { isConflict, isNotFound } from "./errors.ts";
import { FakeKubeClient } from "./fake-client.ts";
import type { KubeObject } from "./types.ts";

const owner: KubeObject = {
  apiVersion: "cronscale.io/v1alpha1",
  kind: "ScheduledTask",
  metadata: { name: "t", namespace: "ns" },
  spec: { schedule: "* * * * *" },
};

function child(
  name: string,
  uid: string,
  labels: Record<string, string> = { "cronscale.io/task": "t" },
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace: "ns",
      labels,
      ownerReferences: [
        { apiVersion: "cronscale.io/v1alpha1", kind: "ScheduledTask", name: "t", uid, controller: true },
      ],
    },
    data: { a: "1" },
  };
}

describe("FakeKubeClient", () => {
  it("assigns uid, resourceVersion, creationTimestamp and generation 1 on create", async () => {
    const c = new FakeKubeClient({ clock: new FakeClock("2026-05-05T05:05:05.5Z") });
    const o = await c.create(owner);
    expect(o.metadata).toMatchObject({ generation: 1, creationTimestamp: "2026-05-05T05:05:05Z" });
    expect(o.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number(o.metadata.resourceVersion)).toBeGreaterThan(0);
  });

  it("applying the same object twice changes nothing the second time", async () => {
    const c = new FakeKubeClient();
    const a = await c.apply(owner);
    const b = await c.apply(owner);
    expect(b.metadata.resourceVersion).toBe(a.metadata.resourceVersion);
    expect(c.writes.map((w) => [w.verb, w.changed])).toEqual([
      ["apply", true],
      ["apply", false],
    ]);
    expect(c.changedWrites()).toHaveLength(1);
  });

  it("bumps generation only on spec changes, not on label or status changes", async () => {
    const c = new FakeKubeClient();
    await c.apply(owner);
    const labeled = await c.apply({ ...owner, metadata: { ...owner.metadata, labels: { x: "y" } } });
    expect(labeled.metadata.generation).toBe(1);
    const st = await c.applyStatus({ ...owner, status: { phase: "Ready" } });
    expect(st.metadata.generation).toBe(1);
    expect(st.status).toEqual({ phase: "Ready" });
    const changed = await c.apply({ ...owner, spec: { schedule: "0 * * * *" } });
    expect(changed.metadata.generation).toBe(2);
    expect(changed.status).toEqual({ phase: "Ready" });
  });

  it("get returns undefined for a missing object; delete reports whether it existed", async () => {
    const c = new FakeKubeClient();
    expect(await c.get("v1", "ConfigMap", "ns", "nope")).toBeUndefined();
    expect(await c.delete("v1", "ConfigMap", "ns", "nope")).toBe(false);
  });

  it("lists by namespace and label selector", async () => {
    const c = new FakeKubeClient();
    c.seed(child("a", "u"));
    c.seed(child("b", "u", { other: "x" }));
    c.seed({ ...child("c", "u"), metadata: { ...child("c", "u").metadata, namespace: "ns2" } });
    expect(
      (await c.list("v1", "ConfigMap", "ns", "cronscale.io/task=t")).map((o) => o.metadata.name),
    ).toEqual(["a"]);
    expect(await c.list("v1", "ConfigMap")).toHaveLength(3);
  });

  it("deleting an owner garbage-collects its dependents", async () => {
    const c = new FakeKubeClient();
    const o = await c.create(owner);
    await c.create(child("a", o.metadata.uid!));
    await c.create(child("unrelated", "other-uid"));
    await c.delete(owner.apiVersion, owner.kind, "ns", "t");
    expect((await c.list("v1", "ConfigMap", "ns")).map((x) => x.metadata.name)).toEqual(["unrelated"]);
  });

  it("honours finalizers: delete marks, removing the last finalizer completes", async () => {
    const c = new FakeKubeClient();
    await c.create({ ...owner, metadata: { ...owner.metadata, finalizers: ["cronscale.io/x"] } });
    await c.delete(owner.apiVersion, owner.kind, "ns", "t");
    const marked = await c.get(owner.apiVersion, owner.kind, "ns", "t");
    expect(marked?.metadata.deletionTimestamp).toBeDefined();
    await c.replace({ ...marked!, metadata: { ...marked!.metadata, finalizers: [] } });
    expect(await c.get(owner.apiVersion, owner.kind, "ns", "t")).toBeUndefined();
  });

  it("replace enforces the resourceVersion precondition", async () => {
    const c = new FakeKubeClient();
    const o = await c.create(owner);
    await c.replace({ ...o, spec: { schedule: "1 * * * *" } });
    const err = await c.replace({ ...o, spec: { schedule: "2 * * * *" } }).catch((e: unknown) => e);
    expect(isConflict(err)).toBe(true);
  });

  it("create of an existing object is a conflict; applyStatus of a missing one is not found", async () => {
    const c = new FakeKubeClient();
    await c.create(owner);
    expect(isConflict(await c.create(owner).catch((e: unknown) => e))).toBe(true);
    const missing = { ...owner, metadata: { name: "x", namespace: "ns" } };
    expect(isNotFound(await c.applyStatus(missing).catch((e: unknown) => e))).toBe(true);
  });

  it("can inject errors per verb", async () => {
    const c = new FakeKubeClient();
    c.injectError = (verb) => (verb === "apply" ? new Error("boom") : undefined);
    await expect(c.apply(owner)).rejects.toThrow("boom");
    await expect(c.create(owner)).resolves.toBeDefined();
  });

  it("notifies subscribers like a watch", async () => {
    const c = new FakeKubeClient();
    const seen: string[] = [];
    c.subscribe((e) => seen.push(`${e.type} ${e.object.metadata.name}`));
    await c.apply(owner);
    await c.apply(owner);
    await c.apply({ ...owner, spec: { schedule: "5 * * * *" } });
    await c.delete(owner.apiVersion, owner.kind, "ns", "t");
    expect(seen).toEqual(["ADDED t", "MODIFIED t", "DELETED t"]);
  });
});

describe("FakeKubeClient apply semantics", () => {
  it("removes data keys, fields and labels a later apply no longer carries, keeping others' labels", async () => {
    const c = new FakeKubeClient();
    const base = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "m", namespace: "ns" } };
    await c.apply({
      ...base,
      metadata: { ...base.metadata, labels: { a: "1", b: "2" } },
      data: { x: "1", y: "2" },
      binaryData: { z: "AA==" },
    });
    const live = (await c.get("v1", "ConfigMap", "ns", "m"))!;
    await c.replace({
      ...live,
      metadata: { ...live.metadata, labels: { ...live.metadata.labels, theirs: "t" } },
    });
    const after = await c.apply({
      ...base,
      metadata: { ...base.metadata, labels: { a: "1" } },
      data: { x: "1" },
    });
    expect(after.data).toEqual({ x: "1" });
    expect(after.binaryData).toBeUndefined();
    expect(after.metadata.labels).toEqual({ a: "1", theirs: "t" });
  });
});
