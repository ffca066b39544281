import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_PLATFORM_CONFIG } from "../../../src/controllers/scaleplatform/config.ts";
import type { KubeObject } from "../../../src/runtime/types.ts";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { applyPlatform, getObj, getPlatform } from "./helpers.ts";
import { installPlatformCrd, type PlatformOperator, startPlatformOperator } from "./operator.ts";

// One host, one platform, on the real API server with the real controller: the second platform
// claiming a host is held (no Ingress of its own) with a condition naming the first, and takes
// the host once the first is deleted. Only the first children matter, so no add-on is needed:
// the pods never run (a local image name, never pulled; nothing leaves the machine).

const ns = useNamespace("splat-hosts");
const HOST = "same.platform.test";
let op: PlatformOperator | undefined;

beforeAll(async () => {
  await installPlatformCrd();
  op = await startPlatformOperator(ns.name, {
    ...DEFAULT_PLATFORM_CONFIG,
    images: {
      platform: "cronscale.local/absent:0",
      database: "cronscale.local/absent:0",
      backupRunner: "cronscale.local/absent:0",
    },
    imagePullPolicy: "Never",
    healthCheck: { ...DEFAULT_PLATFORM_CONFIG.healthCheck, intervalSeconds: 5 },
  });
}, 120_000);
afterAll(async () => {
  await op?.stop();
});

const readyOf = async (name: string) =>
  (await getPlatform(ns.name, name)).status?.conditions?.find((c) => c.type === "Ready");
const ingressHosts = async (name: string) =>
  (
    (await getObj<KubeObject>(ns.name, "ingress", name))?.spec as { rules?: { host: string }[] } | undefined
  )?.rules?.map((r) => r.host);

describe("two platforms claiming one host", () => {
  it("holds the second with HostConflict naming the first, and lets it proceed once the host is free", async () => {
    expect(
      (await applyPlatform(ns.name, "first", { plan: "Standard", domains: { platform: HOST } })).code,
    ).toBe(0);
    await waitFor(async () => (await ingressHosts("first"))?.includes(HOST), {
      timeoutMs: 60_000,
      what: "the first platform's Ingress",
    });
    expect(
      (await applyPlatform(ns.name, "second", { plan: "Standard", domains: { platform: HOST } })).code,
    ).toBe(0);
    const held = await waitFor(
      async () => {
        const ready = await readyOf("second");
        return ready?.reason === "HostConflict" ? ready : undefined;
      },
      { timeoutMs: 60_000, what: "second platform held" },
    );
    expect(held.message).toContain(`host ${HOST} is served by ScalePlatform ${ns.name}/first`);
    expect((await getPlatform(ns.name, "second")).status?.phase).toBe("Failed");
    expect(await getObj(ns.name, "ingress", "second")).toBeUndefined();
    const events = await kubectl(
      ["get", "events", "--field-selector", "reason=HostConflict,involvedObject.name=second", "-o", "name"],
      { namespace: ns.name },
    );
    expect(events.stdout.trim()).not.toBe("");

    await kubectl(["delete", "scaleplatform", "first", "--wait=false"], { namespace: ns.name });
    await waitFor(async () => (await ingressHosts("second"))?.includes(HOST), {
      timeoutMs: 90_000,
      what: "the second platform's Ingress once the host is free",
    });
    // The status is written after the Ingress is applied: wait for it rather than race it.
    await waitFor(async () => ((await readyOf("second"))?.reason !== "HostConflict" ? true : undefined), {
      timeoutMs: 30_000,
      what: "the second platform's Ready condition without HostConflict",
    });
  }, 240_000);
});
