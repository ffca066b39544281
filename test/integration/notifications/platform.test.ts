import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Manager } from "../../../src/runtime/manager.ts";
import { kubectl, useNamespace } from "../../support/cluster.ts";
import { type SmtpSink, startSmtpSink } from "../../support/notification-sinks.ts";
import { skipReason } from "../addons/support.ts";
import { applyPlatform, getObj, waitPhase } from "../scaleplatform/helpers.ts";
import { installPlatformCrd, usePlatformOperator } from "../scaleplatform/operator.ts";
import {
  notifications,
  startNotifier,
  testNotificationsConfig,
  waitItems,
  waitNotificationCrd,
} from "./support.ts";

// A platform deployed for real (database, app, Ingress, certificate) on the local cluster with
// the platform add-ons; nobody is named in spec.notifications, so the completion email goes to
// the store's contact address, through an SMTP server this test runs on loopback.

const reason = await skipReason("dns", "storage", "ingress");

describe.skipIf(reason)("platform notifications", () => {
  const ns = useNamespace("notify-splat", { "pod-security.kubernetes.io/enforce": "restricted" });
  usePlatformOperator(ns);
  let smtp: SmtpSink;
  let notifier: Manager;

  beforeAll(async () => {
    await waitNotificationCrd();
    smtp = await startSmtpSink();
    notifier = await startNotifier(ns.name, testNotificationsConfig(ns.name, smtp.port));
  }, 120_000);
  afterAll(async () => {
    await notifier?.stop();
    await smtp?.close();
  });

  it("emails the completed deployment to the store contact: name, plan, URLs and cost estimate, no credentials", async () => {
    const t0 = Date.now();
    const r = await applyPlatform(ns.name, "boutique", {
      plan: "Standard",
      domains: { platform: "boutique.platform.test" },
      store: { name: "Boutique", contactEmail: "owner@boutique.test" },
    });
    expect(r.code, r.stderr).toBe(0);
    const p = await waitPhase(ns.name, "boutique", "Running", 420_000);
    await waitItems(smtp.mails, (m) => m.length >= 1, "deployment email", 60_000);
    process.stderr.write(
      `notifications platform: deployment email ${(Date.now() - t0) / 1000} s after apply\n`,
    );

    const mail = smtp.mails[0];
    expect(mail?.to).toEqual(["owner@boutique.test"]);
    expect(mail?.subject).toBe(`Platform ${ns.name}/boutique is deployed`);
    expect(mail?.text).toContain(`Platform: boutique (namespace ${ns.name})`);
    expect(mail?.text).toContain("Plan: Standard");
    expect(mail?.text).toContain(`Store: ${p.status?.urls?.platform}`);
    expect(mail?.text).toContain(`Admin: ${p.status?.urls?.admin}`);
    expect(mail?.text).toContain(`API: ${p.status?.urls?.api}`);
    const cost = p.status?.monthlyCostEstimate;
    expect(cost).toBeDefined();
    expect(mail?.text).toContain(`Estimated cost: ${cost?.amount} ${cost?.currency} per month`);
    // The credentials' place is named, never their values.
    const creds = await getObj<{ data: Record<string, string> }>(ns.name, "secret", "boutique-credentials");
    const values = Object.values(creds?.data ?? {}).map((b) => Buffer.from(b, "base64").toString("utf8"));
    expect(values.length).toBeGreaterThan(0);
    for (const v of values) if (v.length >= 8) expect(mail?.text).not.toContain(v);

    // Sent once: the platform's later status changes and health checks add nothing.
    await new Promise((r2) => setTimeout(r2, 5000));
    expect(smtp.mails).toHaveLength(1);
    expect((await notifications(ns.name)).map((n) => [n.spec.event, n.status?.phase])).toEqual([
      ["DeploymentCompleted", "Delivered"],
    ]);
  });
});

// The same decision without the add-ons: only the notification controllers run, and the test
// writes the status the platform controller would (through the status subresource), so the
// email path — status → Notification → SMTP — is exercised on any cluster.
describe("platform notifications from a status written by hand", () => {
  const ns = useNamespace("notify-status");
  let smtp: SmtpSink;
  let notifier: Manager;

  beforeAll(async () => {
    await installPlatformCrd();
    await waitNotificationCrd();
    smtp = await startSmtpSink();
    notifier = await startNotifier(ns.name, testNotificationsConfig(ns.name, smtp.port));
  }, 120_000);
  afterAll(async () => {
    await notifier?.stop();
    await smtp?.close();
  });

  it("mails the deployment summary to the store contact once the status says deployed", async () => {
    const r = await applyPlatform(ns.name, "kiosk", {
      plan: "Professional",
      domains: { platform: "kiosk.platform.test" },
      store: { name: "Kiosk", contactEmail: "owner@kiosk.test" },
    });
    expect(r.code, r.stderr).toBe(0);
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
    const status = {
      status: {
        phase: "Running",
        observedGeneration: 1,
        deployedTime: now,
        urls: {
          platform: "https://kiosk.platform.test/",
          admin: "https://admin.kiosk.platform.test/",
          api: "https://api.kiosk.platform.test/",
        },
        monthlyCostEstimate: { amount: "399.00", currency: "USD" },
        credentialsSecretName: "kiosk-credentials",
      },
    };
    await kubectl(
      [
        "patch",
        "scaleplatform",
        "kiosk",
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify(status),
      ],
      { namespace: ns.name },
    );
    await waitItems(smtp.mails, (m) => m.length >= 1, "deployment email", 30_000);
    const mail = smtp.mails[0];
    expect(mail?.to).toEqual(["owner@kiosk.test"]);
    expect(mail?.subject).toBe(`Platform ${ns.name}/kiosk is deployed`);
    for (const line of [
      "Plan: Professional",
      "Store: https://kiosk.platform.test/",
      "Admin: https://admin.kiosk.platform.test/",
      "API: https://api.kiosk.platform.test/",
      "Estimated cost: 399.00 USD per month",
    ])
      expect(mail?.text).toContain(line);
    // A later status change announces nothing more.
    await kubectl(
      [
        "patch",
        "scaleplatform",
        "kiosk",
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"stepSummary":"7/7"}}',
      ],
      { namespace: ns.name },
    );
    await new Promise((r2) => setTimeout(r2, 3000));
    expect(smtp.mails).toHaveLength(1);
  });
});
