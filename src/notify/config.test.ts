import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";

describe("notifications configuration", () => {
  it("is off until the administrator names a server, and parses from CRONSCALE_NOTIFICATIONS__*", () => {
    expect(loadConfig([], {}).notifications.email.host).toBe("");
    const n = loadConfig([], {
      CRONSCALE_NOTIFICATIONS__EMAIL__HOST: "127.0.0.1",
      CRONSCALE_NOTIFICATIONS__EMAIL__PORT: "2525",
      CRONSCALE_NOTIFICATIONS__EMAIL__SECURITY: "None",
      CRONSCALE_NOTIFICATIONS__SIGNING_SECRET__NAME: "signing",
      CRONSCALE_NOTIFICATIONS__RETRY__BASE_SECONDS: "2",
    }).notifications;
    expect(n.email).toMatchObject({
      host: "127.0.0.1",
      port: 2525,
      security: "None",
      rejectUnauthorized: true,
    });
    expect(n.signingSecret).toEqual({ name: "signing", key: "secret" });
    expect(n.retry).toEqual({ baseSeconds: 2, maxSeconds: 1800, giveUpHours: 24, failureThreshold: 3 });
  });

  it("refuses an unknown security mode, naming the setting", () => {
    expect(() => loadConfig([], { CRONSCALE_NOTIFICATIONS__EMAIL__SECURITY: "SSL" })).toThrow(
      /notifications\.email\.security/,
    );
  });
});
