import { describe, expect, it } from "vitest";
import { API_VERSION } from "../api/v1alpha1/kind.ts";
import type { Notification } from "../api/v1alpha1/notification.ts";
import {
  type ScalePlatform,
  type ScalePlatformStatus,
  scalePlatformSpecSchema,
} from "../api/v1alpha1/scaleplatform.ts";
import { decidePlatform, formatDuration } from "./platform.ts";
import { asNotes } from "./testing.ts";

const MAX_AGE = 60;

function platform(spec: Record<string, unknown>, status: ScalePlatformStatus, generation = 1): ScalePlatform {
  return {
    apiVersion: API_VERSION,
    kind: "ScalePlatform",
    metadata: { name: "shop", namespace: "ns", uid: "uid-shop", generation },
    spec: scalePlatformSpecSchema.parse({
      plan: "Standard",
      domains: { platform: "shop.example.test" },
      ...spec,
    }),
    status,
  };
}

const running = (over: Partial<ScalePlatformStatus> = {}): ScalePlatformStatus => ({
  observedGeneration: 1,
  phase: "Running",
  deployedTime: "2026-01-01T10:00:00Z",
  urls: {
    platform: "https://shop.example.test",
    admin: "https://admin.shop.example.test",
    api: "https://api.shop.example.test",
  },
  credentialsSecretName: "shop-credentials",
  monthlyCostEstimate: { amount: "199.00", currency: "USD" },
  resources: { cpu: "4", memory: "8Gi", storage: "100Gi", minReplicas: 1, maxReplicas: 3 },
  healthCheck: { status: "Healthy", lastTransitionTime: "2026-01-01T10:00:00Z" },
  ...over,
});

const store = { name: "Shop", contactEmail: "owner@shop.example.test" };

function step(p: ScalePlatform, notes: Notification[], now: string): Notification[] {
  const made = asNotes(p, decidePlatform(p, notes, new Date(now), MAX_AGE).decided, now);
  notes.push(...made);
  return made;
}

