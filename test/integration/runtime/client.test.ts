import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log.ts";
import { needsApply, statusNeedsApply } from "../../../src/runtime/apply.ts";
import { RealClock } from "../../../src/runtime/clock.ts";
import { KubeEventRecorder } from "../../../src/runtime/events.ts";
import { kubeConnection } from "../../../src/runtime/kube.ts";
import { LeaderElector } from "../../../src/runtime/leader.ts";
import type { KubeObject } from "../../../src/runtime/types.ts";
import { kubeConfig, useNamespace, waitFor } from "../../support/cluster.ts";

// The KubeClient, needsApply, events and leases against the real API server.

const ns = useNamespace("rt-client");
const { client } = kubeConnection(kubeConfig());

const GROUP = "runtimetest.cronscale.io";
const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: "Namespaced",
    names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
              status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
            },
          },
        },
      },
    ],
  },
};

beforeAll(async () => {
  await client.apply(crd);
  await waitFor(
    async () => {
      const c = await client.get<KubeObject>(crd.apiVersion, crd.kind, "", crd.metadata.name);
      const conds = (c?.status as { conditions?: { type: string; status: string }[] })?.conditions ?? [];
      return conds.some((x) => x.type === "Established" && x.status === "True");
    },
    { what: "test CRD established" },
  );
});

afterAll(async () => {
  await client.delete(crd.apiVersion, crd.kind, "", crd.metadata.name);
});

function deployment(
  image: string,
  labels: Record<string, string> = { app: "web", extra: "yes" },
): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: ns.name, labels },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: {
          containers: [
            { name: "c", image, ports: [{ containerPort: 8080 }], resources: { limits: { memory: "64Mi" } } },
          ],
        },
      },
    },
  };
}

describe("RealKubeClient against the API server", () => {
  it("applying the same desired object twice leaves resourceVersion unchanged", async () => {
    const cm: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "same", namespace: ns.name },
      data: { a: "1" },
    };
    const first = await client.apply(cm);
    const second = await client.apply(cm);
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    const managers = (second.metadata.managedFields as { manager: string; operation: string }[]).map(
      (m) => `${m.manager}/${m.operation}`,
    );
    expect(managers).toContain("cronscale/Apply");
  });

  it("needsApply is false for the live object the server returns and true once desired changes", async () => {
    const desired = deployment("img:1");
    const live = await client.apply(desired);
    // The server added defaults (strategy, protocol, imagePullPolicy, ...) and bookkeeping.
    expect(needsApply(desired, live)).toBe(false);
    expect(needsApply(deployment("img:2"), live)).toBe(true);
    // A label we applied before and no longer want: an apply is needed, and it removes the label.
    const fewer = deployment("img:1", { app: "web" });
    expect(needsApply(fewer, live)).toBe(true);
    const after = await client.apply(fewer);
    expect(after.metadata.labels).toEqual({ app: "web" });
    expect(needsApply(fewer, after)).toBe(false);
  });

  it("applies status through the status subresource, and a repeat is a no-op", async () => {
    const w: KubeObject = {
      apiVersion: `${GROUP}/v1`,
      kind: "Widget",
      metadata: { name: "w", namespace: ns.name },
      spec: { size: 1 },
    };
    const created = await client.apply(w);
    expect(created.metadata.generation).toBe(1);
    const status = { phase: "Ready", observedGeneration: 1 };
    const s1 = await client.applyStatus({ ...w, status });
    expect(s1.status).toEqual(status);
    expect(s1.metadata.generation).toBe(1);
    expect(statusNeedsApply(status, s1)).toBe(false);
    const s2 = await client.applyStatus({ ...w, status });
    expect(s2.metadata.resourceVersion).toBe(s1.metadata.resourceVersion);
    // Status sent on the main resource is ignored by the server (status subresource enabled).
    const again = await client.apply({ ...w, status: { phase: "Bogus" } });
    expect(again.status).toEqual(status);
  });

  it("get/list/delete: missing objects are undefined, list pages through everything", async () => {
    expect(await client.get("v1", "ConfigMap", ns.name, "nope")).toBeUndefined();
    for (let i = 0; i < 5; i++) {
      await client.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `l${i}`, namespace: ns.name, labels: { set: "l" } },
      });
    }
    const listed = await client.list("v1", "ConfigMap", ns.name, "set=l");
    expect(listed.map((o) => o.metadata.name).sort()).toEqual(["l0", "l1", "l2", "l3", "l4"]);
    expect(listed[0]).toMatchObject({ apiVersion: "v1", kind: "ConfigMap" });
    expect(await client.delete("v1", "ConfigMap", ns.name, "l0")).toBe(true);
    expect(await client.delete("v1", "ConfigMap", ns.name, "l0")).toBe(false);
  });

  it("records an events.k8s.io/v1 Event the server accepts, and deduplicates repeats", async () => {
    const cm = await client.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "evt", namespace: ns.name },
    });
    const rec = new KubeEventRecorder({
      client,
      clock: new RealClock(),
      log: silentLogger(),
      reportingInstance: "it",
    });
    for (let i = 0; i < 5; i++) await rec.warning(cm, "InvalidThing", "Validate", "the thing is invalid");
    const events = (await client.list<KubeObject>("events.k8s.io/v1", "Event", ns.name)).filter(
      (e) => (e.regarding as { name?: string })?.name === "evt",
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: "Warning",
      reason: "InvalidThing",
      note: "the thing is invalid",
      reportingController: "cronscale.io/operator",
    });
  });

  it("leader election creates and renews a real Lease and releases it", async () => {
    const le = new LeaderElector({
      client,
      clock: new RealClock(),
      log: silentLogger(),
      namespace: ns.name,
      name: "it-lease",
      identity: "it-1",
      leaseDurationMs: 4000,
      renewDeadlineMs: 3000,
      retryPeriodMs: 500,
    });
    le.start();
    await waitFor(() => le.isLeader(), { timeoutMs: 10_000, what: "leadership" });
    const lease = await client.get<KubeObject>("coordination.k8s.io/v1", "Lease", ns.name, "it-lease");
    expect(lease?.spec).toMatchObject({ holderIdentity: "it-1", leaseDurationSeconds: 4 });
    const renew1 = (lease!.spec as { renewTime: string }).renewTime;
    await new Promise((r) => setTimeout(r, 1200));
    const renewed = await client.get<KubeObject>("coordination.k8s.io/v1", "Lease", ns.name, "it-lease");
    expect((renewed!.spec as { renewTime: string }).renewTime).not.toBe(renew1);
    await le.stop();
    const released = await client.get<KubeObject>("coordination.k8s.io/v1", "Lease", ns.name, "it-lease");
    expect((released!.spec as { holderIdentity?: string }).holderIdentity ?? "").toBe("");
  });
});
