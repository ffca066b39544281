import { describe, expect, it } from "vitest";
import type { ScalePlatformSpec } from "../../api/v1alpha1/scaleplatform.ts";
import type { Condition } from "../../runtime/conditions.ts";
import { platformInputs } from "./desired/common.ts";
import { planFeatures } from "./planfeatures.ts";
import { makePlatform, TEST_CONFIG } from "./testing.ts";

const inp = (spec: Partial<ScalePlatformSpec> = {}) => {
  const p = makePlatform("shop", spec);
  return platformInputs(p, p.spec, TEST_CONFIG, { certManager: true, customMetrics: false });
};
const cond = (type: string, status: "True" | "False" | "Unknown", reason: string): Condition => ({
  type,
  status,
  reason,
  message: "",
  lastTransitionTime: "2026-01-01T00:00:00Z",
});

const ALL_IN_FORCE = [
  cond("TLSReady", "True", "CertificateReady"),
  cond("BackupHealthy", "True", "BackupsCurrent"),
  cond("EdgeProtected", "True", "TraefikMiddlewares"),
  cond("Healthy", "False", "HealthCheckFailed"),
  cond("AutoscalingActive", "True", "ResourceMetricsOnly"),
];

describe("status.features", () => {
  it("lists every included feature whose condition shows it in force, then the plan's figures", () => {
    expect(planFeatures(inp(), ALL_IN_FORCE)).toEqual([
      "Automatic SSL certificates",
      "Daily backups",
      "DDoS protection",
      "24/7 monitoring",
      "Automatic scaling",
      "Email support",
      "Up to 10,000 products",
      "1,000 concurrent users",
    ]);
  });

  it("leaves out what is not in force: no issued certificate, backups off, an unprotected edge, no checks yet, stopped", () => {
    const none = [
      cond("TLSReady", "True", "UsingExistingSecret"),
      cond("BackupHealthy", "False", "Disabled"),
      cond("EdgeProtected", "False", "UnsupportedIngressClass"),
      cond("Healthy", "Unknown", "HealthCheckPending"),
      cond("AutoscalingActive", "False", "Stopped"),
    ];
    expect(planFeatures(inp(), none).slice(0, 1)).toEqual(["Email support"]);
    expect(planFeatures(inp(), [])[0]).toBe("Email support");
  });

  it("a stopped platform's backups are not in force although BackupHealthy is True", () => {
    const stopped = [cond("BackupHealthy", "True", "PlatformStopped")];
    expect(planFeatures(inp(), stopped)).not.toContain("Daily backups");
  });
});
