import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Manager } from "../../../src/runtime/manager.ts";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import {
  type HttpSink,
  type SmtpSink,
  startHttpSink,
  startSmtpSink,
} from "../../support/notification-sinks.ts";
import { skipReason } from "../addons/support.ts";
import { applyPlatform, getObj, waitPhase } from "../scaleplatform/helpers.ts";
import { installPlatformCrd, usePlatformOperator } from "../scaleplatform/operator.ts";
import {
  createSigningSecret,
  notifications,
  SIGNING_SECRET,
  startNotifier,
  testNotificationsConfig,
  waitItems,
  waitNotificationCrd,
} from "./support.ts";

// A platform deployed for real (database, app, Ingress, certificate) on the local cluster with
// the platform add-ons; nobody is named in spec.notifications, so the completion email goes to
// the store's contact address, through an SMTP server this test runs on loopback. Then its app is
// made unhealthy for real, whatever image it runs: the health endpoint answers 2xx only while the
// app's database answers (the contract the operator's check relies on), so the database is told
// to refuse the app's connections, and later to take them again.

/** Makes the platform's database refuse (or take again) connections to the app's database. */
async function appDatabase(namespace: string, platform: string, open: boolean): Promise<void> {
  const sql = open
    ? ['ALTER DATABASE "$POSTGRES_DB" ALLOW_CONNECTIONS true']
    : [
        'ALTER DATABASE "$POSTGRES_DB" ALLOW_CONNECTIONS false',
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '$POSTGRES_DB'",
      ];
  const script = `PGPASSWORD="$POSTGRES_PASSWORD" psql -h 127.0.0.1 -U "$POSTGRES_USER" -d postgres -v ON_ERROR_STOP=1 ${sql.map((q) => `-c "${q.replaceAll('"', '\\"')}"`).join(" ")}`;
  const r = await kubectl(["exec", `${platform}-db-0`, "-c", "postgres", "--", "sh", "-c", script], {
    namespace,
  });
  if (r.code !== 0) throw new Error(`psql in ${platform}-db-0: ${r.stderr}`);
}

const reason = await skipReason("dns", "storage", "ingress");

describe.skipIf(reason)("platform notifications", () => {
  const ns = useNamespace("notify-splat", { "pod-security.kubernetes.io/enforce": "restricted" });
  usePlatformOperator(ns);
  let smtp: SmtpSink;
  let http: HttpSink;
  let notifier: Manager;

  beforeAll(async () => {
    await waitNotificationCrd();
    smtp = await startSmtpSink();
    http = await startHttpSink(SIGNING_SECRET);
    await createSigningSecret(ns.name);
    notifier = await startNotifier(ns.name, testNotificationsConfig(ns.name, smtp.port));
  }, 120_000);
  afterAll(async () => {
    await notifier?.stop();
    await smtp?.close();
    await http?.close();
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

  it("an app made unhealthy sends one alert and one recovery with the downtime; a second outage within foldMinutes sends nothing at once", async () => {
    const health = () =>
      notifications(ns.name).then((l) => l.filter((n) => n.spec.event.startsWith("Health")));
    const patch = {
      spec: {
        notifications: {
          email: ["ops@boutique.test"],
          webhooks: [`${http.url}/hook`],
          events: ["HealthCheckFailing", "HealthCheckRecovered"],
          foldMinutes: 60,
        },
      },
    };
    const r = await kubectl(
      ["patch", "scaleplatform", "boutique", "--type=merge", "-p", JSON.stringify(patch)],
      {
        namespace: ns.name,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const mails = smtp.mails.length;

    await appDatabase(ns.name, "boutique", false);
    const downAt = Date.now();
    await waitItems(smtp.mails, (m) => m.length >= mails + 1, "health alert email", 90_000);
    const alertMs = Date.now() - downAt;
    await new Promise((r2) => setTimeout(r2, 10_000));
    await appDatabase(ns.name, "boutique", true);
    const upAt = Date.now();
    await waitItems(smtp.mails, (m) => m.length >= mails + 2, "recovery email", 120_000);
    const recoveryMs = Date.now() - upAt;
    const [alert, recovery] = smtp.mails.slice(mails);
    expect(alert?.subject).toBe(`Platform ${ns.name}/boutique is failing its health check`);
    expect(alert?.to).toEqual(["ops@boutique.test"]);
    expect(recovery?.subject).toBe(`Platform ${ns.name}/boutique is healthy again`);
    // The webhook carries the same two messages, signed; the downtime is the outage as the
    // operator's checks saw it (within a check interval or two of what the test did).
    await waitItems(
      http.posts,
      (p) => p.filter((x) => x.status === 200).length >= 2,
      "health webhooks",
      30_000,
    );
    expect(http.posts.every((p) => p.verified)).toBe(true);
    const data = http.posts.map((p) => JSON.parse(p.body).data as Record<string, string>);
    expect(data.map((d) => d.event)).toEqual(["HealthCheckFailing", "HealthCheckRecovered"]);
    const downtime = Number(data[1]?.downtimeSeconds);
    const measured = (upAt - downAt) / 1000;
    expect(downtime).toBeGreaterThanOrEqual(measured - 12);
    expect(downtime).toBeLessThanOrEqual(measured + 30);
    expect(recovery?.text).toMatch(/after (\d+ min )?\d+ s of downtime/);

    // A second outage within foldMinutes of the alert: recorded, not sent.
    await appDatabase(ns.name, "boutique", false);
    await waitFor(async () => ((await health()).length >= 3 ? true : undefined), {
      timeoutMs: 90_000,
      intervalMs: 1000,
      what: "second outage recorded",
    });
    await appDatabase(ns.name, "boutique", true);
    const notes = await waitFor(async () => ((await health()).length >= 4 ? health() : undefined), {
      timeoutMs: 120_000,
      intervalMs: 1000,
      what: "second recovery recorded",
    });
    await new Promise((r2) => setTimeout(r2, 3000));
    expect(smtp.mails).toHaveLength(mails + 2);
    expect(http.posts).toHaveLength(2);
    const folded = notes.filter((n) => n.spec.details?.folded === "true");
    expect(folded.map((n) => n.spec.event).sort()).toEqual(["HealthCheckFailing", "HealthCheckRecovered"]);
    expect(folded.every((n) => Object.keys(n.spec.recipients).length === 0)).toBe(true);
    process.stderr.write(
      `notifications platform health: alert ${alertMs / 1000} s after the database refused the app, recovery ${recoveryMs / 1000} s after it took it again, downtime reported ${downtime} s (test measured ${measured} s)\n`,
    );
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
