import type { KubeObject, ObjectKey, ReconcileContext } from "../../runtime/types.ts";
import type { PlatformControllerConfig } from "./config.ts";
import type { PlatformInputs } from "./desired/common.ts";
import type { HealthProbe, HealthState, HealthTracker } from "./health.ts";
import { healthUrl } from "./observe.ts";

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
