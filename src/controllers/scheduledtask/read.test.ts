import { describe, expect, it } from "vitest";
import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import type { CacheReader, KubeObject } from "../../runtime/types.ts";
import { readTask } from "./read.ts";
import { makeCtx, makeTask } from "./testing.ts";

const bash = { language: "Bash" as const, script: "echo hi", plan: "Micro" as const };
const key = { namespace: "ns", name: "hello" };

/** A cache holding a fixed set of objects (what an informer would have seen). */
function staticCache(objects: KubeObject[]): CacheReader {
  const find = (apiVersion: string, kind: string, namespace?: string) =>
    objects.filter(
      (o) =>
        o.apiVersion === apiVersion && o.kind === kind && (!namespace || o.metadata.namespace === namespace),
    );
  return {
    get: <T extends KubeObject>(apiVersion: string, kind: string, namespace: string, name: string) =>
      find(apiVersion, kind, namespace).find((o) => o.metadata.name === name) as T | undefined,
    list: <T extends KubeObject>(apiVersion: string, kind: string, namespace?: string) =>
      find(apiVersion, kind, namespace) as T[],
  };
}

describe("readTask", () => {
  it("returns the stored task", async () => {
    const { ctx } = makeCtx([makeTask("hello", bash)]);
    const task = await readTask(ctx, new Set(), key);
    expect(task?.metadata.name).toBe("hello");
    expect(task?.spec.script).toBe("echo hi");
  });

  it("returns undefined for a task that does not exist", async () => {
    const { ctx } = makeCtx([makeTask("other", bash)]);
    expect(await readTask(ctx, new Set(), key)).toBeUndefined();
  });

  it("returns undefined for a task being deleted", async () => {
    const task = makeTask("hello", bash);
    task.metadata.deletionTimestamp = "2026-01-01T00:00:10Z";
    task.metadata.finalizers = ["example.com/hold"];
    const { ctx } = makeCtx([task]);
    expect(await readTask(ctx, new Set(), key)).toBeUndefined();
  });

  it("reads from the informer cache when ScheduledTask is watched, from the API server otherwise", async () => {
    const inCache = makeTask("hello", { ...bash, script: "echo cached" });
    const { ctx } = makeCtx([makeTask("hello", { ...bash, script: "echo live" })]);
    ctx.cache = staticCache([inCache]);
    const watched = new Set([`${API_VERSION}|ScheduledTask`]);
    expect((await readTask(ctx, watched, key))?.spec.script).toBe("echo cached");
    expect((await readTask(ctx, new Set(), key))?.spec.script).toBe("echo live");
  });
});
