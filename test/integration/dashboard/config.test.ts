import type { FastifyInstance } from "fastify";
import type { Page } from "playwright-core";
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
import { createViewers, phoneOverflow, startDashboard } from "./helpers.ts";

// Editing a platform's configuration groups and its lists (shipping methods, payment gateways)
// and releasing a restore's old volume, in Chromium against the API server, as a ServiceAccount
// that may patch platforms and restores and as one that may only read. The operator does not run: its status writes (observedGeneration,
// ConfigurationReady, a Succeeded restore keeping the old volume) are made here with kubectl, and
// the page must follow them live.

const ns = useNamespace("dash-conf");
const PLATFORMS = "/dashboard/compute/platforms/scale";
const PAGE = () => `${PLATFORMS}/deploy?namespace=${ns.name}&name=shop`;
const BACKUPS = () => `${PLATFORMS}/${ns.name}/shop/backups`;
// A poll that waits for a page the click navigates to (a POST, its redirect, the page's API calls
// as the viewer): on a loaded machine that takes longer than expect.poll's default second.
const NAV = { timeout: 15_000 };
let app: FastifyInstance;
let base = "";
let chromium: TestBrowser;
const tokens = { editor: "", reader: "" };

// Applied with `kubectl apply --server-side`: the store's fields belong to the manager "kubectl".
const platform = (n: string) => `
apiVersion: cronscale.io/v1alpha1
kind: ScalePlatform
metadata: {name: shop, namespace: ${n}}
spec:
  plan: Standard
  domains: {platform: shop.example.test}
  store: {name: Old Shop, contactEmail: old@example.test}
  shippingMethods:
  - {name: standard, carrier: dhl, zones: [DE], rate: {calculation: Flat, amount: "4.90", currency: EUR}}
  backup: {repository: {volume: {claimName: shop-backups}}}
`;

const get = async (kind: string, name: string) =>
  JSON.parse(
    (await kubectl(["get", kind, name, "-o", "json", "--show-managed-fields"], { namespace: ns.name }))
      .stdout,
  );
const patchStatus = (kind: string, name: string, status: unknown) =>
  kubectl(["patch", kind, name, "--subresource=status", "--type=merge", "-p", JSON.stringify({ status })], {
    namespace: ns.name,
  });

beforeAll(async () => {
  await installCrds();
  await kubectl(["wait", "--for=condition=Established", "--timeout=60s", "crd/scaleplatforms.cronscale.io"]);
  await kubectl(["apply", "--server-side", "-f", "-"], { input: platform(ns.name) });
  Object.assign(
    tokens,
    await createViewers(ns.name, {
      editor: {
        rules: [
          "{apiGroups: [cronscale.io], resources: [scaleplatforms, scaleplatformrestores], verbs: [get, list, watch, patch]}",
          "{apiGroups: [cronscale.io], resources: [scaleplatformbackups], verbs: [get, list, watch]}",
        ],
        ready: [
          ["patch", "scaleplatforms.cronscale.io"],
          ["patch", "scaleplatformrestores.cronscale.io"],
        ],
      },
      reader: {
        rules: [
          "{apiGroups: [cronscale.io], resources: [scaleplatforms, scaleplatformrestores, scaleplatformbackups], verbs: [get, list, watch]}",
        ],
        ready: [["get", "scaleplatforms.cronscale.io"]],
      },
    }),
  );
  ({ app, base } = await startDashboard([ns.name]));
  chromium = await launchChromium();
}, 300_000);

afterAll(async () => {
  await chromium?.close();
  await app?.close();
});

async function signIn(who: keyof typeof tokens, path: string): Promise<Page> {
  const page = await (await newContext(chromium.browser)).newPage();
  await page.goto(`${base}${path}`);
  await page.getByLabel("Token").fill(tokens[who]);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`**${path}`);
  return page;
}