describe("decidePlatform", () => {
  it("emails the completed deployment to the store's contact when nothing else is set", () => {
    const p = platform({ store }, running());
    const notes: Notification[] = [];
    const made = step(p, notes, "2026-01-01T10:00:05Z");
    expect(made).toHaveLength(1);
    const n = made[0] as Notification;
    expect(n.spec.event).toBe("DeploymentCompleted");
    expect(n.spec.recipients).toEqual({ email: ["owner@shop.example.test"] });
    expect(n.spec.text).toContain("Platform: shop (namespace ns)");
    expect(n.spec.text).toContain("Plan: Standard");
    expect(n.spec.text).toContain("https://admin.shop.example.test");
    expect(n.spec.text).toContain("Estimated cost: 199.00 USD per month");
    expect(n.spec.text).toContain("shop-credentials");
    expect(step(p, notes, "2026-01-01T10:01:00Z")).toEqual([]);
  });

  it("tells nobody about health without recipients (the contact only hears of the deployment)", () => {
    const p = platform(
      { store },
      running({ healthCheck: { status: "Unhealthy", lastTransitionTime: "2026-01-01T10:05:00Z" } }),
    );
    expect(step(p, [], "2026-01-01T10:05:05Z").map((n) => n.spec.event)).toEqual(["DeploymentCompleted"]);
  });

  it("does not announce a deployment older than maxAge", () => {
    const p = platform({ store }, running());
    expect(step(p, [], "2026-01-01T12:00:00Z")).toEqual([]);
  });

  it("announces a failing health check once and its recovery once, with the downtime", () => {
    const spec = {
      store,
      notifications: {
        webhooks: ["http://hook.test/x"],
        events: ["HealthCheckFailing", "HealthCheckRecovered"],
      },
    };
    const notes: Notification[] = [];
    const down = platform(
      spec,
      running({
        healthCheck: { status: "Unhealthy", lastTransitionTime: "2026-01-01T10:10:00Z", message: "HTTP 503" },
      }),
    );
    const failing = step(down, notes, "2026-01-01T10:10:01Z");
    expect(failing.map((n) => n.spec.event)).toEqual(["HealthCheckFailing"]);
    expect(failing[0]?.spec.text).toContain("HTTP 503");
    expect(step(down, notes, "2026-01-01T10:11:00Z")).toEqual([]);
    const up = platform(
      spec,
      running({ healthCheck: { status: "Healthy", lastTransitionTime: "2026-01-01T10:14:05Z" } }),
    );
    const rec = step(up, notes, "2026-01-01T10:14:06Z");
    expect(rec.map((n) => n.spec.event)).toEqual(["HealthCheckRecovered"]);
    expect(rec[0]?.spec.details?.downtimeSeconds).toBe("245");
    expect(rec[0]?.spec.text).toContain("after 4 min 05 s of downtime");
    expect(step(up, notes, "2026-01-01T10:20:00Z")).toEqual([]);
  });

  it("folds a flapping health check: outages within foldMinutes of the alert are recorded, then reported as one message", () => {
    const spec = { store, notifications: { webhooks: ["http://hook.test/x"], foldMinutes: 30 } };
    const notes: Notification[] = [];
    const at = (status: "Healthy" | "Unhealthy", t: string) =>
      platform(
        spec,
        running({ healthCheck: { status, lastTransitionTime: `2026-01-01T${t}Z`, message: "HTTP 503" } }),
      );
    const events = (made: Notification[]) =>
      made.map((n) => `${n.spec.event}${n.spec.details?.folded ? " (folded)" : ""}`);
    step(at("Healthy", "10:00:00"), notes, "2026-01-01T10:00:01Z"); // the deployment
    expect(events(step(at("Unhealthy", "10:10:00"), notes, "2026-01-01T10:10:01Z"))).toEqual([
      "HealthCheckFailing",
    ]);
    expect(events(step(at("Healthy", "10:11:00"), notes, "2026-01-01T10:11:01Z"))).toEqual([
      "HealthCheckRecovered",
    ]);
    // Three more outages inside the interval: recorded without recipients, nothing sent.
    for (const [down, up] of [
      ["10:12:00", "10:12:30"],
      ["10:15:00", "10:16:00"],
      ["10:20:00", "10:20:15"],
    ] as const) {
      const d = decidePlatform(at("Unhealthy", down), notes, new Date(`2026-01-01T${down}Z`), MAX_AGE);
      expect(d.requeueAfterMs).toBe(Date.parse("2026-01-01T10:40:01Z") - Date.parse(`2026-01-01T${down}Z`));
      const made = step(at("Unhealthy", down), notes, `2026-01-01T${down}Z`);
      expect(events(made)).toEqual(["HealthCheckFailing (folded)"]);
      expect(made[0]?.spec.recipients).toEqual({});
      expect(events(step(at("Healthy", up), notes, `2026-01-01T${up}Z`))).toEqual([
        "HealthCheckRecovered (folded)",
      ]);
    }
    expect(step(at("Healthy", "10:20:15"), notes, "2026-01-01T10:30:00Z")).toEqual([]);
    // The interval ends: one message with the count and the total downtime (30 + 60 + 15 s).
    const [report] = step(at("Healthy", "10:20:15"), notes, "2026-01-01T10:40:01Z");
    expect(report?.spec.event).toBe("HealthCheckRecovered");
    expect(report?.spec.count).toBe(3);
    expect(report?.spec.details).toMatchObject({ outages: "3", downtimeSeconds: "105" });
    expect(report?.spec.subject).toContain("had 3 more health check outages");
    expect(report?.spec.recipients).toEqual({ webhooks: ["http://hook.test/x"] });
    expect(step(at("Healthy", "10:20:15"), notes, "2026-01-01T10:50:00Z")).toEqual([]);
    // The next outage starts a new interval from that report; one still going at its end is
    // reported as failing, and its recovery is sent.
    expect(events(step(at("Unhealthy", "10:45:00"), notes, "2026-01-01T10:45:00Z"))).toEqual([
      "HealthCheckFailing (folded)",
    ]);
    const [still] = step(at("Unhealthy", "10:45:00"), notes, "2026-01-01T11:10:01Z");
    expect(still?.spec.event).toBe("HealthCheckFailing");
    expect(still?.spec.subject).toContain("failing its health check again");
    expect(still?.spec.details?.folded).toBeUndefined();
    const [rec] = step(at("Healthy", "11:15:00"), notes, "2026-01-01T11:15:01Z");
    expect(rec?.spec.event).toBe("HealthCheckRecovered");
    expect(rec?.spec.details?.downtimeSeconds).toBe("1800");
    expect(rec?.spec.recipients).toEqual({ webhooks: ["http://hook.test/x"] });
    // After the interval, an outage is announced at once again.
    expect(events(step(at("Unhealthy", "12:00:00"), notes, "2026-01-01T12:00:01Z"))).toEqual([
      "HealthCheckFailing",
    ]);
    const sent = notes
      .filter((n) => n.spec.event.startsWith("Health") && !n.spec.details?.folded)
      .map((n) => n.spec.event);
    expect(sent).toEqual([
      "HealthCheckFailing",
      "HealthCheckRecovered",
      "HealthCheckRecovered",
      "HealthCheckFailing",
      "HealthCheckRecovered",
      "HealthCheckFailing",
    ]);
  });

  it("announces a plan upgrade once the new generation runs", () => {
    const spec = { store, notifications: { email: ["ops@example.test"] } };
    const notes: Notification[] = [];
    step(platform(spec, running()), notes, "2026-01-01T10:00:05Z");
    const upgrading = platform({ ...spec, plan: "Professional" }, running({ phase: "Updating" }), 2);
    expect(step(upgrading, notes, "2026-01-01T10:20:00Z")).toEqual([]);
    const done = platform({ ...spec, plan: "Professional" }, running({ observedGeneration: 2 }), 2);
    const made = step(done, notes, "2026-01-01T10:25:00Z");
    expect(made.map((n) => n.spec.event)).toEqual(["PlanUpgradeCompleted"]);
    expect(made[0]?.spec.text).toContain("from plan Standard to Professional");
    expect(step(done, notes, "2026-01-01T10:26:00Z")).toEqual([]);
  });

  it("respects the events list", () => {
    const p = platform(
      { store, notifications: { email: ["ops@example.test"], events: ["HealthCheckFailing"] } },
      running(),
    );
    expect(step(p, [], "2026-01-01T10:00:05Z")).toEqual([]);
  });
});

