import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.ts";

describe("loadConfig", () => {
  it("has working defaults", () => {
    const c = loadConfig([], {});
    expect(c).toMatchObject({
      namespace: "",
      httpPort: 8080,
      logLevel: "info",
      workers: 2,
      kubeRequestTimeoutSeconds: 30,
      leaderElection: {
        enabled: false,
        name: "cronscale-leader",
        namespace: "default",
        leaseDurationSeconds: 15,
      },
      controllers: {
        scheduledTask: { successfulJobsHistoryLimit: 3, images: { python: "" } },
        taskExecution: { retentionDays: 7 },
      },
    });
    expect(c.leaderElection.identity).toMatch(/_\d+$/);
  });

  it("reads nested settings from env and lets flags win", () => {
    const c = loadConfig(["--namespace", "flag-ns", "--controllers.scheduled-task.images.python=py:2"], {
      CRONSCALE_NAMESPACE: "env-ns",
      CRONSCALE_LEADER_ELECTION__ENABLED: "true",
      CRONSCALE_LEADER_ELECTION__LEASE_DURATION_SECONDS: "30",
      CRONSCALE_CONTROLLERS__SCHEDULED_TASK__IMAGES__PYTHON: "py:1",
    });
    expect(c.namespace).toBe("flag-ns");
    expect(c.leaderElection).toMatchObject({ enabled: true, leaseDurationSeconds: 30, namespace: "flag-ns" });
    expect(c.controllers.scheduledTask.images.python).toBe("py:2");
  });

  it("reads the Kubernetes request timeout", () => {
    expect(loadConfig([], { CRONSCALE_KUBE_REQUEST_TIMEOUT_SECONDS: "5" }).kubeRequestTimeoutSeconds).toBe(5);
    expect(() => loadConfig(["--kube-request-timeout-seconds=0"], {})).toThrow(/kubeRequestTimeoutSeconds/);
  });

  it("understands controller-runtime style aliases and bare boolean flags", () => {
    const c = loadConfig(["--leader-elect", "--metrics-port=9090", "--leader-election-id", "x"], {});
    expect(c.leaderElection.enabled).toBe(true);
    expect(c.leaderElection.name).toBe("x");
    expect(c.httpPort).toBe(9090);
  });

  it("takes identity and lease namespace from the downward API", () => {
    const c = loadConfig([], { POD_NAME: "op-abc", POD_NAMESPACE: "cronscale-system" });
    expect(c.leaderElection).toMatchObject({ identity: "op-abc", namespace: "cronscale-system" });
  });

  it("fails with a readable message on bad values", () => {
    expect(() => loadConfig(["--workers=0"], {})).toThrow(/workers/);
    expect(() => loadConfig(["--log-level=loud"], {})).toThrow(/logLevel/);
    expect(() => loadConfig([], { CRONSCALE_LEADER_ELECTION__ENABLED: "maybe" })).toThrow(
      /leaderElection.enabled/,
    );
  });
});
