import { describe, expect, it } from "vitest";
import type { ScalePlatform, ScalePlatformSpec } from "../../../api/v1alpha1/scaleplatform.ts";
import type { PlatformControllerConfig } from "../config.ts";
import { clusterObjects, makeCtx, makePlatform, TEST_CONFIG, testReconciler } from "../testing.ts";

const WITH_DEFAULT: PlatformControllerConfig = {
  ...TEST_CONFIG,
  defaultBackup: {
    s3: {
      ...TEST_CONFIG.defaultBackup.s3,
      endpoint: "s3.kube-system.svc:443",
      credentialsSecret: {
        ...TEST_CONFIG.defaultBackup.s3.credentialsSecret,
        namespace: "ops",
        name: "s3-keys",
      },
      caConfigMapName: "kube-root-ca.crt",
    },
  },
};

const KEYS = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "s3-keys", namespace: "ops" },
  data: { accessKeyId: "QUtJRA==", secretAccessKey: "U0VDUkVU" },
};

async function pass(config: PlatformControllerConfig, spec: Partial<ScalePlatformSpec> = {}, keys = true) {
  const env = makeCtx([makePlatform("shop", spec), ...clusterObjects(), ...(keys ? [KEYS] : [])]);
  const rec = testReconciler({ config });
  await rec.reconcile({ namespace: "ns", name: "shop" }, env.ctx);
  const p = (await env.client.get("cronscale.io/v1alpha1", "ScalePlatform", "ns", "shop")) as ScalePlatform;
  const healthy = p.status?.conditions?.find((c) => c.type === "BackupHealthy");
  return { ...env, p, healthy };
}

describe("backups on unless turned off", () => {
  it("a platform without spec.backup is backed up to the operator's default repository", async () => {
    const s = await pass(WITH_DEFAULT);
    const copy = await s.client.get("v1", "Secret", "ns", "shop-backup-s3");
    expect(copy?.data).toEqual(KEYS.data);
    expect(copy?.metadata.ownerReferences?.[0]?.uid).toBe("uid-shop");
    expect(await s.client.get("batch/v1", "CronJob", "ns", "shop-backup-full")).toBeDefined();
    expect(await s.client.get("batch/v1", "CronJob", "ns", "shop-backup-incr")).toBeDefined();
    expect(await s.client.get("v1", "Secret", "ns", "shop-backup-key")).toBeDefined();
    const sts = await s.client.get("apps/v1", "StatefulSet", "ns", "shop-db");
    const env = (
      sts?.spec as
        | { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } }
        | undefined
    )?.template.spec.containers[0]?.env;
    expect(env).toContainEqual({ name: "PGBACKREST_REPO1_PATH", value: "/cronscale/ns/shop" });
    expect(s.healthy?.reason).toBe("NoBackupYet");
    expect(s.p.status?.backup?.repository).toContain("s3://cronscale-backups/cronscale/ns/shop");
  });

  it("spec.disableBackups opts out: no backup children, BackupHealthy False/Disabled", async () => {
    const s = await pass(WITH_DEFAULT, { disableBackups: true });
    expect(await s.client.get("v1", "Secret", "ns", "shop-backup-s3")).toBeUndefined();
    expect(await s.client.get("batch/v1", "CronJob", "ns", "shop-backup-full")).toBeUndefined();
    expect(s.healthy).toMatchObject({ status: "False", reason: "Disabled" });
    expect(s.healthy?.message).toContain("spec.disableBackups");
    expect(s.p.status?.backup).toBeUndefined();
  });

  it("with no repository anywhere, BackupHealthy False/NotConfigured says how to configure one", async () => {
    const s = await pass(TEST_CONFIG);
    expect(s.healthy).toMatchObject({ status: "False", reason: "NotConfigured" });
    expect(s.healthy?.message).toContain("backup.defaultRepository");
    expect(s.healthy?.message).toContain("spec.backup");
  });

  it("a default repository whose key pair Secret is missing backs nothing up and names the Secret", async () => {
    const s = await pass(WITH_DEFAULT, {}, false);
    expect(await s.client.get("batch/v1", "CronJob", "ns", "shop-backup-full")).toBeUndefined();
    expect(s.healthy).toMatchObject({ status: "False", reason: "NotConfigured" });
    expect(s.healthy?.message).toContain("ops/s3-keys");
  });
});
