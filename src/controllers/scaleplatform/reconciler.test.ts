import { describe, expect, it } from "vitest";
import type { ScalePlatform } from "../../api/v1alpha1/scaleplatform.ts";
import type { FakeKubeClient } from "../../runtime/fake-client.ts";
import type { KubeObject } from "../../runtime/types.ts";
import { FeatureDetector } from "./features.ts";
import { HealthTracker } from "./health.ts";
import { ScalePlatformReconciler } from "./reconciler.ts";
import {
  clusterObjects,
  counterRandom,
  fakeProbe,
  makeCtx,
  makePlatform,
  settle,
  simulateCluster,
  TEST_CONFIG,
} from "./testing.ts";

const key = { namespace: "ns", name: "shop" };

function setup(opts: { certManager?: boolean; customMetrics?: boolean; platform?: ScalePlatform } = {}) {
  const env = makeCtx([opts.platform ?? makePlatform("shop"), ...clusterObjects(opts)]);
  const rnd = counterRandom();
  const health = fakeProbe(true);
  const make = () =>
    new ScalePlatformReconciler(TEST_CONFIG, {
      random: rnd.random,
      probe: health.probe,
      detector: new FeatureDetector(60_000),
      health: new HealthTracker(),
    });
  return { ...env, rnd, health, make, rec: make() };
}

async function getPlatform(client: FakeKubeClient): Promise<ScalePlatform> {
  return (await client.get("cronscale.io/v1alpha1", "ScalePlatform", "ns", "shop")) as ScalePlatform;
}

