import { beforeAll, describe, expect, it } from "vitest";
import { kubectl, useNamespace } from "../../support/cluster.ts";
import { installPlatformCrd } from "../scaleplatform/operator.ts";

// What the API server itself refuses in spec.notifications (CEL and OpenAPI rules of the CRDs).

const ns = useNamespace("notify-adm");

beforeAll(async () => {
  await installPlatformCrd();
}, 120_000);

function platform(plan: string, notifications: Record<string, unknown>) {
  const spec: Record<string, unknown> = { plan, domains: { platform: "shop.example.test" }, notifications };
  if (plan === "Custom") spec.resources = { cpu: "24", memory: "48Gi", storage: "1Ti" };
  return JSON.stringify({
    apiVersion: "cronscale.io/v1alpha1",
    kind: "ScalePlatform",
    metadata: { name: "shop" },
    spec,
  });
}

const dryRun = (input: string) =>
  kubectl(["apply", "--dry-run=server", "-f", "-"], { namespace: ns.name, input, allowFailure: true });

describe("spec.notifications admission", () => {
  it("refuses SMS on a Standard platform, naming the field and the plan", async () => {
    const r = await dryRun(platform("Standard", { sms: ["+4915112345678"] }));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("spec.notifications.sms");
    expect(r.stderr).toContain(
      "SMS notifications need plan Enterprise or Custom; this platform is on plan Standard",
    );
  });

  it("accepts SMS on Enterprise and Custom, and email/webhook/chat on every plan", async () => {
    for (const plan of ["Enterprise", "Custom"]) {
      const r = await dryRun(platform(plan, { sms: ["+4915112345678"] }));
      expect(r.code, r.stderr).toBe(0);
    }
    const r = await dryRun(
      platform("Standard", {
        email: ["ops@example.test"],
        webhooks: ["https://hooks.example.test/x"],
        chat: ["https://chat.example.test/hooks/abc"],
      }),
    );
    expect(r.code, r.stderr).toBe(0);
  });

  it("refuses a phone number that is not E.164 and an unknown event", async () => {
    const bad = await dryRun(platform("Enterprise", { sms: ["0151 1234567"], events: ["Sometimes"] }));
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("spec.notifications.sms[0]");
    expect(bad.stderr).toContain("spec.notifications.events[0]");
  });
});
