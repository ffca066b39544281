import { platformAppName, platformDatabaseName } from "../../api/v1alpha1/names.ts";
import type { ScalePlatformStatus } from "../../api/v1alpha1/scaleplatform.ts";
import { childKey, type LiveChildren } from "../../runtime/children.ts";
import type { KubeObject, ObjectKey } from "../../runtime/types.ts";
import type { PlatformControllerConfig } from "./config.ts";
import { configHash, liveConfigHash } from "./desired/app.ts";
import type { PlatformInputs } from "./desired/common.ts";
import type { HealthState } from "./health.ts";
import { deriveSteps, type Step, type TlsObservation } from "./progress.ts";
import type { SecretResolution } from "./secrets.ts";
import { computeStatus, type StorageObservation } from "./status.ts";

// Hands what one pass observed to the pure derivations (progress.ts for the steps, status.ts
// for the status).

/** The live world as a pass leaves it: what the steps and the status are derived from. */
export interface Observed {
  live: LiveChildren;
  /** Children (and the volume) that did not exist before this pass. */
  missing: string[];
  pvc?: KubeObject;
  storage: StorageObservation;
  pods: KubeObject[];
  health: HealthState;
  tls: TlsObservation;
  /** Whether the Ingress's class (or a default one) exists (read only while running). */
  ingressClassExists: boolean;
}

/**
 * The seven steps, derived from the observed world; while stopped the previous ones stand.
 * `data` is the desired configuration; `configHeld` says why it is held back, if it is.
 */
export function currentSteps(
  config: PlatformControllerConfig,
  key: ObjectKey,
  inp: PlatformInputs,
  o: Observed,
  data: Record<string, string>,
  configHeld: string | undefined,
  now: Date,
): Step[] {
  const prev = inp.platform.status?.steps as Step[] | undefined;
  if (inp.spec.stopped) return prev ?? [];
  const deployment = o.live.get(childKey("Deployment", platformAppName(key.name)));
  return deriveSteps(
    {
      missing: o.missing,
      statefulSet: o.live.get(childKey("StatefulSet", platformDatabaseName(key.name))),
      pvc: o.pvc,
      deployment,
      appPods: o.pods,
      // Held back: the pods of the configuration in place are the current ones.
      configHash: (configHeld && liveConfigHash(deployment)) || configHash(data),
      ingress: o.live.get(childKey("Ingress", platformAppName(key.name))),
      ingressClassExists: o.ingressClassExists,
      requireIngressAddress: config.requireIngressAddress,
      tls: o.tls,
      health: o.health.last,
      healthAt: o.health.lastAt,
      configHeld,
    },
    prev,
    now,
  );
}

/** The status a pass arrives at. */
export function currentStatus(
  key: ObjectKey,
  inp: PlatformInputs,
  steps: Step[],
  o: Observed,
  secrets: SecretResolution,
  now: Date,
): ScalePlatformStatus {
  return computeStatus({
    inp,
    steps,
    previous: inp.platform.status,
    deployment: o.live.get(childKey("Deployment", platformAppName(key.name))),
    pvc: o.pvc,
    appPods: o.pods,
    tls: o.tls,
    storage: o.storage,
    health: o.health,
    now,
    secretProblems: secrets.problems,
    secretRefCount: secrets.refCount,
  });
}
