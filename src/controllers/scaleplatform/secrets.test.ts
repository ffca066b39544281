import { describe, expect, it } from "vitest";
import type { ScalePlatform, ScalePlatformSpec } from "../../api/v1alpha1/scaleplatform.ts";
import type { FakeKubeClient } from "../../runtime/fake-client.ts";
import type { KubeObject } from "../../runtime/types.ts";
import { desiredAppDeployment } from "./desired/app.ts";
import { platformInputs } from "./desired/common.ts";
import { configData } from "./desired/configmap.ts";
import { webhookSigningKeyEnv } from "./desired/secretrefs.ts";
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

// The user's Secrets referenced by the spec: passed to the app as secretKeyRef env vars, checked
// before the app's configuration is applied, reported when missing.

const key = { namespace: "ns", name: "shop" };

const email: ScalePlatformSpec["email"] = {
  smtp: {
    host: "smtp.b.test",
    port: 587,
    security: "StartTLS",
    username: "u",
    passwordSecretRef: { name: "smtp", key: "password" },
  },
  fromAddress: "a@b.test",
};
const hook = (name: string, secret: string, enabled = true) => ({
  name,
  url: `https://hooks.b.test/${name}`,
  events: ["OrderCreated" as const],
  signingSecretRef: { name: secret, key: "signing-key" },
  enabled,
});

const secret = (name: string, data: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace: "ns" },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
});

type Env = { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } };
const envOf = (dep: KubeObject | undefined): Env[] => {
  if (!dep) throw new Error("no Deployment");
  return (dep.spec as { template: { spec: { containers: { env: Env[] }[] } } }).template.spec.containers[0]!
    .env;
};

function setup(spec: Partial<ScalePlatformSpec>, objects: KubeObject[] = []) {
  const env = makeCtx([makePlatform("shop", spec), ...clusterObjects(), ...objects]);
  const health = fakeProbe(true);
  const rec = new ScalePlatformReconciler(TEST_CONFIG, {
    random: counterRandom().random,
    probe: health.probe,
    detector: new FeatureDetector(60_000),
    health: new HealthTracker(),
    jitter: () => 0.5, // no jitter: delays are exactly 2 s, 4 s, 8 s, ...
  });
  return { ...env, rec };
}

const getPlatform = async (c: FakeKubeClient) =>
  (await c.get("cronscale.io/v1alpha1", "ScalePlatform", "ns", "shop")) as ScalePlatform;
const cond = (p: ScalePlatform, type: string) => p.status?.conditions?.find((c) => c.type === type);
const step = (p: ScalePlatform, name: string) => p.status?.steps?.find((s) => s.name === name);

