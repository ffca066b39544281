import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  launchChromium,
  newContext,
  screenshots,
  seriousA11yViolations,
  type TestBrowser,
} from "../../support/browser.ts";
import { kubectl, useNamespace } from "../../support/cluster.ts";
import { installCrds } from "../scheduledtask/operator.ts";
import { phoneOverflow, startDashboard, waitForRbac } from "./helpers.ts";

// The platform pages in Chromium against the API server, as a viewer allowed only platforms in
// one namespace: deploy from the plan table, then the seven steps follow the platform's status
// live (Server-Sent Events from the dashboard's shared platform list, shown while an access review
// says the viewer may watch there). The status is written here with kubectl, step by step, so the
// page is tested without the platform add-ons. The platforms list follows kubectl's changes live
// too, and shows nothing of a namespace the viewer may not list platforms in.

const ns = useNamespace("dash-plat");
const elsewhere = useNamespace("dash-plat-x");
const PLATFORMS = "/dashboard/compute/platforms/scale";
let app: FastifyInstance;
let base = "";
let chromium: TestBrowser;
let token = "";

beforeAll(async () => {
  await installCrds();
  await kubectl(["wait", "--for=condition=Established", "--timeout=60s", "crd/scaleplatforms.cronscale.io"]);
  await kubectl(["apply", "-f", "-"], {
    input: `
apiVersion: v1
kind: ServiceAccount
metadata: {name: deployer, namespace: ${ns.name}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: deployer, namespace: ${ns.name}}
rules:
  - {apiGroups: [cronscale.io], resources: [scaleplatforms], verbs: [get, list, watch, create, patch]}
  - {apiGroups: [""], resources: [secrets], verbs: [get, create, patch, delete]}
  - {apiGroups: [metrics.k8s.io], resources: [pods], verbs: [list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: deployer, namespace: ${ns.name}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: deployer}
subjects: [{kind: ServiceAccount, name: deployer, namespace: ${ns.name}}]
`,
  });
  await waitForRbac(ns.name, "deployer", [
    ["create", "scaleplatforms.cronscale.io"],
    ["patch", "scaleplatforms.cronscale.io"],
    ["get", "secrets"],
    ["create", "secrets"],
    ["list", "pods.metrics.k8s.io"],
  ]);
  token = (
    await kubectl(["create", "token", "deployer", "--duration=1h"], { namespace: ns.name })
  ).stdout.trim();
  // A platform where the viewer has no rights at all.
  await kubectl(["apply", "-f", "-"], {
    input: `{"apiVersion":"cronscale.io/v1alpha1","kind":"ScalePlatform","metadata":{"name":"not-yours","namespace":"${elsewhere.name}"},"spec":{"plan":"Standard","domains":{"platform":"not-yours.example.test"}}}`,
  });
  ({ app, base } = await startDashboard([ns.name, elsewhere.name]));
  chromium = await launchChromium();
}, 300_000);

afterAll(async () => {
  await chromium?.close();
  await app?.close();
});

const STEPS = [
  "InfrastructureProvisioned",
  "SoftwareInstalled",
  "DatabaseConfigured",
  "LoadBalancerSetUp",
  "CertificatesGenerated",
  "InitialConfigurationApplied",
  "HealthChecksPerformed",
];

