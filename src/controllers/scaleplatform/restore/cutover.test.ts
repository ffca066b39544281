import { describe, expect, it } from "vitest";
import type { ScalePlatformSpec } from "../../../api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformRestore } from "../../../api/v1alpha1/scaleplatformrestore.ts";
import type { KubeObject } from "../../../runtime/types.ts";
import { restoreHeld } from "../plan.ts";
import { makeCtx, makePlatform, TEST_BACKUP, TEST_CONFIG } from "../testing.ts";
import { RestoreReconciler } from "./reconciler.ts";

// The cutover against the fake client: app held at zero, old database stopped only once no app
// pod is left, database switched, app given back its replicas, downtime measured; past the bound,
// a rollback to the old volume that leaves the platform serving.

const ns = "ns";
const appLabels = { "cronscale.io/platform": "shop", "app.kubernetes.io/component": "app" };

function dbPod(claim: string, created: string, ready: boolean): KubeObject {
  const volumes = [{ name: "data", persistentVolumeClaim: { claimName: "data-shop-db-0" } }];
  if (claim !== "data-shop-db-0")
    volumes.push({ name: "restored-data", persistentVolumeClaim: { claimName: claim } });
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "shop-db-0", namespace: ns, creationTimestamp: created },
    spec: { volumes },
    status: { conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
  };
}

function appPod(i: number): KubeObject {
  return { apiVersion: "v1", kind: "Pod", metadata: { name: `shop-${i}`, namespace: ns, labels: appLabels } };
}

function world(cutoverTimeoutSeconds = 300) {
  const platform = makePlatform("shop", { backup: TEST_BACKUP } as unknown as Partial<ScalePlatformSpec>);
  const restore: ScalePlatformRestore = {
    apiVersion: "cronscale.io/v1alpha1",
    kind: "ScalePlatformRestore",
    metadata: { name: "pitr", namespace: ns, generation: 1, uid: "u-pitr" },
    spec: { platformName: "shop", releaseOldVolume: false, oldVolumeTTLHours: 72, cutoverTimeoutSeconds },
    status: {
      phase: "Restoring",
      target: "latest",
      jobName: "pitr-restore",
      volumeClaimName: "shop-db-pitr",
      oldVolumeClaimName: "data-shop-db-0",
    },
  };
  const objects: KubeObject[] = [
    platform,
    restore,
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "shop", namespace: ns },
      spec: { replicas: 2 },
      status: { readyReplicas: 2 },
    },
    appPod(0),
    appPod(1),
    { apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: "shop-db", namespace: ns }, spec: {} },
    dbPod("data-shop-db-0", "2026-01-01T00:00:00Z", true),
    { apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name: "shop-db-pitr", namespace: ns } },
    {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "pitr-restore", namespace: ns },
      status: { conditions: [{ type: "Complete", status: "True" }] },
    },
  ];
  const t = makeCtx(objects, "2026-01-01T01:00:00Z");
  const rec = new RestoreReconciler(TEST_CONFIG, new Set());
  const key = { namespace: ns, name: "pitr" };
  const pass = async () => {
    await rec.reconcile(key, t.ctx);
    return (
      await t.client.get<ScalePlatformRestore>("cronscale.io/v1alpha1", "ScalePlatformRestore", ns, "pitr")
    )?.status;
  };
  const get = (apiVersion: string, kind: string, name: string) => t.client.get(apiVersion, kind, ns, name);
  const setDb = async (pod: KubeObject) => {
    await t.client.delete("v1", "Pod", ns, "shop-db-0");
    await t.client.create(pod);
  };
  const setAppReady = async (n: number) => {
    const d = await get("apps/v1", "Deployment", "shop");
    if (d) await t.client.applyStatus({ ...d, status: { readyReplicas: n } });
  };
  return { ...t, pass, get, setDb, setAppReady };
}

const spec = (o: KubeObject | undefined) => o?.spec as { replicas?: number };
const claimOf = (o: KubeObject | undefined) => o?.metadata.annotations?.["cronscale.io/data-claim"];

