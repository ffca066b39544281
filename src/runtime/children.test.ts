import pino from "pino";
import { describe, expect, it } from "vitest";
import { type ChildPlan, executePlan, foreignChild, readChildren, readLabelled } from "./children.ts";
import { FakeClock } from "./clock.ts";
import { MemoryEventRecorder } from "./events.ts";
import { FakeKubeClient } from "./fake-client.ts";
import type { KubeObject, ReconcileContext } from "./types.ts";

const OWNER = { apiVersion: "example.io/v1", kind: "Owner", name: "o", uid: "uid-o", controller: true };

function cm(name: string, data: Record<string, string>, owned = true): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace: "ns",
      labels: { owner: "o" },
      ...(owned ? { ownerReferences: [OWNER] } : {}),
    },
    data,
  };
}

function setup(objects: KubeObject[] = []) {
  const clock = new FakeClock("2026-01-01T00:00:00Z");
  const client = new FakeKubeClient({ clock, objects });
  const ctx: ReconcileContext = {
    client,
    clock,
    events: new MemoryEventRecorder(),
    log: pino({ level: "silent" }),
    reconcileId: "t",
  };
  return { client, ctx };
}

async function run(s: ReturnType<typeof setup>, plan: ChildPlan) {
  const refs = plan.children.map((c) =>
    c.policy === "createOnce"
      ? c.ref
      : { apiVersion: c.object.apiVersion, kind: c.object.kind, name: c.object.metadata.name ?? "" },
  );
  const live = await readChildren(s.ctx, new Set(), "ns", refs);
  const labelled = await readLabelled(s.ctx, new Set(), "ns", plan.prune, "owner=o");
  return executePlan(s.ctx, plan, { live, labelled }, { uid: "uid-o", log: {} });
}

const writes = (c: FakeKubeClient) => c.changedWrites().map((w) => `${w.verb} ${w.kind}/${w.name}`);

describe("executePlan", () => {
  it("applies an apply child only when it differs, and reports it created once", async () => {
    const s = setup();
    const plan: ChildPlan = {
      children: [{ part: "p", policy: "apply", object: cm("a", { k: "1" }) }],
      prune: [],
    };
    const first = await run(s, plan);
    expect(first.created.map((c) => c.object.metadata.name)).toEqual(["a"]);
    s.client.clearWrites();
    const again = await run(s, plan);
    expect(again.created).toEqual([]);
    expect(s.client.writes).toEqual([]);
    await run(s, { ...plan, children: [{ part: "p", policy: "apply", object: cm("a", { k: "2" }) }] });
    expect(writes(s.client)).toEqual(["apply ConfigMap/a"]);
  });

  it("creates a createOnce child when absent and never calls make again", async () => {
    const s = setup();
    let made = 0;
    const plan: ChildPlan = {
      children: [
        {
          part: "p",
          policy: "createOnce",
          ref: { apiVersion: "v1", kind: "ConfigMap", name: "once" },
          make: () => {
            made++;
            return cm("once", { v: String(made) });
          },
        },
      ],
      prune: [],
    };
    await run(s, plan);
    await run(s, plan);
    expect(made).toBe(1);
    expect((await s.client.get("v1", "ConfigMap", "ns", "once"))?.data).toEqual({ v: "1" });
  });

  it("patches a patchOnly child only when it exists; a keep child is never written", async () => {
    const s = setup();
    const plan: ChildPlan = {
      children: [
        { part: "p", policy: "patchOnly", object: cm("theirs", { size: "2" }, false) },
        { part: "p", policy: "keep", object: cm("held", { k: "new" }) },
      ],
      prune: [],
    };
    await run(s, plan);
    expect(writes(s.client)).toEqual([]);
    await s.client.create(cm("theirs", { size: "1" }, false));
    await s.client.create(cm("held", { k: "old" }));
    s.client.clearWrites();
    await run(s, plan);
    expect(writes(s.client)).toEqual(["apply ConfigMap/theirs"]);
    expect((await s.client.get("v1", "ConfigMap", "ns", "held"))?.data).toEqual({ k: "old" });
  });

  it("prunes what the owner controls and did not plan, of the pruned types only", async () => {
    const s = setup([
      cm("kept", { k: "1" }),
      cm("gone", { k: "1" }),
      cm("someone-elses", { k: "1" }, false),
      { ...cm("secret", {}), kind: "Secret" },
    ]);
    const plan: ChildPlan = {
      children: [{ part: "p", policy: "apply", object: cm("kept", { k: "1" }) }],
      prune: [{ apiVersion: "v1", kind: "ConfigMap" }],
    };
    const done = await run(s, plan);
    expect(writes(s.client)).toEqual(["delete ConfigMap/gone"]);
    expect(await s.client.get("v1", "ConfigMap", "ns", "someone-elses")).toBeDefined();
    expect(await s.client.get("v1", "Secret", "ns", "secret")).toBeDefined();
    expect(done.live.get("ConfigMap/kept")).toBeDefined();
  });

  it("refuses to write a planned child that was not read first", async () => {
    const s = setup();
    const plan: ChildPlan = { children: [{ part: "p", policy: "apply", object: cm("a", {}) }], prune: [] };
    await expect(
      executePlan(s.ctx, plan, { live: new Map(), labelled: [] }, { uid: "uid-o", log: {} }),
    ).rejects.toThrow("ConfigMap/a was not read");
  });
});

describe("foreignChild", () => {
  it("names the first planned child held by an object the owner does not control", async () => {
    const s = setup([cm("taken", {}, false)]);
    const plan: ChildPlan = {
      children: [
        { part: "p", policy: "apply", object: cm("free", {}) },
        { part: "p", policy: "apply", object: cm("taken", {}) },
      ],
      prune: [],
    };
    const live = await readChildren(s.ctx, new Set(), "ns", [
      { apiVersion: "v1", kind: "ConfigMap", name: "free" },
      { apiVersion: "v1", kind: "ConfigMap", name: "taken" },
    ]);
    expect(foreignChild(plan, live, "uid-o", "owner")).toBe(
      "ConfigMap taken already exists and does not belong to this owner",
    );
    // Unowned and patchOnly children are someone else's by design.
    const mine: ChildPlan = {
      children: [{ part: "p", policy: "patchOnly", object: cm("taken", {}) }],
      prune: [],
    };
    expect(foreignChild(mine, live, "uid-o", "owner")).toBeUndefined();
  });
});
