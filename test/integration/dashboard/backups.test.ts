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

// A platform's backups page in Chromium against the API server. The platform and the status the
// operator would write (status.backup, BackupHealthy) are written here with kubectl, so the page
// is tested without PostgreSQL: Back up now creates a ScalePlatformBackup as the viewer, its
// status writes reach the open page live, Cancel deletes it; a viewer who may only read sees
// neither control.

const ns = useNamespace("dash-bk");
const PLATFORMS = "/dashboard/compute/platforms/scale";
const PAGE = () => `${PLATFORMS}/${ns.name}/shop/backups`;
let app: FastifyInstance;
let base = "";
let chromium: TestBrowser;
const tokens = { operator: "", auditor: "" };

const STATUS = {
  status: {
    phase: "Running",
    backup: {
      repository: "/backups/shop",
      lastSuccessfulBackup: {
        label: "20261122-010002F",
        type: "full",
        startTime: "2026-11-22T01:00:02Z",
        stopTime: "2026-11-22T01:03:40Z",
        sizeBytes: 52428800,
        repoSizeBytes: 7340032,
      },
      recoverableFrom: "2026-11-22T01:00:02Z",
      recoverableUntil: "2026-11-23T12:00:00Z",
      nextFullBackup: "2026-11-24T01:00:00Z",
      nextIncrementalBackup: "2026-11-23T14:00:00Z",
      recentBackups: [
        {
          label: "20261122-010002F",
          type: "full",
          startTime: "2026-11-22T01:00:02Z",
          stopTime: "2026-11-22T01:03:40Z",
          sizeBytes: 52428800,
          repoSizeBytes: 7340032,
        },
      ],
    },
    conditions: [
      {
        type: "BackupHealthy",
        status: "True",
        reason: "BackedUp",
        message: "last full backup 20261122-010002F",
        lastTransitionTime: "2026-11-22T01:03:40Z",
      },
    ],
  },
};

const PLATFORM = (n: string) => `
apiVersion: cronscale.io/v1alpha1
kind: ScalePlatform
metadata: {name: shop, namespace: ${n}}
spec:
  plan: Standard
  domains: {platform: shop.example.test}
  backup: {repository: {volume: {claimName: shop-backups}}}
`;

beforeAll(async () => {
  await installCrds();
  await kubectl([
    "wait",
    "--for=condition=Established",
    "--timeout=60s",
    "crd/scaleplatformbackups.cronscale.io",
  ]);
  await kubectl(["apply", "-f", "-"], { input: PLATFORM(ns.name) });
  await kubectl(
    ["patch", "splat", "shop", "--subresource=status", "--type=merge", "-p", JSON.stringify(STATUS)],
    { namespace: ns.name },
  );
  Object.assign(
    tokens,
    await createViewers(ns.name, {
      operator: {
        rules: [
          "{apiGroups: [cronscale.io], resources: [scaleplatforms], verbs: [get, list, watch]}",
          "{apiGroups: [cronscale.io], resources: [scaleplatformbackups], verbs: [get, list, watch, create, delete]}",
        ],
        ready: [
          ["create", "scaleplatformbackups.cronscale.io"],
          ["delete", "scaleplatformbackups.cronscale.io"],
        ],
      },
      auditor: {
        rules: [
          "{apiGroups: [cronscale.io], resources: [scaleplatforms, scaleplatformbackups], verbs: [get, list, watch]}",
        ],
        ready: [["list", "scaleplatformbackups.cronscale.io"]],
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

async function signIn(who: keyof typeof tokens): Promise<Page> {
  const page = await (await newContext(chromium.browser)).newPage();
  await page.goto(`${base}${PAGE()}`);
  await page.getByLabel("Token").fill(tokens[who]);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`**${PAGE()}`);
  return page;
}

const manualBackups = async () =>
  JSON.parse((await kubectl(["get", "splbk", "-o", "json"], { namespace: ns.name })).stdout).items as {
    metadata: { name: string };
    spec: { platformName: string; type: string };
  }[];

describe("platform backups in Chromium against the API server", () => {
  it("shows health and recovery window, backs up now with live progress, cancels a running backup", async () => {
    const page = await signIn("operator");
    expect(await page.locator("#backup-healthy").textContent()).toContain("Yes");
    expect(await page.locator("#last-success").textContent()).toContain("20261122-010002F");
    expect(await page.locator("#recovery-window").textContent()).toContain("2026-11-22 01:00:02");
    expect(await page.locator('[data-backup-label="20261122-010002F"]').textContent()).toContain("50.0 MiB");
    // The restore form's place is marked, without a control yet.
    expect(await page.locator("#restore button").count()).toBe(0);

    await page.getByLabel("Incremental (changes since the last backup)").check();
    await page.getByRole("button", { name: "Back up now" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toMatch(/requested \(incremental\)/);
    const [created] = await manualBackups();
    expect(created?.spec).toEqual({ platformName: "shop", type: "incr" });
    const name = created?.metadata.name ?? "";
    const row = page.locator(`[data-manual-backup="${name}"]`);
    expect(await row.getAttribute("data-phase")).toBe("Pending");

    // The operator's status writes reach the open page without a reload.
    await kubectl(
      [
        "patch",
        "splbk",
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({
          status: { phase: "Running", jobName: `${name}-bk`, startTime: "2026-11-23T12:30:00Z" },
        }),
      ],
      { namespace: ns.name },
    );
    await expect.poll(() => row.getAttribute("data-phase"), { timeout: 15_000 }).toBe("Running");
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(await phoneOverflow(page)).toBe(0);
    await screenshots(page, "platform-backups");

    await page.getByRole("button", { name: `Cancel ${name}` }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain(`Backup ${name} cancelled.`);
    await expect.poll(async () => (await manualBackups()).length).toBe(0);
    await page.context().close();
  });

  it("a viewer who may only read sees no Back up now or Cancel, and a forged post gets the API server's 403", async () => {
    await kubectl(["apply", "-f", "-"], {
      input: `{"apiVersion":"cronscale.io/v1alpha1","kind":"ScalePlatformBackup","metadata":{"name":"shop-before-upgrade","namespace":"${ns.name}"},"spec":{"platformName":"shop"}}`,
    });
    const page = await signIn("auditor");
    await expect.poll(() => page.locator('[data-manual-backup="shop-before-upgrade"]').count()).toBe(1);
    expect(await page.getByRole("button", { name: "Back up now" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: /^Cancel/ }).count()).toBe(0);
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const forged = await page.request.post(`${base}${PAGE()}`, {
      headers: { origin: base },
      form: { _csrf: csrf, type: "full" },
    });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toContain("forbidden");
    expect((await manualBackups()).map((b) => b.metadata.name)).toEqual(["shop-before-upgrade"]);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.context().close();
  });
});
