import { randomBytes } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import type { KubeObject } from "../../../src/runtime/types.ts";
import { clusterEnv, kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { addonEnv } from "../addons/support.ts";
import { apiKey, applyPlatform, getObj, waitPhase } from "../scaleplatform/helpers.ts";
import { usePlatformOperator } from "../scaleplatform/operator.ts";
import { ingressFetch, type Received, startReceiver } from "./support.ts";

// One ScalePlatform for the whole in-cluster API tier (deploying one costs most of a minute on
// the shared machine): its namespace, the in-process operator, a webhook receiver on the host
// with scripted answers, and what the tests read of it.

export const NAME = "store";
export const HOST = "store.commerce.test";
export const API = `api.${HOST}`;
/** All five events, as the ScalePlatform names them. */
export const EVENTS = [
  "OrderCreated",
  "OrderUpdated",
  "PaymentReceived",
  "InventoryLow",
  "CustomerRegistered",
];

/** A webhook payload as the receiver got it. */
export interface Event {
  type: string;
  timestamp: string;
  data: Record<string, unknown> & { id?: string; orderId?: string; variantId?: string };
}

export interface CommercePlatform {
  readonly ns: string;
  /** The operator's API key (credentials Secret). */
  readonly key: string;
  readonly signingKey: string;
  readonly received: Received[];
  /** Answers for the next deliveries of an event whose data names `id` (id, orderId, variantId or email). */
  script(id: string, ...answers: { status: number; headers?: Record<string, string> }[]): void;
  /** Received requests of an event type about `id` (every attempt, in order). */
  deliveries(type: string, id?: string): (Received & { event: Event })[];
  /** The platform spec with `extra` merged over the suite's. */
  spec(extra?: Record<string, unknown>): Record<string, unknown>;
}

const idOf = (e: Event) => String(e.data.id ?? e.data.orderId ?? e.data.variantId ?? "");
/** What a scripted answer may be keyed by: the id, or a customer's email (known before the id). */
const keysOf = (e: Event) => [idOf(e), String(e.data.email ?? "")].filter(Boolean);

/** Sets a Pods metric of every pod of the namespace in the test custom-metrics API. */
export async function setPodsMetric(ns: string, metric: string, value: string | undefined): Promise<void> {
  const base = addonEnv("custom-metrics.env")?.CUSTOM_METRICS_URL;
  const res = await fetch(`${base}/values/${ns}/pods/${metric}/*`, {
    method: value === undefined ? "DELETE" : "PUT",
    body: value,
  });
  if (res.status !== 204) throw new Error(`setting ${metric}: HTTP ${res.status}`);
}

/** Waits until the app Deployment has rolled out completely with `n` ready replicas. */
export async function appReady(ns: string, n: number, timeoutMs = 120_000): Promise<void> {
  await waitFor(
    async () => {
      const d = await getObj<KubeObject>(ns, "deployment", NAME);
      const s = (d?.status ?? {}) as Record<string, number>;
      return (s.observedGeneration ?? 0) >= (d?.metadata.generation ?? 1) &&
        s.replicas === n &&
        s.updatedReplicas === n &&
        s.readyReplicas === n
        ? true
        : undefined;
    },
    { timeoutMs, intervalMs: 1000, what: `${n} ready app replicas of the current version` },
  );
  // The Ingress controller learns the new endpoints a moment later (with none, it has no route
  // and answers 404): wait until it serves the app again.
  await waitFor(
    async () => {
      const r = await ingressFetch(`https://${API}/.well-known/jwks.json`).catch(() => undefined);
      return r?.status === 200 || undefined;
    },
    { timeoutMs: 30_000, intervalMs: 500, what: "the app served through the Ingress controller" },
  );
}

/**
 * Deploys the platform once for the file (register it first in the top-level describe): plan
 * Standard, a Test payment gateway, webhook `all` (the five events, signed) to the receiver on the
 * host's node address (a private address the operator allows), webhook `internal` to the
 * Kubernetes API's ClusterIP (private, not allowed). A high request queue reported for every pod
 * makes the HPA run the plan's 3 replicas.
 */
export function useCommercePlatform(): CommercePlatform {
  const ns = useNamespace("commerce", { "pod-security.kubernetes.io/enforce": "restricted" });
  usePlatformOperator(ns);
  const signingKey = `whsec_${randomBytes(24).toString("base64")}`;
  const scripted = new Map<string, { status: number; headers?: Record<string, string> }[]>();
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let key = "";
  let internalUrl = "";

  const spec = (extra: Record<string, unknown> = {}) => ({
    plan: "Standard",
    domains: { platform: HOST },
    database: { pvcRetention: "Delete" },
    paymentGateways: [{ name: "test", type: "Card", provider: "test", mode: "Test" }],
    webhooks: [
      {
        name: "all",
        url: `${receiver.url}/hooks`,
        events: EVENTS,
        signingSecretRef: { name: "hooks", key: "signing" },
      },
      { name: "internal", url: internalUrl, events: ["CustomerRegistered"] },
    ],
    ...extra,
  });

  beforeAll(async () => {
    receiver = await startReceiver(clusterEnv().HOST_IP, (r) => {
      for (const k of keysOf(JSON.parse(r.body) as Event)) {
        const a = scripted.get(k)?.shift();
        if (a) return a;
      }
      return { status: 204 };
    });
    const svc = await kubectl([
      "get",
      "service",
      "kubernetes",
      "-n",
      "default",
      "-o",
      "jsonpath={.spec.clusterIP}",
    ]);
    internalUrl = `http://${svc.stdout.trim()}/hooks`;
    await kubectl(["create", "secret", "generic", "hooks", `--from-literal=signing=${signingKey}`], {
      namespace: ns.name,
    });
    await setPodsMetric(ns.name, "http_request_queue_length", "100");
    const r = await applyPlatform(ns.name, NAME, spec());
    if (r.code !== 0) throw new Error(r.stderr);
    await waitPhase(ns.name, NAME, "Running", 300_000);
    key = await apiKey(ns.name, NAME);
  }, 400_000);

  afterAll(async () => {
    await receiver?.close();
    await setPodsMetric(ns.name, "http_request_queue_length", undefined).catch(() => undefined);
  });

  return {
    get ns() {
      return ns.name;
    },
    get key() {
      return key;
    },
    signingKey,
    get received() {
      return receiver.received;
    },
    script(id, ...answers) {
      scripted.set(id, answers);
    },
    deliveries(type, id) {
      return receiver.received
        .map((r) => ({ ...r, event: JSON.parse(r.body) as Event }))
        .filter((r) => r.event.type === type && (id === undefined || idOf(r.event) === id));
    },
    spec,
  };
}