describe("restore cutover", () => {
  it("app to zero first, database switched once no app pod is left, app back, downtime measured", async () => {
    const w = world();
    let s = await w.pass();
    expect(s?.phase).toBe("CuttingOver");
    expect(s?.appReplicas).toBe(2);
    const held = await w.get("apps/v1", "Deployment", "shop");
    expect(spec(held).replicas).toBe(0);
    expect(held?.metadata.annotations?.["cronscale.io/restore-hold"]).toBe("pitr@2026-01-01T01:15:00Z");
    expect(restoreHeld(held, new Date("2026-01-01T01:14:59Z"))).toBe(true);
    expect(restoreHeld(held, new Date("2026-01-01T01:15:00Z"))).toBe(false);

    // App pods still stopping: the old database is not touched.
    w.clock.advance(2000);
    s = await w.pass();
    expect(s?.message).toBe("cutting over: waiting for 2 app pod(s) to stop");
    expect(claimOf(await w.get("apps/v1", "StatefulSet", "shop-db"))).toBeUndefined();

    await w.client.delete("v1", "Pod", ns, "shop-0");
    await w.client.delete("v1", "Pod", ns, "shop-1");
    w.clock.advance(1000);
    s = await w.pass();
    expect(claimOf(await w.get("apps/v1", "StatefulSet", "shop-db"))).toBe("shop-db-pitr");
    expect(s?.message).toBe("cutting over: waiting for the database to restart on shop-db-pitr");
    expect(spec(await w.get("apps/v1", "Deployment", "shop")).replicas).toBe(0);

    // The database pod on the new claim, ready: the app gets its replicas back.
    await w.setAppReady(0);
    await w.setDb(dbPod("shop-db-pitr", "2026-01-01T01:00:04Z", true));
    w.clock.advance(3000);
    s = await w.pass();
    const released = await w.get("apps/v1", "Deployment", "shop");
    expect(spec(released).replicas).toBe(2);
    expect(released?.metadata.annotations?.["cronscale.io/restore-hold"]).toBeUndefined();
    expect(s?.phase).toBe("CuttingOver");

    await w.setAppReady(1);
    w.clock.advance(4000);
    s = await w.pass();
    expect(s?.phase).toBe("Succeeded");
    expect(s?.downtimeSeconds).toBe(10);
    expect(await w.get("cronscale.io/v1alpha1", "ScalePlatformBackup", "pitr-after")).toBeDefined();
    expect(w.events.events.map((e) => e.reason)).toEqual(["CutoverStarted", "RestoreSucceeded"]);
  });

  it("a cutover not ready within its bound is rolled back: old volume, app back, Failed/CutoverTimedOut", async () => {
    const w = world(60);
    await w.pass();
    await w.client.delete("v1", "Pod", ns, "shop-0");
    await w.client.delete("v1", "Pod", ns, "shop-1");
    await w.setAppReady(0);
    await w.pass();
    // The database never gets ready on the new volume.
    await w.setDb(dbPod("shop-db-pitr", "2026-01-01T01:00:02Z", false));
    w.clock.advance(59_000);
    let s = await w.pass();
    expect(s?.message).toBe("cutting over: waiting for the database ready on shop-db-pitr");
    expect(s?.rollbackStartTime).toBeUndefined();

    w.clock.advance(2000);
    s = await w.pass();
    expect(s?.rollbackStartTime).toBe("2026-01-01T01:01:01Z");
    expect(s?.conditions?.find((c) => c.type === "Complete")?.message).toBe(
      "cutover not ready within 60s (waiting for the database ready on shop-db-pitr): rolling back to data-shop-db-0",
    );

    // Back to the StatefulSet's own claim; the pod stuck on the new one is deleted.
    s = await w.pass();
    expect(claimOf(await w.get("apps/v1", "StatefulSet", "shop-db"))).toBeUndefined();
    expect(await w.get("v1", "Pod", "shop-db-0")).toBeUndefined();
    expect(s?.message).toBe(
      "cutover not ready within 60s; rolling back: waiting for the database pod on shop-db-pitr to go",
    );

    s = await w.pass();
    expect(spec(await w.get("apps/v1", "Deployment", "shop")).replicas).toBe(2);
    expect(s?.phase).toBe("CuttingOver");

    await w.setDb(dbPod("data-shop-db-0", "2026-01-01T01:01:05Z", true));
    await w.setAppReady(2);
    w.clock.advance(5000);
    s = await w.pass();
    expect(s?.phase).toBe("Failed");
    expect(s?.conditions?.find((c) => c.type === "Complete")).toMatchObject({
      status: "False",
      reason: "CutoverTimedOut",
    });
    expect(s?.message).toBe(
      "cutover not ready within 60s; rolled back: shop serves from data-shop-db-0 again, shop-db-pitr deleted",
    );
    expect(await w.get("v1", "PersistentVolumeClaim", "shop-db-pitr")).toBeUndefined();
    expect(w.events.events.map((e) => [e.reason, e.type])).toEqual([
      ["CutoverStarted", "Normal"],
      ["CutoverRollingBack", "Warning"],
      ["CutoverTimedOut", "Warning"],
    ]);
  });
});

