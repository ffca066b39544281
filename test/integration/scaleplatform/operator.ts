import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import {
  DEFAULT_PLATFORM_CONFIG,
  type PlatformControllerConfig,
} from "../../../src/controllers/scaleplatform/config.ts";
import { registerScalePlatformControllers } from "../../../src/controllers/scaleplatform/index.ts";
import type { ScalePlatformReconciler } from "../../../src/controllers/scaleplatform/reconciler.ts";
import { createLogger } from "../../../src/log.ts";
import { RealKubeClient } from "../../../src/runtime/client.ts";
import { KubeListWatch } from "../../../src/runtime/listwatch.ts";
import { Manager } from "../../../src/runtime/manager.ts";
import { KubeTransport } from "../../../src/runtime/rest.ts";
import { clusterEnv, kubeConfig, kubectl, waitFor } from "../../support/cluster.ts";
import { addonEnv, nodeImages } from "../addons/support.ts";

// The operator's ScalePlatform controller running in this test process against the test cluster
// (the operator runs on the host here, as in development), with the locally built commerce and
// PostgreSQL images, plus helpers to reach a platform through the Ingress controller on loopback.

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));

/** Installs (or updates) the ScalePlatform, ScalePlatformBackup and ScalePlatformRestore CRDs and waits until they are established. */
export async function installPlatformCrd(): Promise<void> {
  for (const crd of [
    "scaleplatforms.cronscale.io",
    "scaleplatformbackups.cronscale.io",
    "scaleplatformrestores.cronscale.io",
  ]) {
    await kubectl(["apply", "--server-side", "--force-conflicts", "-f", `${repoRoot}crds/${crd}.yaml`]);
    await kubectl(["wait", "--for=condition=Established", "--timeout=60s", `crd/${crd}`]);
  }
}

/**
 * Controller config for the local cluster: local images (never pulled), health checks on a
 * ready pod's IP (the host routes to the pod CIDR but not to ClusterIPs), the add-on's CA issuer,
 * short health interval. The load-balancer step needs a real Ingress address: the ingress add-on's
 * Traefik publishes 127.0.0.1 (its loopback listener) in every served Ingress's status.
 */
export function localPlatformConfig(
  overrides: Partial<PlatformControllerConfig> = {},
): PlatformControllerConfig {
  const images = nodeImages("commerce", "postgres", "node");
  return {
    ...DEFAULT_PLATFORM_CONFIG,
    images: { platform: images.commerce, database: images.postgres, backupRunner: images.node },
    imagePullPolicy: "Never",
    healthCheck: { ...DEFAULT_PLATFORM_CONFIG.healthCheck, target: "pod", intervalSeconds: 5 },
    // Webhook receivers of the tests listen on the host's end of the node link.
    webhookAllowedCidrs: [nodeNetworkCidr()],
    defaultIssuer: { name: "cronscale-ca", kind: "ClusterIssuer" },
    featureRecheckSeconds: 10,
    ...overrides,
  };
}

/**
 * The node network of the local cluster: the /30 link between the host (HOST_IP, its first
 * address) and the node, which pods reach the host through.
 */
export function nodeNetworkCidr(): string {
  const [a, b, c, d] = clusterEnv().HOST_IP.split(".").map(Number) as [number, number, number, number];
  return `${a}.${b}.${c}.${d & ~3}/30`;
}

/** A running in-process operator. */
export interface PlatformOperator {
  manager: Manager;
  reconciler: ScalePlatformReconciler;
  logLines: string[];
  stop(): Promise<void>;
}

/** Starts the ScalePlatform controller watching one namespace. */
export async function startPlatformOperator(
  namespace: string,
  config: PlatformControllerConfig,
): Promise<PlatformOperator> {
  const transport = KubeTransport.create(kubeConfig());
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logLines.push(String(chunk));
      if (process.env.CRONSCALE_TEST_LOGS === "1") process.stderr.write(chunk);
      cb();
    },
  });
  const manager = new Manager({
    client: new RealKubeClient(transport),
    sourceFor: (type, ns) => new KubeListWatch(transport, type, ns),
    log: createLogger({ level: "debug", destination: sink as never }),
    namespace,
    // /metrics (and the probes) on a free loopback port, scraped by the tests that check metrics.
    http: { host: "127.0.0.1", port: 0 },
    leaderElection: false,
  });
  const reconciler = registerScalePlatformControllers(manager, { config, workers: 2 });
  await manager.start();
  return { manager, reconciler, logLines, stop: () => manager.stop() };
}

