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
