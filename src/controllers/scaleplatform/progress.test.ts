import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../runtime/types.ts";
import { deriveSteps, type Observation, stepSummary } from "./progress.ts";

const pod = (hash: string, started = true): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p", annotations: { "cronscale.io/config-hash": hash } },
  status: { containerStatuses: [{ started }] },
});

function world(over: Partial<Observation> = {}): Observation {
  return {
    missing: [],
    statefulSet: { apiVersion: "apps/v1", kind: "StatefulSet", metadata: {}, status: { readyReplicas: 1 } },
    pvc: { apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: {}, status: { phase: "Bound" } },
    deployment: {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { generation: 2 },
      status: { observedGeneration: 2, replicas: 1, updatedReplicas: 1, availableReplicas: 1 },
    },
    appPods: [pod("h1")],
    configHash: "h1",
    ingress: {
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: {},
      status: { loadBalancer: { ingress: [{ ip: "127.0.0.1" }] } },
    },
    ingressClassExists: true,
    requireIngressAddress: true,
    tls: {
      kind: "certificate",
      certificate: {
        apiVersion: "cert-manager.io/v1",
        kind: "Certificate",
        metadata: {},
        status: { conditions: [{ type: "Ready", status: "True" }] },
      },
    },
    health: { ok: true, latencyMs: 1, url: "u", message: "ok" },
    healthAt: new Date("2026-01-01T00:01:00Z"),
    ...over,
  };
}
const t = (s: string) => new Date(`2026-01-01T00:${s}Z`);

