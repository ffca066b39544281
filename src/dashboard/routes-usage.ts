import type { FastifyInstance } from "fastify";
import { LABEL_PLATFORM } from "../api/v1alpha1/labels.ts";
import { DEFAULT_PLATFORM_CONFIG } from "../controllers/scaleplatform/config.ts";
import { appPodSelector } from "../controllers/scaleplatform/desired/common.ts";
import { ApiError } from "../runtime/errors.ts";
import { MetricsHistory, podCounters } from "./platform-metrics.ts";
import type { Ctx } from "./server.ts";
import { type Session, viewerApi } from "./sessions.ts";
import { openEventStream } from "./sse.ts";
import { renderFragment } from "./views/html.ts";
import { PLATFORMS_PATH } from "./views/layout.ts";
import { type LiveUsage, UsageAndPerformance } from "./views/platform-status.ts";

// The live part of the platform page: CPU and memory from the metrics API, and the platform's own
// figures from each ready app pod's /metrics through the API server's pod proxy, both as the
// viewer. Each pod is read on its own (not through the Service, which would answer from one
// arbitrary pod per request): counters are per process, so rates are the sum of each pod's
// increase, and a pod that restarted counts from zero without a negative jump.

/** Default refresh of the live part, in seconds. */
export const USAGE_REFRESH_SECONDS = 10;

const forbiddenAsNull = (err: unknown) => {
  if (err instanceof ApiError && err.statusCode === 403) return null;
  throw err;
};

/** Registers the live part's event stream; returns the reader the platform page renders with. */
export function registerUsageRoutes(
  app: FastifyInstance,
  ctx: Ctx,
): (s: Session, ns: string, name: string) => Promise<LiveUsage> {
  const history = new MetricsHistory();
  const refreshSeconds = ctx.opts.usageRefreshSeconds ?? USAGE_REFRESH_SECONDS;

  async function liveUsage(s: Session, ns: string, name: string): Promise<LiveUsage> {
    const [usage, texts] = await Promise.all([
      // The metrics API as the viewer: null when RBAC refuses it, undefined when not served.
      viewerApi(s).podUsage(ns, `${LABEL_PLATFORM}=${name}`).catch(forbiddenAsNull),
      // The platform's /metrics: null when RBAC refuses; any other failure (listing the pods)
      // leaves the figures unreported rather than failing the page.
      viewerApi(s)
        .podMetricsTexts(ns, appPodSelector(name), DEFAULT_PLATFORM_CONFIG.metricsPath)
        .catch((err) => {
          if (err instanceof ApiError && err.statusCode === 403) return null;
          ctx.opts.log.warn(
            { namespace: ns, platform: name, err: (err as Error).message },
            "platform metrics unread",
          );
          return undefined;
        }),
    ]);
    if (!texts?.size) return { usage, perf: texts === null ? null : undefined, refreshSeconds };
    const pods = new Map([...texts].map(([pod, text]) => [pod, podCounters(text)]));
    const perf = history.observe(`${ns}/${name}`, { at: ctx.now().getTime(), pods });
    return { usage, perf, refreshSeconds };
  }

  // Server-Sent Events: the usage and performance sections, read again every refresh.
  app.get(`${PLATFORMS_PATH}/:ns/:name/usage/events`, async (req, reply) => {
    const s = req.session as Session;
    const { ns, name } = req.params as { ns: string; name: string };
    const stream = openEventStream(req, reply);
    const { signal } = stream;
    try {
      while (!signal.aborted) {
        // The page was just rendered with a fresh read: wait one period first.
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, refreshSeconds * 1000);
          signal.addEventListener(
            "abort",
            () => {
              clearTimeout(t);
              resolve();
            },
            { once: true },
          );
        });
        if (signal.aborted) break;
        const [platform, live] = await Promise.all([
          viewerApi(s).getPlatform(ns, name),
          liveUsage(s, ns, name),
        ]);
        stream.send("usage", renderFragment(UsageAndPerformance({ platform, live })));
      }
    } catch (err) {
      stream.send("error", err instanceof ApiError ? `${err.statusCode}` : "error");
    } finally {
      stream.end();
    }
  });

  return liveUsage;
}