/** The operator of a test file: started in beforeAll, stopped in afterAll, restartable. */
export interface OperatorHandle {
  readonly current: PlatformOperator;
  /** Stops the running operator and starts a new one (a new process, as far as state goes). */
  restart(): Promise<void>;
}

/**
 * Installs the CRD and starts the controller for the test namespace in a beforeAll (register it
 * before hooks that need the operator), stops it in afterAll. `overrides` change the settings of
 * localPlatformConfig() (operator settings, e.g. a shorter featureRecheckSeconds).
 */
export function usePlatformOperator(
  ns: { readonly name: string },
  overrides: Partial<PlatformControllerConfig> = {},
): OperatorHandle {
  let op: PlatformOperator | undefined;
  beforeAll(async () => {
    await installPlatformCrd();
    op = await startPlatformOperator(ns.name, localPlatformConfig(overrides));
  }, 600_000);
  afterAll(async () => {
    await op?.stop();
  });
  return {
    get current() {
      if (!op) throw new Error("usePlatformOperator(): the operator runs from beforeAll on");
      return op;
    },
    async restart() {
      await op?.stop();
      op = await startPlatformOperator(ns.name, localPlatformConfig(overrides));
    },
  };
}

/** Loopback ports of the Ingress controller. */
export function ingressPorts(): { http: number; https: number } {
  const env = addonEnv("ingress.env");
  return { http: Number(env?.INGRESS_HTTP_PORT), https: Number(env?.INGRESS_HTTPS_PORT) };
}

/** The CA certificate of the cert-manager add-on's `cronscale-ca` issuer. */
export function localCa(): string {
  return readFileSync(join(clusterEnv().STATE_DIR, "addons.d/cert-manager/ca.crt"), "utf8");
}

/** A response of get(). */
export interface Reply {
  status: number;
  body: string;
  /** Subject alternative names of the served certificate (HTTPS only). */
  san?: string;
}

/** GET through the Ingress controller on loopback, by Host header (and SNI for HTTPS). */
export function viaIngress(
  host: string,
  path: string,
  opts: { tls?: boolean; ca?: string; timeoutMs?: number; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const ports = ingressPorts();
  return new Promise((resolve, reject) => {
    const base = {
      host: "127.0.0.1",
      path,
      headers: { ...opts.headers, Host: host },
      timeout: opts.timeoutMs ?? 5000,
    };
    const onRes = (res: http.IncomingMessage) => {
      let body = "";
      res.on("data", (d: Buffer) => {
        body += d.toString();
      });
      res.on("end", () => {
        const cert = (
          res.socket as { getPeerCertificate?: () => { subjectaltname?: string } }
        ).getPeerCertificate?.();
        resolve({ status: res.statusCode ?? 0, body, san: cert?.subjectaltname });
      });
    };
    const req = opts.tls
      ? https.get(
          {
            ...base,
            port: ports.https,
            servername: host,
            ca: opts.ca,
            rejectUnauthorized: true,
            agent: false,
          },
          onRes,
        )
      : http.get({ ...base, port: ports.http, agent: false }, onRes);
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
  });
}

/**
 * viaIngress() until it answers 200 (or `waitMs` passes; then the last reply, so the test's
 * expectation shows the status). Traefik applies Ingress and endpoint changes asynchronously
 * (throttled by its provider), so a platform that just turned Running may be routed a moment later.
 */
export async function servedViaIngress(
  host: string,
  path: string,
  opts: Parameters<typeof viaIngress>[2] & { waitMs?: number } = {},
): Promise<Reply> {
  let last: Reply | undefined;
  try {
    return await waitFor(
      async () => {
        last = await viaIngress(host, path, opts);
        return last.status === 200 && last;
      },
      {
        timeoutMs: opts.waitMs ?? 30_000,
        intervalMs: 500,
        what: `200 from ${host}${path} through the Ingress`,
      },
    );
  } catch (err) {
    if (last) return last;
    throw err;
  }
}
