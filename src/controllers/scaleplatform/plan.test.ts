import { describe, expect, it } from "vitest";
import type { ScalePlatform, ScalePlatformSpec } from "../../api/v1alpha1/scaleplatform.ts";
import { refOf } from "../../runtime/children.ts";
import { platformInputs } from "./desired/common.ts";
import { childRefs, type PlatformWorld, planChildren } from "./plan.ts";
import {
  clusterObjects,
  makeCtx,
  makePlatform,
  settle,
  TEST_BACKUP,
  TEST_CONFIG,
  testReconciler,
} from "./testing.ts";

function inputs(spec: Record<string, unknown> = {}) {
  const p = makePlatform("shop", spec as Partial<ScalePlatformSpec>);
  return platformInputs(p, p.spec, TEST_CONFIG, { certManager: true, customMetrics: false });
}

/** A world in which none of the platform's children exists yet. */
function emptyWorld(inp: ReturnType<typeof inputs>, held?: string): PlatformWorld {
  return {
    now: new Date("2026-01-01T00:00:00Z"),
    live: new Map(childRefs(inp).map((r) => [`${r.kind}/${r.name}`, undefined])),
    labelled: [],
    secrets: { problems: [], refCount: 0, held },
    pods: [],
    ingressClassExists: true,
  };
}

const noRandom = () => {
  throw new Error("randomness drawn while planning");
};

describe("planChildren", () => {
  it("plans every child in write order without drawing randomness (createOnce builds lazily)", () => {
    const inp = inputs();
    const plan = planChildren(inp, emptyWorld(inp), noRandom);
    expect(plan.children.map((c) => `${c.policy} ${refOf(c).kind}/${refOf(c).name}`)).toEqual([
      "createOnce Secret/shop-db-credentials",
      "createOnce Secret/shop-credentials",
      "apply ConfigMap/shop-config",
      "apply Service/shop-db",
      "apply StatefulSet/shop-db",
      "apply Service/shop",
      "apply Deployment/shop",
      "apply Ingress/shop",
      "apply Certificate/shop-tls",
      "apply HorizontalPodAutoscaler/shop",
      "apply PodDisruptionBudget/shop",
    ]);
  });

  it("keeps the app's ConfigMap and Deployment as they are while a referenced Secret is missing", () => {
    const inp = inputs();
    const plan = planChildren(inp, emptyWorld(inp, "Secret smtp not found"), noRandom);
    const kept = plan.children.filter((c) => c.policy === "keep").map((c) => refOf(c).kind);
    expect(kept).toEqual(["ConfigMap", "Deployment"]);
  });

  it("leaves the HPA and the PodDisruptionBudget out while stopped; both are pruned kinds", () => {
    const inp = inputs({ stopped: true });
    const plan = planChildren(inp, emptyWorld(inp), noRandom);
    const kinds = plan.children.map((c) => refOf(c).kind);
    expect(kinds).not.toContain("HorizontalPodAutoscaler");
    expect(kinds).not.toContain("PodDisruptionBudget");
    expect(plan.prune).toContainEqual({ apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler" });
    expect(plan.prune).toContainEqual({ apiVersion: "policy/v1", kind: "PodDisruptionBudget" });
  });

  it("the app's disruption budget keeps one pod up where the plan runs two, and lets a single pod move", () => {
    const pdbOf = (plan: "Standard" | "Enterprise") => {
      const inp = inputs({ plan });
      const c = planChildren(inp, emptyWorld(inp), noRandom).children.find(
        (x) => refOf(x).kind === "PodDisruptionBudget",
      );
      return c && c.policy !== "createOnce" ? (c.object.spec as Record<string, unknown>) : undefined;
    };
    expect(pdbOf("Enterprise")).toMatchObject({
      minAvailable: 1,
      selector: { matchLabels: { "cronscale.io/platform": "shop", "app.kubernetes.io/component": "app" } },
      unhealthyPodEvictionPolicy: "AlwaysAllow",
    });
    expect(pdbOf("Standard")).toMatchObject({ maxUnavailable: 1 });
    expect(pdbOf("Standard")).not.toHaveProperty("minAvailable");
  });

  it("with spec.backup generates the key once (not owned), applies RBAC and CronJobs", () => {
    const inp = inputs({ backup: TEST_BACKUP });
    const plan = planChildren(inp, emptyWorld(inp), noRandom);
    const backup = plan.children.filter((c) => c.part === "backup");
    expect(backup.map((c) => `${c.policy} ${refOf(c).kind}/${refOf(c).name}`)).toEqual([
      "createOnce Secret/shop-backup-key",
      "apply ConfigMap/shop-backup",
      "apply ServiceAccount/shop-backup",
      "apply Role/shop-backup",
      "apply RoleBinding/shop-backup",
      "apply CronJob/shop-backup-full",
      "apply CronJob/shop-backup-incr",
    ]);
    expect(backup[0]?.unowned).toBe(true);
  });
});

describe("the platform's plan carried out", () => {
  function setup(platform: ScalePlatform) {
    const env = makeCtx([platform, ...clusterObjects()]);
    return { ...env, rec: testReconciler() };
  }
  const key = { namespace: "ns", name: "shop" };

  it("creates the backup children once, then prunes them when spec.backup goes; the key stays", async () => {
    const s = setup(makePlatform("shop", { backup: TEST_BACKUP } as Partial<ScalePlatformSpec>));
    await settle(s);
    expect(s.events.withReason("BackupKeyGenerated")).toHaveLength(1);
    expect(await s.client.get("batch/v1", "CronJob", "ns", "shop-backup-full")).toBeDefined();
    s.client.clearWrites();
    s.clock.advance(20_000);
    await s.rec.reconcile(key, s.ctx);
    expect(s.client.changedWrites().filter((w) => w.verb !== "applyStatus")).toEqual([]);

    const p = (await s.client.get("cronscale.io/v1alpha1", "ScalePlatform", "ns", "shop")) as ScalePlatform;
    const { backup: _b, ...spec } = p.spec;
    await s.client.replace({ ...p, spec });
    s.client.clearWrites();
    await s.rec.reconcile(key, s.ctx);
    const deleted = s.client
      .changedWrites()
      .filter((w) => w.verb === "delete")
      .map((w) => `${w.kind}/${w.name}`)
      .sort();
    expect(deleted).toEqual([
      "ConfigMap/shop-backup",
      "CronJob/shop-backup-full",
      "CronJob/shop-backup-incr",
      "Role/shop-backup",
      "RoleBinding/shop-backup",
      "ServiceAccount/shop-backup",
    ]);
    expect(await s.client.get("v1", "Secret", "ns", "shop-backup-key")).toBeDefined();
    expect(await s.client.get("v1", "ConfigMap", "ns", "shop-config")).toBeDefined();
  });

  it("refuses before any write when a generated Secret's name is taken", async () => {
    const s = setup(makePlatform("shop"));
    await s.client.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "shop-credentials", namespace: "ns" },
    });
    s.client.clearWrites();
    await s.rec.reconcile(key, s.ctx);
    expect(s.client.changedWrites().filter((w) => w.verb !== "applyStatus")).toEqual([]);
    const p = (await s.client.get("cronscale.io/v1alpha1", "ScalePlatform", "ns", "shop")) as ScalePlatform;
    expect(p.status?.conditions?.find((c) => c.type === "Ready")?.message).toBe(
      "Secret shop-credentials already exists and does not belong to this platform",
    );
  });
});
