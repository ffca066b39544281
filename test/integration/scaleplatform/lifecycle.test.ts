import { afterAll, describe, expect, it } from "vitest";
import { PLATFORM_STEPS } from "../../../src/api/v1alpha1/scaleplatform.ts";
import type { KubeObject } from "../../../src/runtime/types.ts";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { missingAddon, skipReason } from "../addons/support.ts";
import { applyPlatform, appPodsField, getObj, getPlatform, psql, waitPhase } from "./helpers.ts";
import { localCa, servedViaIngress, usePlatformOperator, viaIngress } from "./operator.ts";

// A platform's whole life on the local cluster with the platform add-ons: real PostgreSQL on a
// local-path volume, the commerce image as the platform, Traefik, cert-manager. (The HPA under
// real load is in variants.test.ts, on a plan small enough for a 2-core node to saturate.)

const reason = await skipReason("dns", "storage", "ingress");
// Narrows what is shown rather than skipping everything: without cert-manager the TLS checks
// turn into "TLS waits on cert-manager" checks.
const noCertManager = reason ? "no cluster" : await missingAddon("cert-manager");
if (!reason && noCertManager)
  process.stderr.write(`scaleplatform lifecycle: ${noCertManager}; TLS is checked as waiting\n`);
const NAME = "shop";
const HOST = "shop.platform.test";

