import { appPodSelector } from "../../api/v1alpha1/labels.ts";
import type { ObjectKey, ReconcileContext } from "../../runtime/types.ts";
import type { PlatformControllerConfig } from "./config.ts";
import type { FeatureDetector } from "./features.ts";

// Which configured custom metrics the custom metrics API has values of for the app's pods. The
// HPA never scales down while one of its metrics is unavailable, so only these join it. The
// answer is cached per platform by the detector for featureRecheckSeconds.

/**
 * Per metric name, whether it has values for the app's pods; undefined when the API is not
 * served or the platform is stopped (then it is not asked). A failed query is logged.
 */
export async function customMetricValues(
  ctx: ReconcileContext,
  detector: FeatureDetector,
  metrics: PlatformControllerConfig["customMetrics"],
  key: ObjectKey,
  served: boolean,
  stopped: boolean | undefined,
): Promise<Record<string, boolean> | undefined> {
  if (!served || stopped) return undefined;
  return detector.podMetricValues(
    ctx.client,
    `${key.namespace}/${key.name}`,
    key.namespace,
    appPodSelector(key.name),
    [metrics.queueLength, metrics.responseTime],
    ctx.clock.now(),
    (metric, err) =>
      ctx.log.warn(
        { platform: key.name, metric, err: (err as Error).message },
        "custom metrics query failed",
      ),
  );
}
