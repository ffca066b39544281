import { DEFAULT_PLATFORM_PRICES } from "../api/platform-prices.ts";
import { parseCustom } from "../api/quantities.ts";
import { appPodSelector, LABEL_PLATFORM } from "../api/v1alpha1/labels.ts";
import { ApiError } from "../runtime/errors.ts";
import { allowed } from "./access.ts";
import type { Ctx, FastifyReply } from "./context.ts";
import { podCounters } from "./platform-metrics.ts";
import { type Session, viewerApi } from "./sessions.ts";
import { PLATFORMS_PATH } from "./views/layout.ts";
import type { ConfigState } from "./views/platform-config.ts";
import type { LiveUsage } from "./views/platform-status.ts";
import { type DeployPrices, ProgressPage } from "./views/platforms.ts";

// The platform page (its deploy progress, status, usage, configuration and management), rendered
// by the routes that show it: the page itself and the forms that come back to it with a problem.
//
// Its live part: CPU and memory from the metrics API, and the platform's own figures from each
// ready app pod's /metrics through the API server's pod proxy, both as the viewer. Each pod is read
// on its own (not through the Service, which would answer from one arbitrary pod per request):
// counters are per process, so rates are the sum of each pod's increase, and a pod that restarted
// counts from zero without a negative jump.

/** Default refresh of the live part, in seconds. */
export const USAGE_REFRESH_SECONDS = 10;

/** Path of the commerce service's Prometheus endpoint on pods that do not announce one. */
const METRICS_PATH = "/metrics";

/**
 * The installation's prices (the dashboard's --prices-*, the operator's price table), for the
 * estimate before launch; once launched the platform's status carries the operator's own estimate.
 */
export function deployPrices(ctx: Ctx): DeployPrices {
  return ctx.opts.prices ?? DEFAULT_PLATFORM_PRICES;
}

const forbiddenAsNull = (err: unknown) => {
  if (err instanceof ApiError && err.statusCode === 403) return null;
  throw err;
};

/** The live part of a platform's page, read as the viewer. */
export async function liveUsage(ctx: Ctx, s: Session, ns: string, name: string): Promise<LiveUsage> {
  const refreshSeconds = ctx.opts.usageRefreshSeconds ?? USAGE_REFRESH_SECONDS;
  const [usage, texts] = await Promise.all([
    // The metrics API as the viewer: null when RBAC refuses it, undefined when not served.
    viewerApi(s).podUsage(ns, `${LABEL_PLATFORM}=${name}`).catch(forbiddenAsNull),
    // The platform's /metrics: null when RBAC refuses; any other failure (listing the pods)
    // leaves the figures unreported rather than failing the page.
    viewerApi(s)
      .podMetricsTexts(ns, appPodSelector(name), METRICS_PATH)
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
  const perf = ctx.metrics.observe(`${ns}/${name}`, { at: ctx.now().getTime(), pods });
  return { usage, perf, refreshSeconds };
}

/** What a form brings back to the platform page. */
export interface PlatformPageState {
  /** Admin credentials the viewer asked to see. */
  revealed?: Record<string, string>;
  /** A webhook's signing secret just made or rotated (shown this once). */
  webhookSecret?: { name: string; value: string };
  /** The API server's refusal of a change. */
  problem?: string;
  status?: number;
  /** A configuration group's or list entry's posted form. */
  config?: ConfigState;
}

/** Renders a platform's page for the viewer. */
export async function platformPage(
  ctx: Ctx,
  reply: FastifyReply,
  s: Session,
  ns: string,
  name: string,
  state: PlatformPageState = {},
): Promise<FastifyReply> {
  const [platform, patch, readSecrets, live] = await Promise.all([
    viewerApi(s).getPlatform(ns, name),
    allowed(s, "patch", "scaleplatforms", ns),
    allowed(s, "get", "secrets", ns),
    liveUsage(ctx, s, ns, name),
  ]);
  const here = `${PLATFORMS_PATH}/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
  const flash = s.flash;
  s.flash = undefined;
  const body = ProgressPage({
    platform,
    session: s,
    can: { patch, readSecrets },
    revealed: state.revealed,
    webhookSecret: state.webhookSecret,
    live,
    liveHref: `${here}/usage/events`,
    flash,
    problem: state.problem,
    eventsHref: `${here}/events`,
    configEventsHref: `${here}/config/events`,
    config: state.config,
    prices: deployPrices(ctx),
    custom: platform.spec.resources ? parseCustom(platform.spec) : undefined,
  });
  return ctx.page(reply, s, name, body, state.status ?? 200);
}
