import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformRestore } from "../api/v1alpha1/scaleplatformrestore.ts";
import { silentLogger } from "../log.ts";
import { ApiError } from "../runtime/errors.ts";
import { applyOf, configFieldOf, configGroup, conflictsOf, formOf } from "./config-model.ts";
import { createDashboard } from "./server.ts";
import { FakeViewerApi, injectSignIn } from "./testing.ts";

const PLATFORMS = "/dashboard/compute/platforms/scale";
const PAGE = `${PLATFORMS}/deploy?namespace=default&name=shop`;
const TOKEN = "config-token";
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const shop = (): ScalePlatform => ({
  apiVersion: "cronscale.io/v1alpha1",
  kind: "ScalePlatform",
  metadata: { name: "shop", namespace: "default", generation: 3 },
  spec: {
    plan: "Standard",
    domains: { platform: "shop.example.test" },
    store: { name: "Old Shop", contactEmail: "old@example.test" },
    email: {
      fromAddress: "shop@example.test",
      smtp: {
        host: "smtp.example.test",
        port: 587,
        security: "StartTLS",
        username: "u",
        passwordSecretRef: { name: "smtp", key: "password" },
      },
    },
  } as ScalePlatform["spec"],
  status: { observedGeneration: 2 },
});

const store = configGroup("store")!;

describe("configuration groups (model)", () => {
  it("applies only the group's fields, as typed, under the platform's identity", () => {
    const form = { ...formOf(store, shop()), "store-name": " New Shop ", "store-supportPhone": "" };
    expect(applyOf(store, shop(), form)).toEqual({
      apiVersion: "cronscale.io/v1alpha1",
      kind: "ScalePlatform",
      metadata: { name: "shop", namespace: "default" },
      spec: { store: { name: "New Shop", contactEmail: "old@example.test" } },
    });
    const mail = configGroup("email")!;
    const m = applyOf(mail, shop(), {
      ...formOf(mail, shop()),
      "mail-port": "25x",
      "mail-recipients": "a@x.test, b@x.test",
    });
    expect(m.spec).toMatchObject({
      email: {
        smtp: {
          host: "smtp.example.test",
          port: "25x",
          passwordSecretRef: { name: "smtp", key: "password" },
        },
        notificationRecipients: ["a@x.test", "b@x.test"],
      },
    });
    // An unchecked box alone does not create the tax object; the CIDRs are one per line.
    const loc = configGroup("localization")!;
    expect(applyOf(loc, shop(), formOf(loc, shop())).spec).toEqual({});
    expect(applyOf(loc, shop(), { "loc-currency": "EUR", "loc-pricesIncludeTax": "on" }).spec).toEqual({
      localization: { currency: "EUR", tax: { pricesIncludeTax: true } },
    });
    const sec = configGroup("security")!;
    expect(applyOf(sec, shop(), { "sec-cidrs": "10.0.0.0/8\r\n\n192.0.2.0/24" }).spec).toEqual({
      security: { adminAllowedCIDRs: ["10.0.0.0/8", "192.0.2.0/24"] },
    });
  });

  it("maps API paths and apply conflicts to the form field", () => {
    expect(configFieldOf(store, "spec.store.contactEmail")).toBe("store-contactEmail");
    expect(configFieldOf(store, ".spec.store.address.country")).toBe("store-country");
    const mail = configGroup("email")!;
    expect(configFieldOf(mail, "spec.email.smtp.passwordSecretRef")).toBe("mail-passwordSecret");
    expect(configFieldOf(configGroup("security")!, "spec.security.adminAllowedCIDRs[1]")).toBe("sec-cidrs");
    expect(configFieldOf(store, "spec.plan")).toBe("");
    const err = new ApiError(409, "Conflict", "conflict", {
      details: {
        causes: [
          { reason: "FieldManagerConflict", field: ".spec.store.name", message: 'conflict with "kubectl"' },
        ],
      },
    });
    expect(conflictsOf(store, err)?.fields["store-name"]?.[0]).toContain('conflict with "kubectl"');
    expect(
      conflictsOf(store, new ApiError(409, "Conflict", "the object has been modified", {})),
    ).toBeUndefined();
  });
});

