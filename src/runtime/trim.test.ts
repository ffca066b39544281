import { describe, expect, it } from "vitest";
import { sharingWithPrevious, withoutManagedFields } from "./trim.ts";
import type { KubeObject } from "./types.ts";

const cronJob = (name: string, script: string): KubeObject =>
  // A fresh parse, as from the API server: no instance is shared to begin with.
  JSON.parse(
    JSON.stringify({
      apiVersion: "batch/v1",
      kind: "CronJob",
      metadata: { name, labels: { task: name, managed: "yes" } },
      spec: {
        schedule: "0 0 1 1 *",
        template: { command: ["bash", "-c", script], securityContext: { runAsNonRoot: true }, env: [] },
        volumes: [{ name: "script", configMap: { name: `${name}-script` } }],
      },
    }),
  );

describe("sharingWithPrevious", () => {
  it("keeps every value and shares the parts equal to the previous object's", () => {
    const share = sharingWithPrevious();
    const first = share(cronJob("a", "long runner script"));
    const input = cronJob("b", "long runner script");
    const second = share(structuredClone(input));
    expect(second).toEqual(input);
    const t1 = (first.spec as { template: Record<string, unknown> }).template;
    const t2 = (second.spec as { template: Record<string, unknown> }).template;
    expect(t2).toBe(t1);
    expect(second.metadata).not.toBe(first.metadata);
    expect(second.metadata.labels).not.toBe(first.metadata.labels);
    expect((second.spec as { volumes: unknown[] }).volumes).not.toBe(
      (first.spec as { volumes: unknown[] }).volumes,
    );
  });

  it("shares nothing that differs, however deep or however small the difference", () => {
    const share = sharingWithPrevious();
    share(cronJob("a", "one"));
    const input = cronJob("a", "two");
    const out = share(structuredClone(input));
    expect(out).toEqual(input);
    expect((out.spec as { template: { command: string[] } }).template.command[2]).toBe("two");
    // Arrays of different length and objects with an extra key are not the previous ones either.
    const longer = share({ ...input, spec: { ...(input.spec as object), extra: [1, 2] } });
    expect((longer.spec as { extra: number[] }).extra).toEqual([1, 2]);
    expect(share({ ...input, spec: {} }).spec).toEqual({});
    expect(share(input)).toEqual(input);
  });

  it("treats missing, null and falsy members as values of their own", () => {
    const share = sharingWithPrevious();
    const a = { apiVersion: "v1", kind: "X", metadata: { name: "a" }, spec: { n: 0, b: false, z: null } };
    share(structuredClone(a));
    const b = { apiVersion: "v1", kind: "X", metadata: { name: "a" }, spec: { n: 0, b: false } };
    expect(share(structuredClone(b))).toEqual(b);
    const c = {
      apiVersion: "v1",
      kind: "X",
      metadata: { name: "a" },
      spec: { n: 0, b: false, z: undefined },
    };
    expect(share(structuredClone(c)).spec).toEqual({ n: 0, b: false, z: undefined });
  });
});

describe("sharingWithPrevious, around a difference", () => {
  type Obj = KubeObject & { spec: { a: object; b: string; c: object; list: object[] } };
  const obj = (b: string, middle: string): Obj =>
    JSON.parse(
      JSON.stringify({
        apiVersion: "v1",
        kind: "X",
        metadata: { name: "a" },
        spec: { a: { deep: 1 }, b, c: { deep: 2 }, list: [{ i: 0 }, { i: middle }, { i: 2 }] },
      }),
    );

  it("keeps sharing the parts before and after the first one that differs", () => {
    const share = sharingWithPrevious<Obj>();
    const first = share(obj("one", "m"));
    const input = obj("two", "changed");
    const out = share(structuredClone(input));
    expect(out).toEqual(input);
    expect(out.spec).not.toBe(first.spec);
    expect(out.spec.a).toBe(first.spec.a);
    expect(out.spec.c).toBe(first.spec.c);
    expect(out.spec.list).not.toBe(first.spec.list);
    expect(out.spec.list[0]).toBe(first.spec.list[0]);
    expect(out.spec.list[1]).not.toBe(first.spec.list[1]);
    expect(out.spec.list[2]).toBe(first.spec.list[2]);
  });

  it("does not take an object with fewer keys for the previous one", () => {
    const share = sharingWithPrevious<KubeObject>();
    const first = share(obj("one", "m")) as Obj;
    const fewer = { ...obj("one", "m"), spec: { a: { deep: 1 } } };
    const out = share(structuredClone(fewer)) as unknown as { spec: { a: object } };
    expect(out.spec).toEqual({ a: { deep: 1 } });
    expect(out.spec).not.toBe(first.spec);
    expect(out.spec.a).toBe(first.spec.a);
  });
});

describe("withoutManagedFields", () => {
  it("drops managedFields only", () => {
    const o = {
      apiVersion: "v1",
      kind: "X",
      metadata: { name: "a", managedFields: [{}], labels: { a: "b" } },
    };
    expect(withoutManagedFields(o)).toEqual({
      apiVersion: "v1",
      kind: "X",
      metadata: { name: "a", labels: { a: "b" } },
    });
  });
});

describe("sharingWithPrevious, empty members", () => {
  it("never replaces an empty list or map by a missing one", () => {
    const share = sharingWithPrevious();
    share({ apiVersion: "v1", kind: "X", metadata: { name: "a" } });
    const out = share({ apiVersion: "v1", kind: "X", metadata: { name: "a", labels: {} }, spec: { l: [] } });
    expect(out).toEqual({
      apiVersion: "v1",
      kind: "X",
      metadata: { name: "a", labels: {} },
      spec: { l: [] },
    });
  });
});
