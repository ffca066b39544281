import { describe, expect, it } from "vitest";
import { loadConfig } from "../../config.ts";
import { DEFAULT_PLATFORM_CONFIG, platformControllerConfigFrom } from "./config.ts";

describe("ScalePlatform controller config", () => {
  it("defaults: 10 % requests, Service health checks, Retain, USD price table", () => {
    expect(DEFAULT_PLATFORM_CONFIG.requestFraction).toBe(0.1);
    expect(DEFAULT_PLATFORM_CONFIG.healthCheck.target).toBe("service");
    expect(DEFAULT_PLATFORM_CONFIG.pvcRetention).toBe("Retain");
    expect(DEFAULT_PLATFORM_CONFIG.prices).toMatchObject({ currency: "USD", Standard: 199 });
  });

  it("reads the operator config's controllers.scalePlatform section from env and flags", () => {
    const cfg = loadConfig(
      [
        "--controllers.scale-platform.health-check.target=pod",
        "--controllers.scale-platform.request-fraction=1",
      ],
      {
        CRONSCALE_CONTROLLERS__SCALE_PLATFORM__IMAGES__PLATFORM: "cronscale.local/commerce:abc",
        CRONSCALE_CONTROLLERS__SCALE_PLATFORM__REQUIRE_INGRESS_ADDRESS: "false",
        CRONSCALE_CONTROLLERS__SCALE_PLATFORM__WEBHOOK_ALLOWED_CIDRS: "10.77.0.0/24, fd00::/8",
      },
    );
    const c = platformControllerConfigFrom(cfg.controllers.scalePlatform);
    expect(c.healthCheck.target).toBe("pod");
    expect(c.requestFraction).toBe(1);
    expect(c.images.platform).toBe("cronscale.local/commerce:abc");
    expect(c.requireIngressAddress).toBe(false);
    expect(c.webhookAllowedCidrs).toEqual(["10.77.0.0/24", "fd00::/8"]);
  });

  it("takes the installation's price table from env, the plans' names in any case", () => {
    const cfg = loadConfig([], {
      CRONSCALE_CONTROLLERS__SCALE_PLATFORM__PRICES__CURRENCY: "EUR",
      CRONSCALE_CONTROLLERS__SCALE_PLATFORM__PRICES__STANDARD: "149",
      CRONSCALE_CONTROLLERS__SCALE_PLATFORM__PRICES__PER_GIB_MEMORY: "5",
    });
    const c = platformControllerConfigFrom(cfg.controllers.scalePlatform);
    expect(c.prices).toMatchObject({ currency: "EUR", Standard: 149, Professional: 449, perGiBMemory: 5 });
  });

  it("probes the commerce service: readiness /readyz, liveness /healthz, no webhook CIDRs allowed", () => {
    expect(DEFAULT_PLATFORM_CONFIG.images.platform).toMatch(/commerce/);
    expect(DEFAULT_PLATFORM_CONFIG.healthPath).toBe("/readyz");
    expect(DEFAULT_PLATFORM_CONFIG.livenessPath).toBe("/healthz");
    expect(DEFAULT_PLATFORM_CONFIG.webhookAllowedCidrs).toEqual([]);
  });

  it("refuses a webhook CIDR that is not one, naming the key", () => {
    expect(() => platformControllerConfigFrom({ webhookAllowedCidrs: "10.0.0.0/8,example.com" })).toThrow(
      /controllers\.scalePlatform\.webhookAllowedCidrs\.1/,
    );
  });

  it("refuses an invalid value naming the key", () => {
    expect(() => platformControllerConfigFrom({ requestFraction: "2" })).toThrow(
      /controllers\.scalePlatform\.requestFraction/,
    );
  });
});
