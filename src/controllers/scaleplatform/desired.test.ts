import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../runtime/types.ts";
import { desiredAppDeployment, desiredAppService } from "./desired/app.ts";
import { platformInputs } from "./desired/common.ts";
import { configData, desiredConfigMap, platformUrls } from "./desired/configmap.ts";
import { newCredentialsSecret } from "./desired/credentials.ts";
import { desiredDatabaseService, desiredDatabaseStatefulSet } from "./desired/database.ts";
import { desiredHpa } from "./desired/hpa.ts";
import { desiredCertificate, desiredIngress } from "./desired/ingress.ts";
import { costEstimate } from "./status.ts";
import { makePlatform, TEST_CONFIG } from "./testing.ts";

const noFeatures = { certManager: false, customMetrics: false };
const served = { http_request_queue_length: true, http_response_time_ms: true };
const all = { certManager: true, customMetrics: true, customMetricValues: served };

type Container = {
  resources: { limits: Record<string, string>; requests: Record<string, string> };
  env: { name: string; value?: string }[];
};
const container = (o: KubeObject): Container =>
  (o.spec as { template: { spec: { containers: Container[] } } }).template.spec.containers[0]!;

describe("ScalePlatform builders", () => {
  const standard = platformInputs(makePlatform("shop"), makePlatform("shop").spec, TEST_CONFIG, all);

  it("sizes the app pod from the plan: 3/4 of Standard over 3 replicas, requests at 10 %", () => {
    const c = container(desiredAppDeployment(standard, configData(standard)));
    expect(c.resources).toEqual({
      limits: { cpu: "1", memory: "2Gi" },
      requests: { cpu: "100m", memory: "204Mi" },
    });
  });

  it("probes the commerce service (/readyz, /healthz), announces /metrics, keeps its refusal message", () => {
    const dep = desiredAppDeployment(standard, configData(standard));
    const tpl = (
      dep.spec as {
        template: {
          metadata: { annotations: Record<string, string> };
          spec: { containers: Record<string, unknown>[] };
        };
      }
    ).template;
    const c = tpl.spec.containers[0]!;
    expect(c.readinessProbe).toMatchObject({ httpGet: { path: "/readyz", port: "http" } });
    expect(c.livenessProbe).toMatchObject({ httpGet: { path: "/healthz", port: "http" } });
    // Ten minutes to start (database first start, migrations) before liveness counts.
    expect(c.startupProbe).toMatchObject({
      httpGet: { path: "/healthz" },
      periodSeconds: 5,
      failureThreshold: 120,
    });
    expect(c.terminationMessagePolicy).toBe("FallbackToLogsOnError");
    expect(c.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    });
    expect(tpl.metadata.annotations).toMatchObject({
      "prometheus.io/scrape": "true",
      "prometheus.io/port": "8080",
      "prometheus.io/path": "/metrics",
    });
  });

  it("passes the allow-lists: webhook CIDRs from the operator, admin CIDRs from spec.security", () => {
    const p = makePlatform("shop", { security: { adminAllowedCIDRs: ["203.0.113.0/24", "10.1.0.0/16"] } });
    const inp = platformInputs(p, p.spec, { ...TEST_CONFIG, webhookAllowedCidrs: ["10.77.0.0/24"] }, all);
    expect(configData(inp)).toMatchObject({
      COMMERCE_WEBHOOK_ALLOWED_CIDRS: "10.77.0.0/24",
      COMMERCE_ADMIN_ALLOWED_CIDRS: "203.0.113.0/24,10.1.0.0/16",
    });
    expect(configData(standard)).not.toHaveProperty("COMMERCE_ADMIN_ALLOWED_CIDRS");
    expect(configData(standard).COMMERCE_WEBHOOK_ALLOWED_CIDRS).toBe("");
  });

  it("leaves replicas out of the running Deployment and sets 0 when stopped", () => {
    const running = desiredAppDeployment(standard, configData(standard));
    expect(Object.keys(running.spec as object)).not.toContain("replicas");
    const p = makePlatform("shop", { stopped: true });
    const stopped = platformInputs(p, p.spec, TEST_CONFIG, all);
    expect((desiredAppDeployment(stopped, configData(stopped)).spec as { replicas: number }).replicas).toBe(
      0,
    );
    expect(desiredHpa(stopped)).toBeUndefined();
  });

  it("builds DATABASE_URL from the generated Secret without the password in the spec", () => {
    const env = container(desiredAppDeployment(standard, configData(standard))).env;
    const url = env.find((e) => e.name === "DATABASE_URL")?.value;
    expect(url).toBe("postgres://$(DB_USER):$(DB_PASSWORD)@shop-db.ns.svc:5432/$(DB_NAME)?sslmode=disable");
    expect(env.findIndex((e) => e.name === "DB_PASSWORD")).toBeLessThan(
      env.findIndex((e) => e.name === "DATABASE_URL"),
    );
  });

  it("gives the database the rest of the plan and a 100Gi volume with the retention policy", () => {
    const sts = desiredDatabaseStatefulSet(standard);
    const spec = sts.spec as {
      replicas: number;
      persistentVolumeClaimRetentionPolicy: unknown;
      volumeClaimTemplates: { spec: { resources: { requests: { storage: string } } } }[];
    };
    expect(spec.replicas).toBe(1);
    expect(spec.persistentVolumeClaimRetentionPolicy).toEqual({
      whenDeleted: "Retain",
      whenScaled: "Retain",
    });
    expect(spec.volumeClaimTemplates[0]!.spec.resources.requests.storage).toBe("100Gi");
    expect(container(sts).resources.limits).toEqual({ cpu: "1", memory: "2Gi" });
    // The live template's size wins: volumeClaimTemplates are immutable.
    const kept = desiredDatabaseStatefulSet(standard, "100Gi").spec as typeof spec;
    expect(kept.volumeClaimTemplates[0]!.spec.resources.requests.storage).toBe("100Gi");
    const p = makePlatform("shop", { database: { pvcRetention: "Delete" } });
    const del = desiredDatabaseStatefulSet(platformInputs(p, p.spec, TEST_CONFIG, all)).spec as typeof spec;
    expect(del.persistentVolumeClaimRetentionPolicy).toEqual({ whenDeleted: "Delete", whenScaled: "Retain" });
    expect((desiredDatabaseService(standard).spec as { clusterIP: string }).clusterIP).toBe("None");
  });

  it("routes the three hosts through the Ingress with TLS from the Certificate", () => {
    const ing = desiredIngress(standard).spec as {
      tls: { hosts: string[]; secretName: string }[];
      rules: { host: string }[];
    };
    expect(ing.rules.map((r) => r.host)).toEqual([
      "shop.example.test",
      "admin.shop.example.test",
      "api.shop.example.test",
    ]);
    expect(ing.tls).toEqual([{ hosts: ing.rules.map((r) => r.host), secretName: "shop-tls" }]);
    const cert = desiredCertificate(standard)?.spec as { issuerRef: unknown; dnsNames: string[] };
    expect(cert.issuerRef).toEqual({ name: "test-ca", kind: "ClusterIssuer", group: "cert-manager.io" });
    expect(cert.dnsNames).toHaveLength(3);
    expect((desiredAppService(standard).spec as { ports: { port: number }[] }).ports[0]!.port).toBe(80);
  });

  it("without cert-manager: no Certificate and no TLS section (served over HTTP meanwhile)", () => {
    const inp = platformInputs(makePlatform("shop"), makePlatform("shop").spec, TEST_CONFIG, noFeatures);
    expect(desiredCertificate(inp)).toBeUndefined();
    expect((desiredIngress(inp).spec as { tls?: unknown }).tls).toBeUndefined();
    expect(configData(inp).PLATFORM_URL).toBe("http://shop.example.test/");
  });

  it("cert-manager without any issuer: no Certificate, no TLS section and http URLs", () => {
    const p = makePlatform("shop");
    const noIssuer = { ...TEST_CONFIG, defaultIssuer: { name: "", kind: "ClusterIssuer" as const } };
    const inp = platformInputs(p, p.spec, noIssuer, all);
    expect(inp.features.certManager).toBe(true);
    expect(desiredCertificate(inp)).toBeUndefined();
    expect((desiredIngress(inp).spec as { tls?: unknown }).tls).toBeUndefined();
    const data = configData(inp);
    expect([data.PLATFORM_URL, data.ADMIN_URL, data.API_URL]).toEqual([
      "http://shop.example.test/",
      "http://admin.shop.example.test/",
      "http://api.shop.example.test/api/v1/",
    ]);
    expect(platformUrls(inp).platform).toBe("http://shop.example.test/");
  });

  it("a given TLS Secret is served without a Certificate", () => {
    const p = makePlatform("shop", { tls: { secretName: "mine" } });
    const inp = platformInputs(p, p.spec, TEST_CONFIG, all);
    expect(desiredCertificate(inp)).toBeUndefined();
    expect((desiredIngress(inp).spec as { tls: { secretName: string }[] }).tls[0]!.secretName).toBe("mine");
  });

  it("HPA: CPU at 80 % and memory at 85 % of the pod's limit; custom metrics only when served", () => {
    const hpa = desiredHpa(standard)?.spec as {
      minReplicas: number;
      maxReplicas: number;
      metrics: unknown[];
    };
    expect([hpa.minReplicas, hpa.maxReplicas]).toEqual([1, 3]);
    expect(hpa.metrics.slice(0, 2)).toEqual([
      { type: "Resource", resource: { name: "cpu", target: { type: "AverageValue", averageValue: "800m" } } },
      {
        type: "Resource",
        resource: { name: "memory", target: { type: "AverageValue", averageValue: "1740Mi" } },
      },
    ]);
    expect(hpa.metrics).toHaveLength(4);
    const inp = platformInputs(makePlatform("shop"), makePlatform("shop").spec, TEST_CONFIG, noFeatures);
    const cpuMemOnly = desiredHpa(inp);
    expect(cpuMemOnly).toBeDefined();
    expect((cpuMemOnly!.spec as { metrics: unknown[] }).metrics).toHaveLength(2);
    // The API is served but has values for one metric only: the other is left out.
    const p = makePlatform("shop");
    const one = desiredHpa(
      platformInputs(p, p.spec, TEST_CONFIG, {
        ...all,
        customMetricValues: { http_request_queue_length: false, http_response_time_ms: true },
      }),
    );
    expect((one!.spec as { metrics: { pods?: { metric: { name: string } } }[] }).metrics).toHaveLength(3);
    expect(
      (one!.spec as { metrics: { pods?: { metric: { name: string } } }[] }).metrics[2]?.pods?.metric,
    ).toEqual({
      name: "http_response_time_ms",
    });
  });

  it("Custom plans take spec.resources; the cost comes from the price table", () => {
    const p = makePlatform("big", {
      plan: "Custom",
      resources: { cpu: "24", memory: "48Gi", storage: "1Ti", maxReplicas: 6 },
    });
    const inp = platformInputs(p, p.spec, TEST_CONFIG, all);
    expect(inp.budget.app).toEqual({ cpuMillis: 3000, memoryMiB: 6144, minReplicas: 1, maxReplicas: 6 });
    expect(inp.budget.database.storageGiB).toBe(1024);
    expect(costEstimate(inp, TEST_CONFIG.prices)).toEqual({ amount: "1404.80", currency: "USD" });
    expect(costEstimate(standard, TEST_CONFIG.prices)).toEqual({ amount: "199.00", currency: "USD" });
  });

  it("puts the config groups in the ConfigMap, Secrets only by reference", () => {
    const p = makePlatform("shop", {
      store: { name: "Shop", contactEmail: "a@b.test" },
      email: {
        smtp: {
          host: "smtp.b.test",
          port: 587,
          security: "StartTLS",
          username: "u",
          passwordSecretRef: { name: "smtp", key: "pw" },
        },
        fromAddress: "a@b.test",
      },
    });
    const inp = platformInputs(p, p.spec, TEST_CONFIG, all);
    const data = desiredConfigMap(inp, configData(inp)).data as Record<string, string>;
    expect(JSON.parse(data.CONFIG_STORE!)).toMatchObject({ name: "Shop" });
    expect(JSON.parse(data.CONFIG_EMAIL!).smtp.passwordSecretRef).toEqual({ name: "smtp", key: "pw" });
    expect(data.PLAN_MAX_PRODUCTS).toBe("10000");
  });

  it("generates credentials only from the injected randomness", () => {
    const s = newCredentialsSecret(standard, (n) => "r".repeat(n));
    expect(s.stringData).toEqual({
      "admin-username": "admin",
      "admin-password": "r".repeat(24),
      "api-key": `csk_${"r".repeat(40)}`,
    });
  });
});