describe("platform pages in Chromium against the API server", () => {
  it("deploys from the plan table, shows the seven steps progressing live, reveals credentials, upgrades, adds a webhook, stops", async () => {
    const ctx = await newContext(chromium.browser);
    const page = await ctx.newPage();
    await page.goto(`${base}${PLATFORMS}?namespace=${ns.name}`);
    await page.getByLabel("Token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`**${PLATFORMS}?namespace=${ns.name}`);
    await page.getByRole("link", { name: "Deploy" }).click();
    await page.getByLabel("Instance name").fill("shop");
    await page.getByLabel("Store domain").fill("shop.example.test");
    // The Custom plan takes its resources from the form; the API server's own check of a
    // quantity comes back beside the field, and nothing is created.
    await page.getByRole("radio", { name: "Custom", exact: true }).check();
    await page.getByLabel("vCPU", { exact: true }).fill("24");
    await page.getByLabel("Memory", { exact: true }).fill("lots");
    await page.getByLabel("Storage", { exact: true }).fill("1Ti");
    await page.getByRole("button", { name: "Launch Platform" }).click();
    await expect.poll(() => page.locator("#memory-error").textContent()).toContain("spec.resources.memory");
    const refused = await kubectl(["get", "splat", "shop"], { namespace: ns.name, allowFailure: true });
    expect(refused.stderr).toContain("NotFound");
    await page.getByLabel("Memory", { exact: true }).fill("48Gi");
    await page.getByRole("button", { name: "Update summary" }).click();
    await expect.poll(() => page.locator("#h-summary + dl").textContent()).toContain("1404.80 USD");
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, "platform-deploy-custom");
    await page.getByLabel("Professional").check();
    await page.getByRole("button", { name: "Update summary" }).click();
    await expect.poll(() => page.locator("#h-summary + dl").textContent()).toContain("449 USD");
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, "platform-deploy");
    // The plan table stacks on a phone instead of scrolling sideways.
    expect(await phoneOverflow(page)).toBe(0);
    await page.getByRole("button", { name: "Launch Platform" }).click();
    await page.waitForURL(`**${PLATFORMS}/deploy?namespace=${ns.name}&name=shop`);
    const spec = JSON.parse(
      (await kubectl(["get", "splat", "shop", "-o", "json"], { namespace: ns.name })).stdout,
    ).spec;
    expect(spec).toMatchObject({ plan: "Professional", domains: { platform: "shop.example.test" } });
    expect(await page.locator("[data-step]").count()).toBe(7);

    // Each status write reaches the open page without a reload.
    for (let done = 1; done <= STEPS.length; done++) {
      const steps = STEPS.map((name, i) => ({
        name,
        state: i < done ? "Done" : i === done ? "InProgress" : "Pending",
      }));
      const status = { phase: done === 7 ? "Running" : "Provisioning", stepSummary: `${done}/7`, steps };
      await kubectl(
        ["patch", "splat", "shop", "--subresource=status", "--type=merge", "-p", JSON.stringify({ status })],
        {
          namespace: ns.name,
        },
      );
      await expect
        .poll(() => page.locator(`[data-step="${STEPS[done - 1]}"]`).getAttribute("data-state"), {
          timeout: 15_000,
        })
        .toBe("Done");
    }
    await expect.poll(() => page.locator("#steps").textContent()).toContain("7/7 steps done");
    expect(await page.locator("#steps .badge").first().textContent()).toBe("Running");
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, "platform-progress");

    // Admin credentials on request, read from the Secret the status names, as the viewer.
    await kubectl(
      [
        "create",
        "secret",
        "generic",
        "shop-credentials",
        "--from-literal=admin-username=admin",
        "--from-literal=admin-password=pw-from-secret",
        "--from-literal=api-key=csk_test",
      ],
      { namespace: ns.name },
    );
    await kubectl(
      [
        "patch",
        "splat",
        "shop",
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({
          status: {
            credentialsSecretName: "shop-credentials",
            uptimePercent: 99.9,
            healthCheck: { status: "Healthy", lastTransitionTime: "2026-11-23T10:00:00Z" },
            resources: {
              cpu: "8",
              memory: "16Gi",
              storage: "250Gi",
              appReplicas: 1,
              minReplicas: 1,
              maxReplicas: 4,
            },
          },
        }),
      ],
      {
        namespace: ns.name,
      },
    );
    await page.reload();
    expect(await page.content()).not.toContain("pw-from-secret");
    // System values as the operator reports them; usage from the metrics API when served.
    expect(await page.locator("#platform-health").textContent()).toContain("99.90 %");
    expect(await page.locator("#platform-usage").textContent()).toMatch(
      /1 running \(autoscaling 1–4\)[\s\S]*(vCPU over|serves no metrics API)/,
    );
    await page.getByRole("button", { name: "Reveal credentials" }).click();
    await expect.poll(() => page.getByLabel("Admin password").textContent()).toBe("pw-from-secret");
    // Upgrade Now and Add Webhook, as merge patches the CRD's own rules judge.
    await page.getByLabel("Upgrade to").selectOption("Enterprise");
    await page.getByRole("button", { name: "Upgrade Now" }).click();
    await expect.poll(() => page.locator("#h-plan").textContent()).toBe("Plan: Enterprise");
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const downgrade = await page.request.post(`${base}${PLATFORMS}/${ns.name}/shop/upgrade`, {
      headers: { origin: base },
      form: { _csrf: csrf, plan: "Standard" },
    });
    expect(downgrade.status()).toBe(422);
    expect(await downgrade.text()).toContain("only upgrades to a higher tier are allowed");
    await page.getByLabel("Webhook name").fill("orders");
    await page.getByLabel("Endpoint URL").fill("https://hooks.example.test/orders");
    await page.getByLabel("OrderCreated").check();
    await page.getByLabel("PaymentReceived").check();
    await page.getByRole("button", { name: "Add Webhook" }).click();
    await expect.poll(() => page.locator('[data-webhook="orders"]').count()).toBe(1);
    const hooks = JSON.parse(
      (await kubectl(["get", "splat", "shop", "-o", "json"], { namespace: ns.name })).stdout,
    ).spec.webhooks;
    expect(hooks).toEqual([
      expect.objectContaining({
        name: "orders",
        url: "https://hooks.example.test/orders",
        events: ["OrderCreated", "PaymentReceived"],
        signingSecretRef: { name: "shop-webhook-orders", key: "signing-key" },
      }),
    ]);
    // Its signing secret, made as the viewer and shown once on the answer.
    const shown = await page.getByLabel("Signing secret of orders").textContent();
    const stored = (
      await kubectl(["get", "secret", "shop-webhook-orders", "-o", "jsonpath={.data.signing-key}"], {
        namespace: ns.name,
      })
    ).stdout;
    expect(Buffer.from(stored, "base64").toString()).toBe(shown);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, "platform-page");

    await page.getByRole("button", { name: "Stop" }).click();
    await expect.poll(() => page.getByRole("button", { name: "Start" }).count()).toBe(1);
    const stopped = JSON.parse(
      (await kubectl(["get", "splat", "shop", "-o", "json"], { namespace: ns.name })).stdout,
    ).spec.stopped;
    expect(stopped).toBe(true);

    await page.goto(`${base}${PLATFORMS}?namespace=${ns.name}`);
    expect(await page.locator('[data-platform="shop"]').textContent()).toContain("7/7");
    await screenshots(page, "platforms");

    // The open list follows changes made elsewhere (kubectl here), without a reload.
    await kubectl(["apply", "-f", "-"], {
      input: `{"apiVersion":"cronscale.io/v1alpha1","kind":"ScalePlatform","metadata":{"name":"added-by-kubectl","namespace":"${ns.name}"},"spec":{"plan":"Standard","domains":{"platform":"added.example.test"}}}`,
    });
    await expect
      .poll(() => page.locator('[data-platform="added-by-kubectl"]').count(), { timeout: 15_000 })
      .toBe(1);
    await kubectl(
      [
        "patch",
        "splat",
        "added-by-kubectl",
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({ status: { phase: "Provisioning", stepSummary: "2/7" } }),
      ],
      { namespace: ns.name },
    );
    await expect
      .poll(() => page.locator('[data-platform="added-by-kubectl"]').textContent(), { timeout: 15_000 })
      .toContain("2/7");
    await kubectl(["delete", "splat", "added-by-kubectl", "--wait=false"], { namespace: ns.name });
    await expect
      .poll(() => page.locator('[data-platform="added-by-kubectl"]').count(), { timeout: 15_000 })
      .toBe(0);
    expect(await page.locator('[data-platform="shop"]').count()).toBe(1);

    // A namespace the viewer may not list platforms in: none of its platforms, the API server's 403.
    expect(await page.locator("#namespace option").allTextContents()).toEqual([ns.name]);
    await page.goto(`${base}${PLATFORMS}?namespace=${elsewhere.name}`);
    expect(await page.locator("[data-platform]").count()).toBe(0);
    expect(await page.locator("main").textContent()).toContain("forbidden");
    expect(await page.content()).not.toContain("not-yours");
    const events = await page.request.get(`${base}${PLATFORMS}/events?namespace=${elsewhere.name}`);
    expect(events.status()).toBe(403);
    expect(await events.text()).not.toContain("not-yours");
    await ctx.close();
  });
});
