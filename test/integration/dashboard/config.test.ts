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

// Editing a platform's configuration groups and releasing a restore's old volume, in Chromium
// against the API server, as a ServiceAccount that may patch platforms and restores and as one
// that may only read. The operator does not run: its status writes (observedGeneration,
// ConfigurationReady, a Succeeded restore keeping the old volume) are made here with kubectl, and
// the page must follow them live.

const ns = useNamespace("dash-conf");
const PLATFORMS = "/dashboard/compute/platforms/scale";
const PAGE = () => `${PLATFORMS}/deploy?namespace=${ns.name}&name=shop`;
const BACKUPS = () => `${PLATFORMS}/${ns.name}/shop/backups`;
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
    await expect.poll(() => page.locator("#store-name-error").textContent()).toContain('"kubectl"');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, "platform-config-conflict");
    expect((await get("splat", "shop")).spec.store.name).toBe("Old Shop");
    await page.getByRole("button", { name: "Save anyway" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Store information saved");
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
      .poll(() => page.locator("#store-contactEmail-error").textContent())
      .toContain("spec.store.contactEmail");
    expect(await page.getByLabel("Contact email").getAttribute("aria-invalid")).toBe("true");
    await page.getByText("Edit email").click();
    await page.getByLabel("SMTP host").fill("smtp.example.test");
    await page.getByLabel("From address").fill("shop@example.test");
    await page.getByLabel("SMTP user name").fill("mailer");
    await page.getByRole("button", { name: "Save email" }).click();
    await expect
      .poll(() => page.locator("#mail-passwordSecret-error").textContent())
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
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Email saved");
    const both = (await get("splat", "shop")).spec;
    expect(both.store).toEqual({ name: "New Shop", contactEmail: "old@example.test" });
    expect(both.email.smtp).toMatchObject({
      host: "smtp.example.test",
      username: "mailer",
      passwordSecretRef: { name: "shop-smtp", key: "password" },
    });
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
      .poll(() => page.locator("h1").textContent())
      .toBe("Release the old volume of shop-restore-1?");
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, "platform-restore-release");
    await page.getByRole("button", { name: "Release old volume" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Release of shop-db requested");
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
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const forged = await page.request.post(`${base}${PLATFORMS}/${ns.name}/shop/config/store`, {
      headers: { origin: base },
      form: { _csrf: csrf, "store-name": "Forged", "store-contactEmail": "f@example.test" },
    });
    expect(forged.status()).toBe(403);
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
    expect((await get("splrs", "shop-restore-1")).spec.releaseOldVolume).toBe(false);
    await page.goto(`${base}${PAGE()}`);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, "platform-config-reader");
    await page.context().close();
  });
});