describe("configuration groups and old-volume release in Chromium against the API server", () => {
  it("edits the store by server-side apply as the viewer: conflict, save anyway, the operator's uptake live, the API server's message by the field", async () => {
    const page = await signIn("editor", PAGE());
    expect(await page.locator('[data-field="store-name"]').textContent()).toBe("Old Shop");
    await page.getByText("Edit store information").click();
    await page.getByLabel("Store name").fill("New Shop");
    await page.getByRole("button", { name: "Save store information" }).click();
    // kubectl set the name: a non-forced apply is refused, naming the other manager by the field.
    await expect.poll(() => page.locator("#store-name-error").textContent(), NAV).toContain('"kubectl"');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, "platform-config-conflict");
    expect((await get("splat", "shop")).spec.store.name).toBe("Old Shop");
    await page.getByRole("button", { name: "Save anyway" }).click();
    await expect.poll(() => page.getByRole("status").textContent(), NAV).toContain("Store information saved");
    expect(await page.locator('[data-field="store-name"]').textContent()).toBe("New Shop");
    const saved = await get("splat", "shop");
    expect(saved.spec.store).toEqual({ name: "New Shop", contactEmail: "old@example.test" });
    expect(saved.metadata.managedFields).toContainEqual(
      expect.objectContaining({ manager: "cronscale-dashboard-store", operation: "Apply" }),
    );
    // Not taken up yet; the operator's status write reaches the open page without a reload.
    expect(await page.locator("[data-observed]").getAttribute("data-observed")).toBe("false");
    const generation = saved.metadata.generation;
    await patchStatus("splat", "shop", {
      observedGeneration: generation,
      conditions: [
        {
          type: "ConfigurationReady",
          status: "True",
          reason: "SecretsResolved",
          message: "no Secret references",
          observedGeneration: generation,
          lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
        },
      ],
    });
    await expect
      .poll(() => page.locator("[data-observed]").getAttribute("data-observed"), { timeout: 15_000 })
      .toBe("true");
    expect(await page.locator("[data-config-ready]").getAttribute("data-config-ready")).toBe("True");
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(await phoneOverflow(page)).toBe(0);
    await screenshots(page, "platform-config");

    // The API server's schema and CEL messages, beside the field they name; nothing saved.
    await page.getByText("Edit store information").click();
    await page.getByLabel("Contact email").fill("not-an-email");
    await page.getByRole("button", { name: "Save store information" }).click();
    await expect
      .poll(() => page.locator("#store-contactEmail-error").textContent(), NAV)
      .toContain("spec.store.contactEmail");
    expect(await page.getByLabel("Contact email").getAttribute("aria-invalid")).toBe("true");
    await page.getByText("Edit email").click();
    await page.getByLabel("SMTP host").fill("smtp.example.test");
    await page.getByLabel("From address").fill("shop@example.test");
    await page.getByLabel("SMTP user name").fill("mailer");
    await page.getByRole("button", { name: "Save email" }).click();
    await expect
      .poll(() => page.locator("#mail-passwordSecret-error").textContent(), NAV)
      .toContain("passwordSecretRef is required when username is set");
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, "platform-config-invalid");
    const after = await get("splat", "shop");
    expect(after.spec.store.contactEmail).toBe("old@example.test");
    expect(after.spec.email).toBeUndefined();
    // The password by Secret reference; saving the email group leaves the store group as it was.
    await page.getByLabel("Password: Secret name").fill("shop-smtp");
    await page.getByLabel("Password: key in the Secret").fill("password");
    await page.getByRole("button", { name: "Save email" }).click();
    await expect.poll(() => page.getByRole("status").textContent(), NAV).toContain("Email saved");
    const both = (await get("splat", "shop")).spec;
    expect(both.store).toEqual({ name: "New Shop", contactEmail: "old@example.test" });
    expect(both.email.smtp).toMatchObject({
      host: "smtp.example.test",
      username: "mailer",
      passwordSecretRef: { name: "shop-smtp", key: "password" },
    });
    await page.context().close();
  });

  it("adds, edits and removes shipping methods and payment gateways entry by entry, as the viewer", async () => {
    const page = await signIn("editor", PAGE());
    const spec = async () => (await get("splat", "shop")).spec;
    const owners = async () =>
      Object.fromEntries(
        ((await get("splat", "shop")).metadata.managedFields as { manager: string; fieldsV1: object }[]).map(
          (m) => [m.manager, JSON.stringify(m.fieldsV1)],
        ),
      );
    const standard = (sp: { shippingMethods: { name: string; rate: { amount: string } }[] }) =>
      sp.shippingMethods.find((m) => m.name === "standard") ?? { rate: { amount: "" } };
    const saved = (text: string) =>
      expect.poll(() => page.getByRole("status").textContent(), NAV).toContain(text);
    const add = page.locator("#edit-shipping-add");
    await add.getByText("Add shipping method").first().click();
    await add.getByLabel("Name", { exact: true }).fill("express");
    await add.getByLabel("Carrier").fill("ups");
    await add.getByLabel("Zones").fill("DE, AT");
    await add.getByLabel("Rate amount").fill("twelve");
    await add.getByRole("button", { name: "Add shipping method" }).click();
    // The schema's message for the amount, beside it; nothing saved.
    await expect
      .poll(() => page.locator("#shipping-add-amount-error").textContent(), NAV)
      .toContain("spec.shippingMethods[1].rate.amount");
    expect(await add.getByLabel("Rate amount").getAttribute("aria-invalid")).toBe("true");
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, "platform-config-list-invalid");
    expect((await spec()).shippingMethods.map((m: { name: string }) => m.name)).toEqual(["standard"]);
    await add.getByLabel("Rate amount").fill("12.50");
    await add.getByLabel("Rate currency").fill("EUR");
    await add.getByRole("button", { name: "Add shipping method" }).click();
    await saved("Shipping method express saved");
    expect(await page.locator('#config-shipping [data-entry="express"]').textContent()).toContain("DE, AT");
    // Edit the dashboard's entry: only it changes; kubectl's entry stays kubectl's alone.
    const edit = page.locator("#edit-shipping-e-express");
    await edit.getByText("Edit shipping method express").click();
    await edit.getByLabel("Zones").fill("DE, AT, CH");
    await edit.getByLabel("Enabled").uncheck();
    await edit.getByRole("button", { name: "Save shipping method express" }).click();
    await saved("Shipping method express saved");
    let now = await spec();
    expect(now.shippingMethods).toEqual([
      {
        name: "standard",
        carrier: "dhl",
        zones: ["DE"],
        rate: { calculation: "Flat", amount: "4.90", currency: "EUR" },
        fulfillment: "Ship",
        enabled: true,
      },
      {
        name: "express",
        carrier: "ups",
        zones: ["DE", "AT", "CH"],
        rate: { calculation: "Flat", amount: "12.50", currency: "EUR" },
        fulfillment: "Ship",
        enabled: false,
      },
    ]);
    let managed = await owners();
    expect(managed["cronscale-dashboard-shipping"]).toContain('k:{\\"name\\":\\"express\\"}');
    expect(managed["cronscale-dashboard-shipping"]).not.toContain("standard");
    // kubectl's entry: a changed amount is refused naming kubectl, beside the field; Save anyway forces.
    const std = page.locator("#edit-shipping-e-standard");
    await std.getByText("Edit shipping method standard").click();
    await std.getByLabel("Rate amount").fill("5.90");
    await std.getByRole("button", { name: "Save shipping method standard" }).click();
    await expect
      .poll(() => page.locator("#shipping-e-standard-amount-error").textContent(), NAV)
      .toContain('"kubectl"');
    expect(standard(await spec()).rate.amount).toBe("4.90");
    await page.getByRole("button", { name: "Save anyway" }).click();
    await saved("Shipping method standard saved");
    // The dashboard's apply lists its entries in its own order: look entries up by name.
    expect(standard(await spec()).rate.amount).toBe("5.90");

    // A payment gateway: credentials only as a Secret's name.
    const pay = page.locator("#edit-payments-add");
    await pay.getByText("Add payment gateway").first().click();
    await pay.getByLabel("Name", { exact: true }).fill("cards");
    await pay.getByLabel("Provider").selectOption("stripe");
    await pay.getByLabel("Credentials: Secret name").fill("stripe-keys");
    await pay.getByLabel("Settings").fill("statementDescriptor=SHOP");
    await pay.getByRole("button", { name: "Add payment gateway" }).click();
    await saved("Payment gateway cards saved");
    const cards = page.locator("#edit-payments-e-cards");
    await cards.getByText("Edit payment gateway cards").click();
    await cards.getByLabel("Mode").selectOption("Live");
    await cards.getByRole("button", { name: "Save payment gateway cards" }).click();
    await saved("Payment gateway cards saved");
    expect((await spec()).paymentGateways).toEqual([
      {
        name: "cards",
        type: "Card",
        provider: "stripe",
        mode: "Live",
        enabled: true,
        credentialsSecretRef: { name: "stripe-keys" },
        settings: { statementDescriptor: "SHOP" },
      },
    ]);
    expect(await page.locator('#config-payments [data-entry="cards"]').textContent()).toContain(
      "Secret stripe-keys",
    );

    // Remove: a confirmation first; one only the dashboard set, then kubectl's (named, with what that means).
    await page.getByRole("link", { name: "Remove payment gateway cards…" }).click();
    await expect.poll(() => page.locator("h1").textContent(), NAV).toBe("Remove payment gateway cards?");
    expect(await page.getByText("It was set only from this dashboard.").count()).toBe(1);
    await page.getByRole("button", { name: "Remove payment gateway" }).click();
    await saved("Removed payment gateway cards");
    expect((await spec()).paymentGateways ?? []).toEqual([]);
    await page.getByRole("link", { name: "Remove shipping method standard…" }).click();
    await expect
      .poll(() => page.locator("[data-owners]").getAttribute("data-owners"), NAV)
      .toContain("kubectl (Apply)");
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, "platform-config-list-remove");
    await page.getByRole("button", { name: "Remove shipping method" }).click();
    await saved("Removed shipping method standard");
    now = await spec();
    expect(now.shippingMethods.map((m: { name: string }) => m.name)).toEqual(["express"]);
    managed = await owners();
    expect(managed.kubectl ?? "").not.toContain("standard");

    // The operator's uptake of the last generation reaches the open page live: here held back,
    // as the operator does while a referenced Secret (the SMTP password's) does not exist.
    const generation = (await get("splat", "shop")).metadata.generation;
    expect(await page.locator("[data-generation]").getAttribute("data-generation")).toBe(String(generation));
    expect(await page.locator("[data-observed]").getAttribute("data-observed")).toBe("false");
    await patchStatus("splat", "shop", {
      observedGeneration: generation,
      conditions: [
        {
          type: "ConfigurationReady",
          status: "False",
          reason: "SecretNotFound",
          message: `spec.email.smtp.passwordSecretRef: Secret "shop-smtp" not found in namespace ${ns.name}`,
          observedGeneration: generation,
          lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
        },
      ],
    });
    await expect
      .poll(() => page.locator("[data-observed]").getAttribute("data-observed"), { timeout: 15_000 })
      .toBe("true");
    expect(await page.locator("[data-config-ready]").getAttribute("data-config-ready")).toBe("False");
    expect(await page.locator("[data-config-ready]").textContent()).toContain('Secret "shop-smtp" not found');
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(await phoneOverflow(page)).toBe(0);
    await screenshots(page, "platform-config-lists");
    await page.context().close();
  });

  it("releases a Succeeded restore's old volume after confirmation, and follows the release live", async () => {
    await kubectl(["apply", "-f", "-"], {
      input: `{"apiVersion":"cronscale.io/v1alpha1","kind":"ScalePlatformRestore","metadata":{"name":"shop-restore-1","namespace":"${ns.name}"},"spec":{"platformName":"shop"}}`,
    });
    await patchStatus("splrs", "shop-restore-1", {
      phase: "Succeeded",
      target: "latest",
      oldVolumeClaimName: "shop-db",
      oldVolumeReleaseTime: "2026-11-26T10:00:00Z",
      completionTime: "2026-11-23T10:00:00Z",
      downtimeSeconds: 12.5,
    });
    const page = await signIn("editor", BACKUPS());
    const cell = page.locator('[data-restore="shop-restore-1"] [data-old-volume]');
    expect(await cell.getAttribute("data-old-volume")).toBe("kept");
    expect(await cell.textContent()).toContain("2026-11-26 10:00:00");
    await page.getByRole("link", { name: "Release old volume…" }).click();
    await expect
      .poll(() => page.locator("h1").textContent(), NAV)
      .toBe("Release the old volume of shop-restore-1?");
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, "platform-restore-release");
    await page.getByRole("button", { name: "Release old volume" }).click();
    await expect
      .poll(() => page.getByRole("status").textContent(), NAV)
      .toContain("Release of shop-db requested");
    expect((await get("splrs", "shop-restore-1")).spec.releaseOldVolume).toBe(true);
    expect(await cell.getAttribute("data-old-volume")).toBe("requested");
    await patchStatus("splrs", "shop-restore-1", { oldVolumeReleased: true });
    await expect.poll(() => cell.getAttribute("data-old-volume"), { timeout: 15_000 }).toBe("released");
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(await phoneOverflow(page)).toBe(0);
    await page.context().close();
  });

  it("a viewer who may only read sees no edit or release controls; forged posts get the API server's 403 as a page", async () => {
    await kubectl(
      ["patch", "splrs", "shop-restore-1", "--type=merge", "-p", '{"spec":{"releaseOldVolume":false}}'],
      {
        namespace: ns.name,
      },
    );
    await patchStatus("splrs", "shop-restore-1", { oldVolumeReleased: false });
    const page = await signIn("reader", PAGE());
    expect(await page.locator('[data-field="store-name"]').textContent()).toBe("New Shop");
    expect(await page.getByText(/^Edit /).count()).toBe(0);
    expect(await page.locator('form[action*="/config/"]').count()).toBe(0);
    expect(await page.locator('#config-shipping [data-entry="express"]').count()).toBe(1);
    expect(await page.locator('a[href*="/entries/"]').count()).toBe(0);
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const forged = await page.request.post(`${base}${PLATFORMS}/${ns.name}/shop/config/store`, {
      headers: { origin: base },
      form: { _csrf: csrf, "store-name": "Forged", "store-contactEmail": "f@example.test" },
    });
    expect(forged.status()).toBe(403);
    const entry = (await get("splat", "shop")).spec.shippingMethods[0];
    const removal = await page.request.post(
      `${base}${PLATFORMS}/${ns.name}/shop/config/shipping/entries/express/remove`,
      { headers: { origin: base }, form: { _csrf: csrf, seen: JSON.stringify(entry) } },
    );
    expect(removal.status()).toBe(403);
    const text = await forged.text();
    expect(text).toContain("<main");
    expect(text).toContain("forbidden");
    await page.goto(`${base}${BACKUPS()}`);
    expect(
      await page.locator('[data-restore="shop-restore-1"] [data-old-volume]').getAttribute("data-old-volume"),
    ).toBe("kept");
    expect(await page.getByRole("link", { name: "Release old volume…" }).count()).toBe(0);
    const release = await page.request.post(`${base}${BACKUPS()}/restores/shop-restore-1/release`, {
      headers: { origin: base },
      form: { _csrf: csrf },
    });
    expect(release.status()).toBe(403);
    const spec = (await get("splat", "shop")).spec;
    expect(spec.store.name).toBe("New Shop");
    expect(spec.shippingMethods.map((m: { name: string }) => m.name)).toEqual(["express"]);
    expect((await get("splrs", "shop-restore-1")).spec.releaseOldVolume).toBe(false);
    await page.goto(`${base}${PAGE()}`);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, "platform-config-reader");
    await page.context().close();
  });
});
