import { platformAppName } from "../../api/v1alpha1/names.ts";
import type { KubeObject, ObjectKey, ReconcileContext } from "../../runtime/types.ts";
import type { PlatformControllerConfig } from "./config.ts";
import { nameOf, type PlatformInputs } from "./desired/common.ts";
import type { HealthProbe, HealthState, HealthTracker } from "./health.ts";

// One pass's share of the operator's health check: the check runs only when due (reconciles
// come more often than checks), and its result stays in the tracker's memory.

/** What the check needs from the reconciler. */
export interface HealthCheckDeps {
  config: PlatformControllerConfig;
  tracker: HealthTracker;
  probe: HealthProbe;
}

/**
 * Checks the platform's health endpoint when the last check is `dueAfterMs` old (never while
 * stopped) and records the result; returns the platform's health state, seeded from its status
 * after an operator restart.
 */
export async function checkHealth(
  deps: HealthCheckDeps,
  ctx: ReconcileContext,
  key: ObjectKey,
  inp: PlatformInputs,
  pods: KubeObject[],
  now: Date,
  dueAfterMs: number,
): Promise<HealthState> {
  const { config, tracker } = deps;
  const { platform } = inp;
  const prev = platform.status;
  const id = platform.metadata.uid ?? key.name;
  const health = tracker.state(id, {
    uptimePercent: prev?.uptimePercent,
    since: prev?.uptimeSince,
    now,
    intervalMs: config.healthCheck.intervalSeconds * 1000,
  });
  if (inp.spec.stopped || !tracker.due(id, now, dueAfterMs)) return health;
  const url = healthUrl(config, inp, pods);
  const result = url
    ? await deps.probe(url, config.healthCheck.timeoutMs)
    : {
        ok: false,
        latencyMs: 0,
        url: `pod:${config.appPort}${config.healthPath}`,
        message: "no ready app pod",
      };
  // Uptime counts only once the platform has been deployed and while it is meant to run.
  tracker.record(id, result, now, prev?.deployedTime !== undefined);
  ctx.log.debug({ platform: key.name, url: result.url, ok: result.ok, ms: result.latencyMs }, "health check");
  return health;
}

interface PodLike {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
  metadata: { name?: string; deletionTimestamp?: string };
}

/** URL of the health check: the Service's DNS name, or a ready app pod's IP; undefined when no pod is ready. */
export function healthUrl(
  config: PlatformControllerConfig,
  inp: PlatformInputs,
  pods: KubeObject[],
): string | undefined {
  const ns = inp.platform.metadata.namespace ?? "";
  if (config.healthCheck.target === "service") {
    return `http://${platformAppName(nameOf(inp))}.${ns}.svc.${config.healthCheck.clusterDomain}:80${config.healthPath}`;
  }
  // The first ready pod by name: a stable choice, so the URL in status does not flip between
  // pods of a scaled-out app (which would be a status write at steady state).
  const ready = (pods as PodLike[])
    .filter((p) => !p.metadata.deletionTimestamp && p.status?.podIP)
    .sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""))
    .filter((p) => (p.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True"));
  const ip = ready[0]?.status?.podIP;
  if (!ip) return undefined;
  const host = ip.includes(":") ? `[${ip}]` : ip;
  return `http://${host}:${config.appPort}${config.healthPath}`;
}
