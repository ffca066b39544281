import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import type { ScalePlatformSpec } from "../../api/v1alpha1/scaleplatform.ts";
import type { KubeObject } from "../../runtime/types.ts";
import { desiredAppDeployment } from "./desired/app.ts";
import { platformInputs } from "./desired/common.ts";
import { configData } from "./desired/configmap.ts";
import { makePlatform, TEST_CONFIG } from "./testing.ts";

// The config contract between the operator and the commerce service (commerce/README.md): the
// environment the operator gives the app container, resolved the way the kubelet resolves it
// (ConfigMap, Secret keys, envFrom prefixes, $(VAR) references), is handed to the service's own
// parser — commerce/src/config.ts, run by Node in a child process inside the commerce package,
// so neither package imports the other. The service refuses unknown or invalid settings, so an
// accepted environment is one it starts with.

const commerceDir = fileURLToPath(new URL("../../../commerce/", import.meta.url));

/** Runs commerce's loadConfig on `env`; returns its JSON summary or the error message. */
function commerceParse(
  env: Record<string, string>,
): { ok: true; config: Summary } | { ok: false; error: string } {
  if (!existsSync(`${commerceDir}node_modules/zod`)) {
    throw new Error(
      "commerce's dependencies are not installed: npm ci --prefix commerce (make test-unit does it)",
    );
  }
  const script = `
    import { loadConfig } from "./src/config.ts";
    const env = JSON.parse(process.argv[1]);
    try {
      const c = loadConfig(env);
      console.log(JSON.stringify({ ok: true, config: {
        plan: c.PLATFORM_PLAN, instance: c.PLATFORM_INSTANCE, hosts: c.hosts, issuer: c.issuer,
        databaseUrl: c.databaseUrl, apiKey: c.API_KEY, admin: c.ADMIN_USERNAME,
        webhooks: (c.CONFIG_WEBHOOKS ?? []).map((w) => w.name),
        signingKeys: Object.fromEntries(c.webhookSigningKeys),
        payment: Object.fromEntries(c.paymentCredentials),
        smtpPassword: c.SMTP_PASSWORD, webhookCidrs: c.COMMERCE_WEBHOOK_ALLOWED_CIDRS,
        adminCidrs: c.COMMERCE_ADMIN_ALLOWED_CIDRS, currency: c.CONFIG_LOCALIZATION?.currency,
      } }));
    } catch (err) { console.log(JSON.stringify({ ok: false, error: err.message })); }`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script, JSON.stringify(env)], {
    cwd: commerceDir,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "" },
  });
  return JSON.parse(out);
}

interface Summary {
  plan: string;
  instance: string;
  hosts: Record<string, string>;
  issuer: string;
  databaseUrl: string;
  apiKey: string;
  admin: string;
  webhooks: string[];
  signingKeys: Record<string, string>;
  payment: Record<string, Record<string, string>>;
  smtpPassword?: string;
  webhookCidrs: string[];
  adminCidrs?: string[];
  currency?: string;
}

type EnvVar = {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
};
type EnvFrom = { prefix?: string; configMapRef?: { name: string }; secretRef?: { name: string } };

/**
 * The container's environment as the kubelet builds it: envFrom first, then env (which wins),
 * `$(VAR)` expanded from what is defined before it. Secret values are `<secret>/<key>`.
 */
function resolveEnv(
  dep: KubeObject,
  cm: Record<string, string>,
  secrets: Record<string, Record<string, string>>,
): Record<string, string> {
  const c = (dep.spec as { template: { spec: { containers: { env: EnvVar[]; envFrom: EnvFrom[] }[] } } })
    .template.spec.containers[0]!;
  const out: Record<string, string> = {};
  for (const f of c.envFrom) {
    const data = f.configMapRef ? cm : (secrets[f.secretRef?.name ?? ""] ?? {});
    for (const [k, v] of Object.entries(data)) out[`${f.prefix ?? ""}${k}`] = v;
  }
  for (const e of c.env) {
    const ref = e.valueFrom?.secretKeyRef;
    out[e.name] = ref
      ? `${ref.name}-${ref.key}-value-0123456789abcdef`
      : (e.value ?? "").replace(/\$\(([A-Z_0-9]+)\)/g, (m, v: string) => out[v] ?? m);
  }
  return out;
}

