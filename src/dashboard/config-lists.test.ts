import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import { silentLogger } from "../log.ts";
import { ApiError } from "../runtime/errors.ts";
import {
  applyOfEntry,
  configList,
  entryFieldOf,
  entryForm,
  entryGroup,
  entryOf,
  otherOwners,
  ownedByDashboard,
  removalPatch,
} from "./config-lists.ts";
import { type ConfigForm, conflictsOf } from "./config-model.ts";
import { createDashboard } from "./server.ts";
import { FakeViewerApi, injectSignIn } from "./testing.ts";

const shipping = configList("shipping")!;
const payments = configList("payments")!;

const express = {
  name: "express",
  carrier: "dhl",
  zones: ["DE", "AT"],
  rate: { calculation: "Flat", amount: "9.90", currency: "EUR" },
  fulfillment: "Ship",
  enabled: true,
};
const pickup = {
  name: "pickup",
  carrier: "manual",
  zones: ["DE"],
  rate: { calculation: "Flat", amount: "0" },
  fulfillment: "Pickup",
  enabled: true,
};
const key = (n: string) => `k:{"name":"${n}"}`;
// express was applied by kubectl; pickup by the dashboard; kubectl also set pickup's carrier.
const shop = (): ScalePlatform =>
  ({
    apiVersion: "cronscale.io/v1alpha1",
    kind: "ScalePlatform",
    metadata: {
      name: "shop",
      namespace: "default",
      managedFields: [
        {
          manager: "kubectl",
          operation: "Apply",
          fieldsV1: { "f:spec": { "f:shippingMethods": { [key("express")]: {}, [key("pickup")]: {} } } },
        },
        {
          manager: "cronscale-dashboard-shipping",
          operation: "Apply",
          fieldsV1: { "f:spec": { "f:shippingMethods": { [key("pickup")]: {} } } },
        },
        { manager: "cronscale", operation: "Update", subresource: "status", fieldsV1: { "f:status": {} } },
      ],
    },
    spec: {
      plan: "Standard",
      domains: { platform: "shop.example.test" },
      shippingMethods: [express, pickup],
    },
  }) as unknown as ScalePlatform;

describe("payment gateways and shipping methods (model)", () => {
  it("reads who owns each entry from managedFields", () => {
    expect([...ownedByDashboard(shipping, shop())]).toEqual(["pickup"]);
    expect(otherOwners(shipping, shop(), "express")).toEqual(["kubectl (Apply)"]);
    expect(otherOwners(shipping, shop(), "pickup")).toEqual(["kubectl (Apply)"]);
    expect(ownedByDashboard(payments, shop()).size).toBe(0);
  });

  it("applies the dashboard's own entries as they are plus the one saved, never another manager's", () => {
    const add = entryGroup(shipping);
    const form: ConfigForm = {
      ...entryForm(add, undefined),
      "shipping-add-name": "eco",
      "shipping-add-carrier": "ups",
      "shipping-add-zones": "DE, FR",
      "shipping-add-calculation": "ByWeight",
      "shipping-add-amount": "1.5",
      "shipping-add-currency": "",
      "shipping-add-fulfillment": "Ship",
    };
    expect(form["shipping-add-enabled"]).toBe("on");
    const config = applyOfEntry(shipping, shop(), entryOf(add, "eco", form));
    expect(config.spec).toEqual({
      shippingMethods: [
        pickup,
        {
          name: "eco",
          carrier: "ups",
          zones: ["DE", "FR"],
          rate: { calculation: "ByWeight", amount: "1.5" },
          fulfillment: "Ship",
          enabled: true,
        },
      ],
    });
    // Editing kubectl's entry: the edit form has no name field; unchecked means false.
    const edit = entryGroup(shipping, "express");
    expect(edit.fields.map((f) => f.id)).not.toContain("shipping-e-express-name");
    const ef: ConfigForm = { ...entryForm(edit, express), "shipping-e-express-enabled": "" };
    expect(ef["shipping-e-express-zones"]).toBe("DE, AT");
    const edited = applyOfEntry(shipping, shop(), entryOf(edit, "express", ef)).spec as {
      shippingMethods: unknown[];
    };
    expect(edited.shippingMethods).toEqual([pickup, { ...express, enabled: false }]);
  });

  it("gateway credentials are a Secret's name; settings are key=value lines", () => {
    const add = entryGroup(payments);
    const e = entryOf(add, "cards", {
      "payments-add-type": "Card",
      "payments-add-provider": "stripe",
      "payments-add-mode": "Test",
      "payments-add-enabled": "on",
      "payments-add-credentials": "stripe-keys",
      "payments-add-settings": "statementDescriptor=SHOP\ncapture = manual\n",
    });
    expect(e).toEqual({
      name: "cards",
      type: "Card",
      provider: "stripe",
      mode: "Test",
      enabled: true,
      credentialsSecretRef: { name: "stripe-keys" },
      settings: { statementDescriptor: "SHOP", capture: "manual" },
    });
    expect(entryForm(add, e)["payments-add-settings"]).toBe("statementDescriptor=SHOP\ncapture=manual");
  });

  it("puts the API server's messages and conflicts beside the entry's fields", () => {
    const g = entryGroup(shipping, "express");
    expect(entryFieldOf(shipping, g, "spec.shippingMethods[1].rate.amount")).toBe(
      "shipping-e-express-amount",
    );
    expect(entryFieldOf(shipping, g, '.spec.shippingMethods[name="express"].zones')).toBe(
      "shipping-e-express-zones",
    );
    expect(entryFieldOf(shipping, g, "spec.shippingMethods[1]")).toBe("shipping-e-express-carrier");
    expect(entryFieldOf(shipping, g, "spec.store.name")).toBe("");
    const conflict = new ApiError(409, "Conflict", "Apply failed with 1 conflict", {
      details: {
        causes: [
          {
            reason: "FieldManagerConflict",
            field: '.spec.shippingMethods[name="express"].carrier',
            message: 'conflict with "kubectl"',
          },
        ],
      },
    });
    const c = conflictsOf(g, conflict, (p) => entryFieldOf(shipping, g, p));
    expect(c?.fields["shipping-e-express-carrier"]?.[0]).toContain('"kubectl"');
  });

  it("removes the confirmed entry where it is now, only if it is still as confirmed", () => {
    expect(removalPatch(shipping, shop(), pickup)).toEqual([
      { op: "test", path: "/spec/shippingMethods/1", value: pickup },
      { op: "remove", path: "/spec/shippingMethods/1" },
    ]);
    expect(removalPatch(shipping, shop(), { ...pickup, name: "gone" })).toBeUndefined();
  });
});