async function start(viewer: FakeViewerApi) {
  app = await createDashboard({ log: silentLogger(), viewerApi: () => viewer });
  return app;
}
const post = (a: FastifyInstance, url: string, cookie: string, payload: Record<string, unknown>) =>
  a.inject({
    method: "POST",
    url,
    headers: { cookie, origin: "http://dash.test", host: "dash.test" },
    payload,
  });

describe("dashboard: configuration groups", () => {
  it("saves a group by dry run then apply as the viewer; shows the API server's message by the field; conflicts offer Save anyway", async () => {
    const viewer = new FakeViewerApi({ username: "e", groups: [] }, new Set(["* * *"]));
    viewer.platforms.set("default/shop", shop());
    const a = await start(viewer);
    const { cookie, csrf, body } = await injectSignIn(a, TOKEN, PAGE);
    expect(body).toContain("Edit store information");
    expect(body).toContain("Secret name");
    // An unset field with a CRD default shows the default; the form leaves it unset (placeholder).
    expect(body).toContain('<dd data-field="loc-currency">USD (default)</dd>');
    expect(body).toMatch(/id="loc-currency"[^>]*type="text" value placeholder="USD"/);
    expect(body).toContain('data-observed="false"');
    const url = `${PLATFORMS}/default/shop/config/store`;
    const form = { _csrf: csrf, "store-name": "New Shop", "store-contactEmail": "new@example.test" };
    const saved = await post(a, url, cookie, form);
    expect(saved.statusCode).toBe(303);
    expect(viewer.calls.filter((c) => c.startsWith("apply"))).toEqual([
      'apply platform dry-run force default/shop cronscale-dashboard-store {"store":{"name":"New Shop","contactEmail":"new@example.test"}}',
      'apply platform default/shop cronscale-dashboard-store {"store":{"name":"New Shop","contactEmail":"new@example.test"}}',
    ]);
    const after = await a.inject({ method: "GET", url: PAGE, headers: { cookie } });
    expect(after.body).toContain("Store information saved (generation 4)");
    expect(after.body).toContain("New Shop");

    const bad = await post(a, url, cookie, { ...form, "store-contactEmail": "nope" });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toMatch(/id="store-contactEmail"[^>]*aria-invalid="true"/);
    expect(bad.body).toContain(
      'id="store-contactEmail-error">spec.store.contactEmail: Invalid value: &quot;nope&quot;: must be an email address',
    );
    expect(bad.body).toMatch(/<details[^>]*id="edit-store"[^>]*open/);

    viewer.applyConflict = { field: ".spec.store.name", manager: "kubectl" };
    const conflict = await post(a, url, cookie, { ...form, "store-name": "Mine" });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.body).toContain("Save anyway");
    expect(conflict.body).toContain(
      'id="store-name-error">Last set by another manager (conflict with &quot;kubectl&quot;)',
    );
    const forced = await post(a, url, cookie, { ...form, "store-name": "Mine", force: "true" });
    expect(forced.statusCode).toBe(303);
    expect(viewer.calls.slice(-2)).toEqual([
      expect.stringMatching(/^apply platform dry-run force default\/shop/),
      expect.stringMatching(/^apply platform force default\/shop/),
    ]);
  });

  it("a viewer who may not patch gets no forms, and a forged post gets the API server's 403 as a page", async () => {
    const viewer = new FakeViewerApi(
      { username: "r", groups: [] },
      new Set(["get scaleplatforms default", "list scaleplatforms default"]),
    );
    viewer.platforms.set("default/shop", shop());
    const a = await start(viewer);
    const { cookie, csrf, body } = await injectSignIn(a, TOKEN, PAGE);
    expect(body).toContain("Old Shop");
    expect(body).not.toContain("Edit store information");
    const forged = await post(a, `${PLATFORMS}/default/shop/config/store`, cookie, {
      _csrf: csrf,
      "store-name": "Hacked",
      "store-contactEmail": "h@example.test",
    });
    expect(forged.statusCode).toBe(403);
    expect(forged.body).toContain("<html");
    expect(forged.body).toContain("cannot patch");
    const noCsrf = await post(a, `${PLATFORMS}/default/shop/config/store`, cookie, { "store-name": "x" });
    expect(noCsrf.statusCode).toBe(403);
    expect(viewer.platforms.get("default/shop")?.spec.store?.name).toBe("Old Shop");
  });
});