describe("backup and restore messages", () => {
  const spec = {
    store,
    notifications: {
      webhooks: ["http://hook.test/x"],
      events: ["BackupFailed", "BackupRecovered", "RestoreCompleted"],
    },
  };
  const healthy = (status: "True" | "False", reason: string, at: string) =>
    running({
      conditions: [
        { type: "BackupHealthy", status, reason, message: `${reason} message`, lastTransitionTime: at },
      ],
      backup: {
        lastSuccessfulBackup: {
          label: "20260101-110000F",
          type: "full",
          startTime: "2026-01-01T11:00:00Z",
          stopTime: "2026-01-01T11:01:00Z",
        },
      },
    });

  it("announces a backup failure once per flip and its recovery once", () => {
    const notes: Notification[] = [];
    const broken = platform(spec, healthy("False", "RepositoryUnreachable", "2026-01-01T10:30:00Z"));
    const failed = step(broken, notes, "2026-01-01T10:30:05Z");
    expect(failed.map((n) => n.spec.event)).toEqual(["BackupFailed"]);
    expect(failed[0]?.spec.text).toContain("RepositoryUnreachable");
    // Another failure reason without a flip (lastTransitionTime unchanged): no second alert.
    const still = platform(spec, healthy("False", "LastBackupFailed", "2026-01-01T10:30:00Z"));
    expect(step(still, notes, "2026-01-01T10:45:00Z")).toEqual([]);
    const fixed = platform(spec, healthy("True", "BackupsCurrent", "2026-01-01T11:01:00Z"));
    const rec = step(fixed, notes, "2026-01-01T11:01:05Z");
    expect(rec.map((n) => n.spec.event)).toEqual(["BackupRecovered"]);
    expect(rec[0]?.spec.text).toContain("20260101-110000F");
    expect(step(fixed, notes, "2026-01-01T11:20:00Z")).toEqual([]);
  });

  it("no alert for a platform without backups, nor before the first backup", () => {
    const notes: Notification[] = [];
    for (const reason of ["NotConfigured", "Disabled", "NoBackupYet"])
      expect(
        step(platform(spec, healthy("False", reason, "2026-01-01T10:30:00Z")), notes, "2026-01-01T10:31:00Z"),
      ).toEqual([]);
    // A healthy platform never failed: nothing to recover from.
    expect(
      step(
        platform(spec, healthy("True", "BackupsCurrent", "2026-01-01T10:30:00Z")),
        notes,
        "2026-01-01T10:31:00Z",
      ),
    ).toEqual([]);
  });

  it("announces a succeeded restore once, with its target and downtime; not a failed one", () => {
    const notes: Notification[] = [];
    const p = platform(spec, running());
    const restore = (name: string, phase: "Succeeded" | "Failed") => ({
      apiVersion: API_VERSION,
      kind: "ScalePlatformRestore",
      metadata: { name, namespace: "ns", uid: `uid-${name}` },
      spec: { platformName: "shop", pvcRetention: "Retain", cutoverTimeoutSeconds: 300 },
      status: {
        phase,
        target: "2026-01-01T10:00:00Z",
        completionTime: "2026-01-01T10:40:00Z",
        downtimeSeconds: 12,
      },
    });
    const rs = [restore("back", "Succeeded"), restore("broken", "Failed")] as unknown as Parameters<
      typeof decidePlatform
    >[4];
    const at = (now: string) => {
      const made = asNotes(p, decidePlatform(p, notes, new Date(now), MAX_AGE, rs).decided, now);
      notes.push(...made);
      return made;
    };
    const done = at("2026-01-01T10:40:02Z");
    expect(done.map((n) => n.spec.event)).toEqual(["RestoreCompleted"]);
    expect(done[0]?.spec.text).toContain("12 s of downtime");
    expect(done[0]?.spec.details?.restore).toBe("back");
    expect(at("2026-01-01T10:45:00Z")).toEqual([]);
  });
});

describe("formatDuration", () => {
  it("reads as seconds, minutes or hours", () => {
    expect([formatDuration(42), formatDuration(245), formatDuration(7380)]).toEqual([
      "42 s",
      "4 min 05 s",
      "2 h 03 min",
    ]);
  });
});