const PAGE = "/dashboard/compute/platforms/scale/deploy?namespace=default&name=shop";
const LISTS = "/dashboard/compute/platforms/scale/default/shop/config";
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});
async function signedIn(grants: string[]) {
  const viewer = new FakeViewerApi({ username: "e", groups: [] }, new Set(grants));
  viewer.platforms.set("default/shop", shop());
  app = await createDashboard({ log: silentLogger(), viewerApi: () => viewer });
  const a = app;
  const { cookie, csrf, body } = await injectSignIn(a, "lists-token", PAGE);
  const post = (url: string, payload: Record<string, unknown>) =>
    a.inject({
      method: "POST",
      url,
      headers: { cookie, origin: "http://dash.test", host: "dash.test" },
      payload: { _csrf: csrf, ...payload },
    });
  return { viewer, a, cookie, body, post };
}

describe("dashboard: payment gateways and shipping methods", () => {
  it("adds by dry run then apply under the list's manager; an existing name is refused by the field", async () => {
    const { viewer, body, post } = await signedIn(["* * *"]);
    expect(body).toContain("Add shipping method");
    expect(body).toContain("Edit shipping method express");
    const taken = await post(`${LISTS}/shipping/entries`, {
      "shipping-add-name": "express",
      "shipping-add-carrier": "ups",
    });
    expect(taken.statusCode).toBe(409);
    expect(taken.body).toContain(
      'id="shipping-add-name-error">A shipping method named express exists already',
    );
    expect(viewer.calls.filter((c) => c.startsWith("apply"))).toEqual([]);
    const added = await post(`${LISTS}/payments/entries`, {
      "payments-add-name": "cards",
      "payments-add-type": "Card",
      "payments-add-provider": "stripe",
      "payments-add-mode": "Test",
      "payments-add-enabled": "on",
      "payments-add-credentials": "stripe-keys",
    });
    expect(added.statusCode).toBe(303);
    const cards =
      '{"paymentGateways":[{"name":"cards","type":"Card","provider":"stripe","mode":"Test","enabled":true,"credentialsSecretRef":{"name":"stripe-keys"}}]}';
    expect(viewer.calls.filter((c) => c.startsWith("apply"))).toEqual([
      `apply platform dry-run force default/shop cronscale-dashboard-payments ${cards}`,
      `apply platform default/shop cronscale-dashboard-payments ${cards}`,
    ]);
  });

  it("removes after confirmation by a JSON patch testing the entry as confirmed; a changed entry is shown again", async () => {
    const { viewer, a, cookie, post } = await signedIn(["* * *"]);
    const confirm = await a.inject({
      method: "GET",
      url: `${LISTS}/shipping/entries/express/remove`,
      headers: { cookie },
    });
    expect(confirm.body).toContain("Remove shipping method express?");
    expect(confirm.body).toContain("<code>kubectl (Apply)</code>");
    const seen = /name="seen" value="([^"]+)"/.exec(confirm.body)?.[1]?.replaceAll("&quot;", '"') ?? "";
    expect(JSON.parse(seen)).toEqual(express);
    // Changed meanwhile: the test fails, nothing is removed, the confirmation shows it as it is.
    const changed = JSON.stringify({ ...express, carrier: "ups" });
    const refused = await post(`${LISTS}/shipping/entries/express/remove`, { seen: changed });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain("changed since you confirmed");
    expect(viewer.platforms.get("default/shop")?.spec.shippingMethods?.length).toBe(2);
    const removed = await post(`${LISTS}/shipping/entries/express/remove`, { seen });
    expect(removed.statusCode).toBe(303);
    expect(viewer.calls.at(-1)).toBe(
      `json-patch platform default/shop cronscale-dashboard-shipping ${JSON.stringify(removalPatch(shipping, shop(), express))}`,
    );
    expect(viewer.platforms.get("default/shop")?.spec.shippingMethods?.map((m) => m.name)).toEqual([
      "pickup",
    ]);
  });

  it("a viewer who may not patch gets no list forms or Remove; a forged removal is the API server's 403", async () => {
    const { viewer, body, post } = await signedIn([
      "get scaleplatforms default",
      "list scaleplatforms default",
    ]);
    expect(body).toContain('data-entry="express"');
    expect(body).not.toContain("Add shipping method");
    expect(body).not.toContain("Remove…");
    const forged = await post(`${LISTS}/shipping/entries/express/remove`, { seen: JSON.stringify(express) });
    expect(forged.statusCode).toBe(403);
    expect(viewer.platforms.get("default/shop")?.spec.shippingMethods?.length).toBe(2);
  });
});