describe("restore timeline", () => {
  const restore = (
    name: string,
    phase?: "Succeeded" | "Failed",
    timeline?: number,
  ): ScalePlatformRestore => ({
    apiVersion: "cronscale.io/v1alpha1",
    kind: "ScalePlatformRestore",
    metadata: { name, namespace: ns, generation: 1, uid: `u-${name}` },
    spec: {
      platformName: "shop",
      releaseOldVolume: false,
      oldVolumeTTLHours: 72,
      cutoverTimeoutSeconds: 300,
    },
    ...(phase ? { status: { phase, ...(timeline ? { timeline } : {}) } } : {}),
  });

  it("a restore follows the serving timeline: the backup runner's or a cut-over restore's, never an abandoned one", async () => {
    const platform = makePlatform("shop", { backup: TEST_BACKUP } as unknown as Partial<ScalePlatformSpec>);
    const ref = { label: "20260101-000000F", type: "full" as const, startTime: "a", stopTime: "b" };
    platform.status = {
      backup: {
        recoverableFrom: "2026-01-01T00:00:00Z",
        lastSuccessfulBackup: ref,
        recentBackups: [ref],
        timeline: 2,
      },
    };
    // "before" cut over to 4 after the last backup run; "abandoned" promoted 5 and rolled back.
    const t = makeCtx(
      [platform, restore("before", "Succeeded", 4), restore("abandoned", "Failed", 5), restore("now")],
      "2026-01-01T01:00:00Z",
    );
    const rec = new RestoreReconciler(TEST_CONFIG, new Set());
    await rec.reconcile({ namespace: ns, name: "now" }, t.ctx);
    const job = await t.client.get("batch/v1", "Job", ns, "now-restore");
    type JobSpec = { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
    const env = (job?.spec as JobSpec | undefined)?.template.spec.containers[0]?.env;
    expect(env?.find((e) => e.name === "RESTORE_ARGS")?.value).toBe("--target-timeline=4");
    const s = (
      await t.client.get<ScalePlatformRestore>("cronscale.io/v1alpha1", "ScalePlatformRestore", ns, "now")
    )?.status;
    expect(s?.message).toContain("restoring latest along timeline 4 into shop-db-now");

    // The Job's summary names the timeline it promoted on: recorded when the cutover starts.
    await t.client.applyStatus({
      ...job,
      status: { conditions: [{ type: "Complete", status: "True" }] },
    } as KubeObject);
    await t.client.create({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "now-restore-x", namespace: ns, labels: { "cronscale.io/restore": "now" } },
      status: {
        containerStatuses: [
          {
            state: {
              terminated: {
                message: '{"ok":true,"bytes":1,"restoreSeconds":1,"replaySeconds":1,"timeline":6}',
              },
            },
          },
        ],
      },
    });
    await rec.reconcile({ namespace: ns, name: "now" }, t.ctx);
    const after = await t.client.get<ScalePlatformRestore>(
      "cronscale.io/v1alpha1",
      "ScalePlatformRestore",
      ns,
      "now",
    );
    expect(after?.status).toMatchObject({ phase: "CuttingOver", timeline: 6 });
  });
});