describe("deriveSteps", () => {
  it("all seven Done when the world is ready", () => {
    const steps = deriveSteps(world(), undefined, t("01:00"));
    expect(steps.map((s) => s.state)).toEqual(Array(7).fill("Done"));
    expect(stepSummary(steps)).toBe("7/7");
  });

  it("a held configuration (missing Secret) fails step 6, shown even while an earlier step waits", () => {
    const held = 'spec.email.smtp.passwordSecretRef: Secret "smtp" not found in namespace ns';
    const running = deriveSteps(world({ configHeld: held }), undefined, t("01:00"));
    expect(running.map((s) => s.state)).toEqual([
      "Done",
      "Done",
      "Done",
      "Done",
      "Done",
      "Failed",
      "Pending",
    ]);
    expect(running[5]?.message).toBe(`configuration not applied: ${held}`);
    const fresh = deriveSteps(
      world({ configHeld: held, deployment: undefined, appPods: [], health: undefined, healthAt: undefined }),
      undefined,
      t("01:00"),
    );
    expect(fresh[1]).toMatchObject({
      state: "InProgress",
      message: `app Deployment not created yet: ${held}`,
    });
    expect(fresh[5]?.state).toBe("Failed");
  });

  it("a step counts only after every earlier step: later ones are Pending", () => {
    const steps = deriveSteps(
      world({
        statefulSet: {
          apiVersion: "apps/v1",
          kind: "StatefulSet",
          metadata: {},
          status: { readyReplicas: 0 },
        },
      }),
      undefined,
      t("01:00"),
    );
    expect(steps.map((s) => s.state)).toEqual([
      "Done",
      "Done",
      "InProgress",
      "Pending",
      "Pending",
      "Pending",
      "Pending",
    ]);
    expect(steps[3]).toEqual({ name: "LoadBalancerSetUp", state: "Pending" });
  });

  it("DatabaseConfigured needs the health endpoint's database check, not just a ready StatefulSet", () => {
    const steps = deriveSteps(
      world({ health: { ok: false, latencyMs: 1, url: "u", message: "HTTP 503: database: refused" } }),
      undefined,
      t("01:00"),
    );
    expect(steps[2]).toMatchObject({
      state: "InProgress",
      message: "health endpoint: HTTP 503: database: refused",
    });
  });

  it("carries startedAt/finishedAt over while a state holds and restarts them when it changes", () => {
    const first = deriveSteps(world({ pvc: undefined }), undefined, t("00:10"));
    expect(first[0]).toMatchObject({ state: "InProgress", startedAt: "2026-01-01T00:00:10Z" });
    const second = deriveSteps(world(), first, t("00:20"));
    expect(second[0]).toMatchObject({
      state: "Done",
      startedAt: "2026-01-01T00:00:10Z",
      finishedAt: "2026-01-01T00:00:20Z",
    });
    const third = deriveSteps(world(), second, t("00:30"));
    expect(third).toEqual(second);
  });

  it("a failed image pull fails SoftwareInstalled even before earlier steps finish", () => {
    const bad: KubeObject = {
      ...pod("h1", false),
      status: {
        containerStatuses: [
          { started: false, state: { waiting: { reason: "ImagePullBackOff", message: "no such image" } } },
        ],
      },
    };
    const steps = deriveSteps(world({ appPods: [bad], pvc: undefined }), undefined, t("01:00"));
    expect(steps[1]).toMatchObject({ state: "Failed", message: "ImagePullBackOff: no such image" });
  });

  it("an app refusing its configuration fails SoftwareInstalled with the setting it names", () => {
    const fatal = JSON.stringify({
      level: "fatal",
      msg: "refusing to start",
      error: "invalid configuration: CONFIG_LOCALIZATION (at currency): must be an ISO 4217 code",
    });
    const crash = (exitCode: number, message: string): KubeObject => ({
      ...pod("h1", false),
      status: {
        containerStatuses: [
          {
            started: false,
            state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 10s" } },
            lastState: { terminated: { exitCode, reason: "Error", message } },
          },
        ],
      },
    });
    const refused = deriveSteps(
      world({ appPods: [crash(78, `starting\n${fatal}\n`)] }),
      undefined,
      t("01:00"),
    );
    expect(refused[1]).toMatchObject({
      state: "Failed",
      message:
        "the app refuses to start (exit 78): invalid configuration: CONFIG_LOCALIZATION (at currency): must be an ISO 4217 code",
    });
    // Another crash (e.g. the database not reachable yet) is retried by the kubelet: reported, not failed.
    const other = deriveSteps(world({ appPods: [crash(1, "connect ECONNREFUSED")] }), undefined, t("01:00"));
    expect(other[1]).toMatchObject({
      state: "InProgress",
      message: "the app keeps exiting (exit 1): connect ECONNREFUSED",
    });
  });

  it("TLS without cert-manager is Skipped and does not block the rest", () => {
    const steps = deriveSteps(world({ tls: { kind: "waitingForCertManager" } }), undefined, t("01:00"));
    expect(steps[4]).toMatchObject({
      state: "Skipped",
      message: "TLS waits on cert-manager: its CRDs are not installed",
    });
    expect(steps[6]?.state).toBe("Done");
  });

  it("an Ingress without address counts when its class exists and the address is not required", () => {
    const noAddr = { apiVersion: "networking.k8s.io/v1", kind: "Ingress", metadata: {}, status: {} };
    expect(deriveSteps(world({ ingress: noAddr }), undefined, t("01:00"))[3]?.state).toBe("InProgress");
    expect(
      deriveSteps(world({ ingress: noAddr, requireIngressAddress: false }), undefined, t("01:00"))[3]?.state,
    ).toBe("Done");
  });

  it("a rollout in progress reopens InitialConfigurationApplied; the health step waits for a check after it", () => {
    const rolling = world({
      deployment: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { generation: 3 },
        status: { observedGeneration: 3, replicas: 2, updatedReplicas: 1, availableReplicas: 1 },
      },
    });
    const steps = deriveSteps(rolling, undefined, t("01:00"));
    expect(steps[5]?.state).toBe("InProgress");
    const done = deriveSteps(world({ healthAt: t("01:00") }), steps, t("01:05"));
    expect(done[5]?.finishedAt).toBe("2026-01-01T00:01:05Z");
    expect(done[6]).toMatchObject({
      state: "InProgress",
      message: "waiting for a health check of the new version",
    });
  });
});