describe("ScalePlatformReconciler", () => {
  it("creates every child on the first pass and reports Provisioning with step 1 in progress", async () => {
    const s = setup();
    await s.rec.reconcile(key, s.ctx);
    const kinds = s.client
      .changedWrites()
      .filter((w) => w.verb !== "applyStatus")
      .map((w) => `${w.kind}/${w.name}`)
      .sort();
    expect(kinds).toEqual([
      "ConfigMap/shop-config",
      "Deployment/shop",
      "HorizontalPodAutoscaler/shop",
      "Ingress/shop",
      "PodDisruptionBudget/shop",
      "Secret/shop-credentials",
      "Secret/shop-db-credentials",
      "Service/shop",
      "Service/shop-db",
      "StatefulSet/shop-db",
    ]);
    const p = await getPlatform(s.client);
    expect(p.status?.phase).toBe("Provisioning");
    expect(p.status?.stepSummary).toBe("0/7");
    expect(p.status?.steps?.[0]).toMatchObject({ name: "InfrastructureProvisioned", state: "InProgress" });
    expect(p.status?.credentialsSecretName).toBe("shop-credentials");
    expect(p.status?.activeScalingTriggers).toEqual(["CPU", "Memory"]);
  });

  it("walks the seven steps in order to Running, with an Event per step and one on completion", async () => {
    const s = setup({ certManager: true });
    await settle(s);
    const p = await getPlatform(s.client);
    expect(p.status?.phase).toBe("Running");
    expect(p.status?.stepSummary).toBe("7/7");
    const steps = p.status?.steps ?? [];
    expect(steps.map((x) => x.state)).toEqual(Array(7).fill("Done"));
    for (let i = 1; i < steps.length; i++)
      expect(steps[i]!.finishedAt! >= steps[i - 1]!.finishedAt!).toBe(true);
    const reasons = s.events.events.map((e) => e.reason);
    expect(reasons).toContain("InfrastructureProvisioned");
    expect(reasons).toContain("HealthChecksPerformed");
    expect(reasons).toContain("Deployed");
    expect(s.health.urls[0]).toBe("http://10.0.0.10:8080/readyz");
    expect(p.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
    expect(p.status?.deployedTime).toBeDefined();
  });

  it("carries the uptime in the very status that first says Running (no extra write just after)", async () => {
    const s = setup({ certManager: true });
    let p = await getPlatform(s.client);
    for (let i = 0; i < 10 && p.status?.phase !== "Running"; i++) {
      await s.rec.reconcile(key, s.ctx);
      await simulateCluster(s.client, "shop");
      p = await getPlatform(s.client);
      s.clock.advance(3000);
    }
    expect(p.status?.phase).toBe("Running");
    expect(p.status?.uptimePercent).toBe(100);
    expect(p.status?.uptimeSince).toBeDefined();
    expect(String(p.status?.uptimeSince) <= String(p.status?.deployedTime)).toBe(true);
    // The next passes (health checks due and passing) change nothing.
    s.client.clearWrites();
    for (let i = 0; i < 3; i++) {
      s.clock.advance(20_000);
      await s.rec.reconcile(key, s.ctx);
    }
    expect(s.client.writes.map((w) => `${w.verb} ${w.kind}/${w.name}`)).toEqual([]);
  });

  it("makes zero writes at steady state", async () => {
    const s = setup({ certManager: true });
    await settle(s);
    s.client.clearWrites();
    for (let i = 0; i < 5; i++) {
      s.clock.advance(20_000); // health checks keep running and passing
      await s.rec.reconcile(key, s.ctx);
    }
    // Not even no-op applies: every write request is a request the API server has to serve.
    expect(s.client.writes.map((w) => `${w.verb} ${w.kind}/${w.name}`)).toEqual([]);
    expect(s.health.urls.length).toBeGreaterThan(3);
  });

  it("never writes replicas on the HPA-scaled Deployment, even when the HPA scaled it", async () => {
    const s = setup();
    await settle(s);
    const dep = (await s.client.get("apps/v1", "Deployment", "ns", "shop")) as KubeObject;
    expect((dep.spec as { replicas?: number }).replicas).toBeUndefined();
    // The HPA controller scales to 3 (another manager's write).
    await s.client.replace({ ...dep, spec: { ...(dep.spec as object), replicas: 3 } });
    await simulateCluster(s.client, "shop");
    s.client.clearWrites();
    s.clock.advance(20_000);
    await s.rec.reconcile(key, s.ctx);
    expect(s.client.changedWrites().filter((w) => w.kind === "Deployment")).toEqual([]);
    const after = (await s.client.get("apps/v1", "Deployment", "ns", "shop")) as KubeObject;
    expect((after.spec as { replicas?: number }).replicas).toBe(3);
    // A plan upgrade rewrites the Deployment, still without replicas.
    const p = await getPlatform(s.client);
    await s.client.replace({ ...p, spec: { ...p.spec, plan: "Professional" } });
    const applied: KubeObject[] = [];
    const orig = s.client.apply.bind(s.client);
    s.client.apply = (async (o: KubeObject) => {
      applied.push(o);
      return orig(o);
    }) as typeof s.client.apply;
    await s.rec.reconcile(key, s.ctx);
    const depApply = applied.find((o) => o.kind === "Deployment");
    expect(depApply).toBeDefined();
    expect(Object.keys(depApply!.spec as object)).not.toContain("replicas");
    const up = await getPlatform(s.client);
    expect(up.status?.phase).toBe("Updating");
  });

  it("generates credentials once: stable across reconciles and a new operator process", async () => {
    const s = setup();
    await s.rec.reconcile(key, s.ctx);
    const first = await s.client.get("v1", "Secret", "ns", "shop-credentials");
    const calls = s.rnd.calls();
    await s.rec.reconcile(key, s.ctx);
    await s.make().reconcile(key, s.ctx); // "restarted" operator: fresh reconciler, same cluster
    expect(await s.client.get("v1", "Secret", "ns", "shop-credentials")).toEqual(first);
    expect(s.rnd.calls()).toBe(calls);
    expect(s.client.writes.filter((w) => w.kind === "Secret" && w.verb !== "create")).toEqual([]);
  });

  it("stop scales app and database to zero and removes the HPA; start brings them back", async () => {
    const s = setup();
    await settle(s);
    let p = await getPlatform(s.client);
    await s.client.replace({ ...p, spec: { ...p.spec, stopped: true } });
    await s.rec.reconcile(key, s.ctx);
    const dep = (await s.client.get("apps/v1", "Deployment", "ns", "shop")) as KubeObject;
    const sts = (await s.client.get("apps/v1", "StatefulSet", "ns", "shop-db")) as KubeObject;
    expect((dep.spec as { replicas?: number }).replicas).toBe(0);
    expect((sts.spec as { replicas?: number }).replicas).toBe(0);
    expect(await s.client.get("autoscaling/v2", "HorizontalPodAutoscaler", "ns", "shop")).toBeUndefined();
    expect(await s.client.get("policy/v1", "PodDisruptionBudget", "ns", "shop")).toBeUndefined();
    p = await getPlatform(s.client);
    expect(p.status?.phase).toBe("Stopped");
    expect(p.status?.activeScalingTriggers).toEqual([]);
    await s.client.replace({ ...p, spec: { ...p.spec, stopped: false } });
    await s.rec.reconcile(key, s.ctx);
    expect(await s.client.get("autoscaling/v2", "HorizontalPodAutoscaler", "ns", "shop")).toBeDefined();
    // The HPA cannot act on 0 replicas: the start sets the plan's minimum once.
    const dep2 = (await s.client.get("apps/v1", "Deployment", "ns", "shop")) as KubeObject;
    expect((dep2.spec as { replicas?: number }).replicas).toBe(1);
  });

  it("without cert-manager: TLSReady=False/WaitingForCertManager, step 5 skipped, still Running", async () => {
    const s = setup();
    await settle(s);
    const p = await getPlatform(s.client);
    expect(p.status?.phase).toBe("Running");
    expect(p.status?.steps?.[4]).toMatchObject({ name: "CertificatesGenerated", state: "Skipped" });
    expect(p.status?.conditions?.find((c) => c.type === "TLSReady")).toMatchObject({
      status: "False",
      reason: "WaitingForCertManager",
    });
    expect(await s.client.get("cert-manager.io/v1", "Certificate", "ns", "shop-tls")).toBeUndefined();
    expect(p.status?.urls?.platform).toBe("http://shop.example.test/");
  });

  it("keeps DatabaseConfigured pending while the health endpoint reports no database connection", async () => {
    const s = setup();
    s.health.state.ok = false;
    await settle(s);
    const p = await getPlatform(s.client);
    expect(p.status?.phase).toBe("Provisioning");
    expect(p.status?.steps?.[2]).toMatchObject({ name: "DatabaseConfigured", state: "InProgress" });
    expect(p.status?.steps?.[2]?.message).toContain("database");
  });

  it("reports that the StorageClass cannot expand the volume after an upgrade", async () => {
    const s = setup();
    await settle(s);
    const p = await getPlatform(s.client);
    await s.client.replace({ ...p, spec: { ...p.spec, plan: "Professional" } });
    await settle(s);
    const up = await getPlatform(s.client);
    expect(up.status?.conditions?.find((c) => c.type === "StorageSized")).toMatchObject({
      status: "False",
      reason: "ExpansionNotSupported",
    });
    expect(up.status?.phase).toBe("Running");
    expect(up.status?.lastRestartTime).toBeDefined();
  });

  it("refuses a child name taken by someone else with NameConflict", async () => {
    const s = setup();
    await s.client.create({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "shop", namespace: "ns" },
      spec: {},
    });
    await s.rec.reconcile(key, s.ctx);
    const p = await getPlatform(s.client);
    expect(p.status?.conditions?.find((c) => c.type === "Ready")?.reason).toBe("NameConflict");
    expect(s.events.withReason("NameConflict")).toHaveLength(1);
  });
});