describe("referenced Secrets", () => {
  it("reach the app as secretKeyRef env vars: SMTP_PASSWORD and WEBHOOK_<NAME>_SIGNING_KEY", () => {
    const p = makePlatform("shop", {
      email,
      webhooks: [hook("order-events", "hooks"), hook("off", "gone", false), { ...hook("plain", "x") }],
    });
    const inp = platformInputs(p, p.spec, TEST_CONFIG, { certManager: false, customMetrics: false });
    const env = envOf(desiredAppDeployment(inp, configData(inp)));
    expect(env.filter((e) => e.name === "SMTP_PASSWORD" || e.name.startsWith("WEBHOOK_"))).toEqual([
      { name: "SMTP_PASSWORD", valueFrom: { secretKeyRef: { name: "smtp", key: "password" } } },
      {
        name: "WEBHOOK_ORDER_EVENTS_SIGNING_KEY",
        valueFrom: { secretKeyRef: { name: "hooks", key: "signing-key" } },
      },
      { name: "WEBHOOK_PLAIN_SIGNING_KEY", valueFrom: { secretKeyRef: { name: "x", key: "signing-key" } } },
    ]);
    expect(webhookSigningKeyEnv("a-b-9")).toBe("WEBHOOK_A_B_9_SIGNING_KEY");
    // No value ever lands in the ConfigMap: only the reference.
    expect(JSON.stringify(configData(inp))).not.toContain("SMTP_PASSWORD");
  });

  it("payment gateway credentials: the whole Secret through envFrom, prefixed PAYMENT_<NAME>_; a missing one holds the app", async () => {
    const gateway = (name: string, secretName: string, enabled = true) => ({
      name,
      type: "Card" as const,
      provider: "stripe" as const,
      mode: "Test" as const,
      enabled,
      credentialsSecretRef: { name: secretName },
    });
    const spec = { paymentGateways: [gateway("cards", "stripe-keys"), gateway("old", "gone", false)] };
    const p = makePlatform("shop", spec);
    const inp = platformInputs(p, p.spec, TEST_CONFIG, { certManager: false, customMetrics: false });
    const dep = desiredAppDeployment(inp, configData(inp));
    const envFrom = (dep.spec as { template: { spec: { containers: { envFrom: unknown[] }[] } } }).template
      .spec.containers[0]!.envFrom;
    expect(envFrom.slice(1)).toEqual([{ prefix: "PAYMENT_CARDS_", secretRef: { name: "stripe-keys" } }]);

    const s = setup(spec);
    await s.rec.reconcile(key, s.ctx);
    const held = await getPlatform(s.client);
    expect(cond(held, "ConfigurationReady")).toMatchObject({ status: "False", reason: "SecretNotFound" });
    expect(cond(held, "ConfigurationReady")?.message).toBe(
      'spec.paymentGateways[0].credentialsSecretRef: Secret "stripe-keys" not found in namespace ns',
    );
    expect(await s.client.get("apps/v1", "Deployment", "ns", "shop")).toBeUndefined();
    await s.client.create(secret("stripe-keys", { secretKey: "sk_test" }));
    await settle(s);
    const ok = await getPlatform(s.client);
    expect(cond(ok, "ConfigurationReady")).toMatchObject({ status: "True", reason: "SecretsResolved" });
    expect(await s.client.get("apps/v1", "Deployment", "ns", "shop")).toBeDefined();
  });

  it("a new platform with a missing Secret: app held back, the rest created, condition + Warning + backoff; the Secret appearing lets it proceed", async () => {
    const s = setup({ email });
    const r1 = await s.rec.reconcile(key, s.ctx);
    const created = s.client
      .changedWrites()
      .filter((w) => w.verb !== "applyStatus")
      .map((w) => `${w.kind}/${w.name}`);
    expect(created).toContain("StatefulSet/shop-db");
    expect(created).toContain("Service/shop");
    expect(created).toContain("Ingress/shop");
    expect(created).not.toContain("Deployment/shop");
    expect(created).not.toContain("ConfigMap/shop-config");
    let p = await getPlatform(s.client);
    expect(cond(p, "ConfigurationReady")).toMatchObject({
      status: "False",
      reason: "SecretNotFound",
      message: 'spec.email.smtp.passwordSecretRef: Secret "smtp" not found in namespace ns',
    });
    expect(step(p, "InitialConfigurationApplied")).toMatchObject({ state: "Failed" });
    expect(step(p, "InitialConfigurationApplied")?.message).toContain("spec.email.smtp.passwordSecretRef");
    expect(cond(p, "Ready")?.message).toContain("InitialConfigurationApplied");
    expect(s.events.withReason("SecretNotFound")).toHaveLength(1);
    expect(s.events.withReason("SecretNotFound")[0]?.type).toBe("Warning");
    expect(r1.requeueAfter).toBe(2000);

    // The database and Ingress progress meanwhile; nothing is rewritten while the Secret stays missing.
    await simulateCluster(s.client, "shop");
    await s.rec.reconcile(key, s.ctx);
    s.client.clearWrites();
    const r2 = await s.rec.reconcile(key, s.ctx);
    expect(r2.requeueAfter).toBeGreaterThan(2000);
    expect(s.client.writes).toEqual([]);
    expect(s.events.withReason("SecretNotFound")).toHaveLength(1);
    p = await getPlatform(s.client);
    expect(step(p, "InfrastructureProvisioned")?.state).toBe("Done");
    expect(step(p, "SoftwareInstalled")?.message).toContain("app Deployment not created yet");

    // The Secret exists but lacks the key.
    await s.client.create(secret("smtp", { pw: "x" }));
    await s.rec.reconcile(key, s.ctx);
    p = await getPlatform(s.client);
    expect(cond(p, "ConfigurationReady")).toMatchObject({
      status: "False",
      reason: "SecretKeyNotFound",
      message: 'spec.email.smtp.passwordSecretRef: Secret "smtp" has no key "password"',
    });
    expect(s.events.withReason("SecretKeyNotFound")).toHaveLength(1);
    expect(await s.client.get("apps/v1", "Deployment", "ns", "shop")).toBeUndefined();

    // The key appears: the next reconcile (the requeue) creates the app, and it deploys.
    const sec = (await s.client.get("v1", "Secret", "ns", "smtp")) as KubeObject & {
      data: Record<string, string>;
    };
    await s.client.replace({ ...sec, data: { ...sec.data, password: "cHc=" } });
    const r3 = await s.rec.reconcile(key, s.ctx);
    expect(r3.requeueAfter).toBe(2000);
    const dep = await s.client.get("apps/v1", "Deployment", "ns", "shop");
    expect(envOf(dep).find((e) => e.name === "SMTP_PASSWORD")?.valueFrom?.secretKeyRef).toEqual({
      name: "smtp",
      key: "password",
    });
    expect(await s.client.get("v1", "ConfigMap", "ns", "shop-config")).toBeDefined();
    p = await getPlatform(s.client);
    expect(cond(p, "ConfigurationReady")).toMatchObject({ status: "True", reason: "SecretsResolved" });
    expect(s.events.withReason("SecretsResolved")).toHaveLength(1);
    await settle(s);
    p = await getPlatform(s.client);
    expect(p.status?.phase).toBe("Running");
  });

  it("a rotated Secret rolls the app (new secrets-revision on the pod template); unchanged Secrets write nothing", async () => {
    const s = setup({ email }, [secret("smtp", { password: "one" })]);
    await settle(s);
    const revision = async () => {
      const dep = (await s.client.get("apps/v1", "Deployment", "ns", "shop")) as KubeObject;
      const t = dep.spec as { template: { metadata: { annotations: Record<string, string> } } };
      return t.template.metadata.annotations["cronscale.io/secrets-revision"];
    };
    const first = await revision();
    expect(first).toMatch(/^smtp@\S+$/);
    s.client.clearWrites();
    await s.rec.reconcile(key, s.ctx);
    expect(s.client.writes).toEqual([]);
    const live = (await s.client.get("v1", "Secret", "ns", "smtp")) as KubeObject;
    await s.client.replace({ ...secret("smtp", { password: "two" }), metadata: live.metadata });
    await s.rec.reconcile(key, s.ctx);
    const second = await revision();
    expect(second).toMatch(/^smtp@\S+$/);
    expect(second).not.toBe(first);
    // Nothing of the value is in the Deployment.
    const dep = await s.client.get("apps/v1", "Deployment", "ns", "shop");
    expect(JSON.stringify(dep)).not.toContain(Buffer.from("two").toString("base64"));
  });

  it("a running platform: a new webhook whose Secret is missing leaves ConfigMap and Deployment as they are", async () => {
    const s = setup({}, []);
    await settle(s);
    const before = {
      dep: await s.client.get("apps/v1", "Deployment", "ns", "shop"),
      cm: await s.client.get("v1", "ConfigMap", "ns", "shop-config"),
    };
    let p = await getPlatform(s.client);
    await s.client.replace({ ...p, spec: { ...p.spec, webhooks: [hook("orders", "hooks")] } });
    s.client.clearWrites();
    await s.rec.reconcile(key, s.ctx);
    expect(s.client.changedWrites().map((w) => `${w.verb} ${w.kind}`)).toEqual(["applyStatus ScalePlatform"]);
    expect(await s.client.get("apps/v1", "Deployment", "ns", "shop")).toEqual(before.dep);
    expect(await s.client.get("v1", "ConfigMap", "ns", "shop-config")).toEqual(before.cm);
    p = await getPlatform(s.client);
    expect(cond(p, "ConfigurationReady")).toMatchObject({ reason: "SecretNotFound" });
    expect(cond(p, "ConfigurationReady")?.message).toContain("spec.webhooks[0].signingSecretRef");
    // The running pods are of the configuration in place: steps before it stay done.
    expect(p.status?.steps?.slice(0, 5).map((x) => x.state)).toEqual([
      "Done",
      "Done",
      "Done",
      "Done",
      "Skipped",
    ]);
    expect(step(p, "InitialConfigurationApplied")?.state).toBe("Failed");
    expect(p.status?.phase).toBe("Failed");

    await s.client.create(secret("hooks", { "signing-key": "k" }));
    await settle(s);
    const env = envOf(await s.client.get("apps/v1", "Deployment", "ns", "shop"));
    expect(env.map((e) => e.name)).toContain("WEBHOOK_ORDERS_SIGNING_KEY");
    p = await getPlatform(s.client);
    expect(p.status?.phase).toBe("Running");
    expect(cond(p, "ConfigurationReady")?.message).toBe("all 1 Secret references resolve");
  });

  it("while held, requeues back off from 2 s to the health check interval", async () => {
    const s = setup({ email });
    const delays: (number | undefined)[] = [];
    for (let i = 0; i < 5; i++) delays.push((await s.rec.reconcile(key, s.ctx)).requeueAfter);
    expect(delays).toEqual([2000, 4000, 8000, 15_000, 15_000]);
  });

  it("stopping is not held back by a missing Secret (no pod starts)", async () => {
    const s = setup({ email, stopped: true });
    // Nothing is held, so no Secret backoff: the usual settled requeue.
    expect((await s.rec.reconcile(key, s.ctx)).requeueAfter).toBe(15_000);
    const dep = await s.client.get("apps/v1", "Deployment", "ns", "shop");
    expect((dep?.spec as { replicas?: number } | undefined)?.replicas).toBe(0);
    const p = await getPlatform(s.client);
    expect(p.status?.phase).toBe("Stopped");
    expect(cond(p, "ConfigurationReady")?.reason).toBe("SecretNotFound");
  });
});