describe("dashboard: releasing a restore's old volume", () => {
  const BACKUPS = `${PLATFORMS}/default/shop/backups`;
  const restore = (status: ScalePlatformRestore["status"]): ScalePlatformRestore => ({
    apiVersion: "cronscale.io/v1alpha1",
    kind: "ScalePlatformRestore",
    metadata: { name: "shop-restore-1", namespace: "default" },
    spec: {
      platformName: "shop",
      releaseOldVolume: false,
      oldVolumeTTLHours: 72,
      cutoverTimeoutSeconds: 300,
    },
    status,
  });
  const done = {
    phase: "Succeeded",
    oldVolumeClaimName: "shop-db",
    oldVolumeReleaseTime: "2026-11-26T10:00:00Z",
  } as const;

  it("shows the kept volume with its TTL, confirms, then patches releaseOldVolume as the viewer", async () => {
    const viewer = new FakeViewerApi({ username: "e", groups: [] }, new Set(["* * *"]));
    viewer.platforms.set("default/shop", shop());
    viewer.restores.set("default/shop-restore-1", restore(done));
    const a = await start(viewer);
    const { cookie, body } = await injectSignIn(a, TOKEN, BACKUPS);
    expect(body).toContain('data-old-volume="kept"');
    expect(body).toContain('datetime="2026-11-26T10:00:00Z"');
    const href = `${BACKUPS}/restores/shop-restore-1/release`;
    expect(body).toContain(`href="${href}"`);
    const confirm = await a.inject({ method: "GET", url: href, headers: { cookie } });
    expect(confirm.body).toContain("Release the old volume of shop-restore-1?");
    const csrf = /name="_csrf" value="([^"]+)"/.exec(confirm.body)?.[1] ?? "";
    const res = await post(a, href, cookie, { _csrf: csrf });
    expect(res.statusCode).toBe(303);
    expect(viewer.calls.at(-1)).toBe(
      'patch restore default/shop-restore-1 {"spec":{"releaseOldVolume":true}}',
    );
    const after = await a.inject({ method: "GET", url: BACKUPS, headers: { cookie } });
    expect(after.body).toContain('data-old-volume="requested"');
    // Nothing to release any more: refused, nothing patched.
    viewer.restores.set("default/shop-restore-1", restore({ ...done, oldVolumeReleased: true }));
    expect((await post(a, href, cookie, { _csrf: csrf })).statusCode).toBe(409);
  });

  it("offers no release to a viewer who may not patch restores; the forged post is the API server's 403", async () => {
    const viewer = new FakeViewerApi(
      { username: "r", groups: [] },
      new Set([
        "get scaleplatforms default",
        "list scaleplatformrestores default",
        "list scaleplatformbackups default",
      ]),
    );
    viewer.platforms.set("default/shop", shop());
    viewer.restores.set("default/shop-restore-1", restore(done));
    const a = await start(viewer);
    const { cookie, csrf, body } = await injectSignIn(a, TOKEN, BACKUPS);
    expect(body).toContain('data-old-volume="kept"');
    expect(body).not.toContain("Release old volume");
    const forged = await post(a, `${BACKUPS}/restores/shop-restore-1/release`, cookie, { _csrf: csrf });
    expect(forged.statusCode).toBe(403);
    expect(forged.body).toContain("<html");
  });
});