const fullSpec: Partial<ScalePlatformSpec> = {
  plan: "Professional",
  domains: { platform: "shop.example.test", api: "api.shop.example.test" },
  tls: { secretName: "shop-tls" },
  store: { name: "Shop", contactEmail: "owner@shop.example.test" } as ScalePlatformSpec["store"],
  localization: { currency: "EUR", timezone: "Europe/Berlin" } as ScalePlatformSpec["localization"],
  email: {
    smtp: {
      host: "smtp.example.test",
      port: 587,
      security: "StartTLS",
      username: "shop",
      passwordSecretRef: { name: "smtp", key: "password" },
    },
    fromAddress: "shop@example.test",
  },
  paymentGateways: [
    {
      name: "cards",
      type: "Card",
      provider: "stripe",
      mode: "Test",
      enabled: true,
      credentialsSecretRef: { name: "stripe" },
    },
  ],
  shippingMethods: [
    {
      name: "standard",
      carrier: "manual",
      zones: ["DE"],
      rate: { calculation: "Flat", amount: "4.90", currency: "EUR" },
      fulfillment: "Ship",
      enabled: true,
    },
  ],
  webhooks: [
    {
      name: "erp-sync",
      url: "https://erp.example.test/hooks",
      events: ["OrderCreated", "InventoryLow"],
      signingSecretRef: { name: "hooks", key: "erp" },
      enabled: true,
    },
  ],
  security: { adminAllowedCIDRs: ["203.0.113.0/24", "2001:db8::/32"] },
};

function envFor(spec: Partial<ScalePlatformSpec>, config = TEST_CONFIG) {
  const p = makePlatform("shop", spec);
  const inp = platformInputs(p, p.spec, config, { certManager: true, customMetrics: false });
  const cm = configData(inp);
  return resolveEnv(desiredAppDeployment(inp, cm), cm, {
    stripe: { secretKey: "sk_test_1", publishableKey: "pk_test_1", webhookSecret: "whsec_1" },
  });
}

describe("config contract with the commerce service (commerce/README.md)", () => {
  it("the service accepts the whole environment of a fully configured platform", () => {
    const env = envFor(fullSpec, { ...TEST_CONFIG, webhookAllowedCidrs: ["10.77.0.0/24"] });
    const r = commerceParse(env);
    if (!r.ok) throw new Error(r.error);
    expect(r.config).toMatchObject({
      plan: "Professional",
      instance: "shop",
      hosts: {
        platform: "shop.example.test",
        admin: "admin.shop.example.test",
        api: "api.shop.example.test",
      },
      issuer: "https://api.shop.example.test",
      apiKey: "shop-credentials-api-key-value-0123456789abcdef",
      webhooks: ["erp-sync"],
      signingKeys: { "erp-sync": "hooks-erp-value-0123456789abcdef" },
      payment: { cards: { secretKey: "sk_test_1", publishableKey: "pk_test_1", webhookSecret: "whsec_1" } },
      smtpPassword: "smtp-password-value-0123456789abcdef",
      webhookCidrs: ["10.77.0.0/24"],
      adminCidrs: ["203.0.113.0/24", "2001:db8::/32"],
      currency: "EUR",
    });
    // The database URL is put together by the kubelet from the generated Secret's keys.
    expect(r.config.databaseUrl).toBe(
      "postgres://shop-db-credentials-username-value-0123456789abcdef:shop-db-credentials-password-value-0123456789abcdef@shop-db.ns.svc:5432/shop-db-credentials-database-value-0123456789abcdef?sslmode=disable",
    );
  });

  it("a minimal platform's environment is accepted too (no optional groups, no allow-lists)", () => {
    const env = envFor({});
    expect(env).not.toHaveProperty("COMMERCE_ADMIN_ALLOWED_CIDRS");
    const r = commerceParse(env);
    if (!r.ok) throw new Error(r.error);
    expect(r.config).toMatchObject({ plan: "Standard", webhooks: [], webhookCidrs: [] });
    expect(r.config.adminCidrs ?? []).toEqual([]);
  });

  it("the sample platform of manifests/samples (what `make run` applies) starts", () => {
    const sample = parseYaml(
      readFileSync(new URL("../../../manifests/samples/scaleplatform.yaml", import.meta.url), "utf8"),
    ) as { spec: Partial<ScalePlatformSpec> };
    const r = commerceParse(envFor(sample.spec));
    if (!r.ok) throw new Error(r.error);
    expect(r.config.hosts.api).toBe("api.shop.example.test");
  });

  it("the contract can fail: a setting the service does not know is refused, by name", () => {
    const r = commerceParse({ ...envFor({}), COMMERCE_ADMIN_ALLOWED_CIDR: "10.0.0.0/8" });
    expect(r).toEqual({
      ok: false,
      error: expect.stringMatching(/COMMERCE_ADMIN_ALLOWED_CIDR: unknown setting/),
    });
  });
});