describe.skipIf(reason)("ScalePlatform lifecycle on the real cluster", () => {
  const ns = useNamespace("splat", { "pod-security.kubernetes.io/enforce": "restricted" });
  const op = usePlatformOperator(ns);
  const figures: Record<string, unknown> = {};

  afterAll(() => {
    process.stderr.write(`scaleplatform figures: ${JSON.stringify(figures)}\n`);
  });

  it("deploys: the seven steps in order, each from the real objects, then Running", async () => {
    const t0 = Date.now();
    const r = await applyPlatform(ns.name, NAME, { plan: "Standard", domains: { platform: HOST } });
    expect(r.code, r.stderr).toBe(0);
    // Watch the steps finish: record the order in which they became Done.
    const order: string[] = [];
    const p = await waitFor(
      async () => {
        const cur = await getPlatform(ns.name, NAME);
        for (const s of cur.status?.steps ?? [])
          if (s.state === "Done" && !order.includes(s.name)) order.push(s.name);
        return cur.status?.phase === "Running" ? cur : undefined;
      },
      { timeoutMs: 420_000, intervalMs: 500, what: "phase Running" },
    );
    figures.createToRunningSeconds = (Date.now() - t0) / 1000;
    const steps = p.status?.steps ?? [];
    expect(steps.map((s) => s.name)).toEqual([...PLATFORM_STEPS]);
    expect(steps.every((s) => s.state === "Done")).toBe(true);
    // In order: each step finished no earlier than the one before it.
    for (let i = 1; i < steps.length; i++)
      expect(steps[i]!.finishedAt! >= steps[i - 1]!.finishedAt!).toBe(true);
    expect(order.length).toBeGreaterThan(0);
    expect(p.status?.stepSummary).toBe("7/7");
    // The load balancer step is the Ingress controller's published address, not the object alone.
    const ing = await getObj<KubeObject>(ns.name, "ingress", NAME);
    expect(JSON.stringify(ing?.status)).toContain('"ip":"127.0.0.1"');
    expect(p.status?.urls?.platform).toBe(`${noCertManager ? "http" : "https"}://${HOST}/`);
    expect(p.status?.credentialsSecretName).toBe(`${NAME}-credentials`);
    expect(p.status?.healthCheck?.status).toBe("Healthy");
    expect(p.status?.healthCheck?.url).toMatch(/^http:\/\/10\.[0-9.]+:8080\/readyz$/);
    expect(p.status?.monthlyCostEstimate?.amount).toBe("199.00");
    expect(p.status?.activeScalingTriggers).toEqual(expect.arrayContaining(["CPU", "Memory"]));
    const events = await kubectl(["get", "events.events.k8s.io", "-o", "jsonpath={.items[*].reason}"], {
      namespace: ns.name,
    });
    for (const step of PLATFORM_STEPS) expect(events.stdout).toContain(step);
    expect(events.stdout).toContain("Deployed");
  }, 480_000);

  it("the app reached its database with the generated credentials; the platform answers through the Ingress over TLS", async () => {
    // The commerce service is ready only after a query on the database succeeded and its
    // migrations are applied.
    const health = await servedViaIngress(HOST, "/readyz");
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: "ready" });
    const db = await getObj<KubeObject>(ns.name, "secret", `${NAME}-db-credentials`);
    expect(db?.metadata.ownerReferences?.[0]?.kind).toBe("ScalePlatform");
    if (noCertManager) {
      const p = await getPlatform(ns.name, NAME);
      expect(p.status?.conditions?.find((c) => c.type === "TLSReady")?.reason).toBe("WaitingForCertManager");
      expect((await viaIngress(`admin.${HOST}`, "/healthz")).status).toBe(200);
      return;
    }
    // Over TLS with the cert-manager certificate, verified against the add-on's CA.
    const tls = await waitFor(
      () => viaIngress(HOST, "/readyz", { tls: true, ca: localCa() }).catch(() => undefined),
      {
        timeoutMs: 60_000,
        what: "TLS through the Ingress",
      },
    );
    expect(tls.status).toBe(200);
    expect(tls.san).toContain(`DNS:${HOST}`);
    const admin = await viaIngress(`admin.${HOST}`, "/healthz", { tls: true, ca: localCa() });
    expect(admin.status).toBe(200);
    const cert = await getObj<KubeObject>(ns.name, "certificate.cert-manager.io", `${NAME}-tls`);
    expect(JSON.stringify(cert?.status)).toContain('"Ready"');
  }, 120_000);

  it("makes zero writes at steady state while health checks keep running", async () => {
    const rv = async () => {
      const out: Record<string, string> = {};
      for (const [kind, name] of [
        ["scaleplatform", NAME],
        ["deployment", NAME],
        ["statefulset", `${NAME}-db`],
        ["service", NAME],
        ["ingress", NAME],
        ["hpa", NAME],
        ["configmap", `${NAME}-config`],
        ["secret", `${NAME}-credentials`],
      ] as const) {
        const o = await getObj<KubeObject>(ns.name, kind, name);
        out[kind] = o?.metadata.resourceVersion ?? "";
      }
      return out;
    };
    const healthChecks = () => op.current.logLines.filter((l) => l.includes('"health check"')).length;
    const checksBefore = healthChecks();
    const before = await rv();
    // The window: three health checks (each one in its own reconcile pass), however long the
    // operator takes for them, rather than a fixed time.
    await waitFor(() => healthChecks() - checksBefore >= 3, {
      timeoutMs: 45_000,
      what: "three health checks at steady state",
    });
    const after = await rv();
    const checks = healthChecks() - checksBefore;
    expect(checks).toBeGreaterThanOrEqual(3);
    // The HPA's status may change (metrics); only its spec is ours.
    const { hpa: _a, ...b } = before;
    const { hpa: _b, ...a } = after;
    expect(a).toEqual(b);
  }, 60_000);

  it("upgrades Standard → Professional: Updating, new limits on rolled pods, back to Running; downgrade refused", async () => {
    let stop = false;
    let ok = 0;
    let failed = 0;
    const probe = async () => {
      while (!stop) {
        const r = await viaIngress(HOST, "/readyz", { timeoutMs: 3000 }).catch(() => undefined);
        if (r?.status === 200) ok++;
        else failed++;
        await new Promise((res) => setTimeout(res, 100));
      }
    };
    const prober = probe();
    const t0 = Date.now();
    const r = await applyPlatform(ns.name, NAME, { plan: "Professional", domains: { platform: HOST } });
    expect(r.code, r.stderr).toBe(0);
    await waitPhase(ns.name, NAME, "Updating", 60_000);
    const p = await waitPhase(ns.name, NAME, "Running", 300_000);
    figures.upgradeSeconds = (Date.now() - t0) / 1000;
    await new Promise((res) => setTimeout(res, 2000));
    stop = true;
    await prober;
    figures.upgradeProbe = { ok, failed };
    expect(p.status?.resources?.cpu).toBe("8");
    expect(p.status?.lastRestartTime).toBeDefined();
    // Old pods may still be terminating for a moment: wait until only rolled pods are left.
    await waitFor(
      async () => {
        const limits = await appPodsField(ns.name, NAME, "{.spec.containers[0].resources.limits.cpu}");
        return limits.length > 0 && limits.every((l) => l === "1500m");
      },
      { timeoutMs: 120_000, what: "app pods with Professional limits (1500m)" },
    );
    // The volume cannot grow on local-path: status says so.
    const sized = p.status?.conditions?.find((c) => c.type === "StorageSized");
    expect(sized?.reason).toMatch(/ExpansionNotSupported|Expanded|Expanding/);
    const down = await applyPlatform(ns.name, NAME, { plan: "Standard", domains: { platform: HOST } });
    expect(down.code).not.toBe(0);
    expect(down.stderr).toContain("spec.plan");
  }, 420_000);

  it("stop scales app and database to zero keeping the data; start serves the same data", async () => {
    await psql(
      ns.name,
      `${NAME}-db-0`,
      "CREATE TABLE IF NOT EXISTS kept (v text); INSERT INTO kept VALUES ('before-stop')",
    );
    const r = await applyPlatform(ns.name, NAME, {
      plan: "Professional",
      domains: { platform: HOST },
      stopped: true,
    });
    expect(r.code, r.stderr).toBe(0);
    await waitPhase(ns.name, NAME, "Stopped", 60_000);
    await waitFor(
      async () =>
        (
          await kubectl(["get", "pods", "-l", `cronscale.io/platform=${NAME}`, "-o", "name"], {
            namespace: ns.name,
          })
        ).stdout.trim() === "",
      { timeoutMs: 120_000, what: "all platform pods gone" },
    );
    expect(await getObj(ns.name, "hpa", NAME)).toBeUndefined();
    const pvc = await getObj<KubeObject>(ns.name, "pvc", `data-${NAME}-db-0`);
    expect((pvc?.status as { phase?: string } | undefined)?.phase).toBe("Bound");
    const start = await applyPlatform(ns.name, NAME, {
      plan: "Professional",
      domains: { platform: HOST },
      stopped: false,
    });
    expect(start.code, start.stderr).toBe(0);
    await waitPhase(ns.name, NAME, "Running", 300_000);
    expect(await psql(ns.name, `${NAME}-db-0`, "SELECT v FROM kept")).toBe("before-stop");
    expect((await servedViaIngress(HOST, "/healthz")).status).toBe(200);
    expect(await getObj(ns.name, "hpa", NAME)).toBeDefined();
  }, 420_000);

  it("keeps credentials and API key across reconciles and an operator restart", async () => {
    const before = await getObj<KubeObject>(ns.name, "secret", `${NAME}-credentials`);
    await op.restart();
    // Two whole passes of the new operator over the platform (the first applies every child,
    // the Secret included; the second comes at the health interval).
    const passes = () =>
      op.current.logLines.filter(
        (l) => l.includes('"reconcile finished"') && l.includes('"controller":"scaleplatform"'),
      ).length;
    await waitFor(() => passes() >= 2, { timeoutMs: 60_000, what: "two reconciles after the restart" });
    const after = await getObj<KubeObject>(ns.name, "secret", `${NAME}-credentials`);
    expect(after?.data).toEqual(before?.data);
    expect(after?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
    expect((await getPlatform(ns.name, NAME)).status?.phase).toBe("Running");
  }, 120_000);

  it("delete: every owned object goes; the database volume stays (default retention Retain)", async () => {
    await kubectl(["delete", "scaleplatform", NAME, "--wait=true", "--timeout=60s"], { namespace: ns.name });
    await waitFor(
      async () => {
        for (const [kind, name] of [
          ["deployment", NAME],
          ["statefulset", `${NAME}-db`],
          ["service", NAME],
          ["service", `${NAME}-db`],
          ["ingress", NAME],
          ["configmap", `${NAME}-config`],
          ["secret", `${NAME}-credentials`],
          ["secret", `${NAME}-db-credentials`],
          ...(noCertManager ? [] : [["certificate.cert-manager.io", `${NAME}-tls`]]),
        ]) {
          if (await getObj(ns.name, kind!, name!)) return false;
        }
        return true;
      },
      { timeoutMs: 120_000, intervalMs: 1000, what: "owned objects to be garbage-collected" },
    );
    expect(await getObj(ns.name, "pvc", `data-${NAME}-db-0`)).toBeDefined();
  }, 180_000);

  it("created again under the same name: the retained data, with the new Secret's password", async () => {
    // The new platform generates a new password; the database on the retained volume takes it
    // at start (the image sets it from POSTGRES_PASSWORD), so the app and psql get in.
    const r = await applyPlatform(ns.name, NAME, { plan: "Standard", domains: { platform: HOST } });
    expect(r.code, r.stderr).toBe(0);
    await waitPhase(ns.name, NAME, "Running", 300_000);
    expect(await psql(ns.name, `${NAME}-db-0`, "SELECT v FROM kept")).toBe("before-stop");
    expect((await servedViaIngress(HOST, "/healthz")).status).toBe(200);
    const logs = await kubectl(["logs", `${NAME}-db-0`, "-c", "postgres"], { namespace: ns.name });
    expect(logs.stderr + logs.stdout).toContain("password of");
  }, 360_000);
});
