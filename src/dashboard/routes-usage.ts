import { ApiError } from "../runtime/errors.ts";
import type { Ctx, FastifyInstance } from "./context.ts";
import { liveUsage, USAGE_REFRESH_SECONDS } from "./platform-page.ts";
import { type Session, viewerApi } from "./sessions.ts";
import { openEventStream } from "./sse.ts";
import { renderFragment } from "./views/html.ts";
import { PLATFORMS_PATH } from "./views/layout.ts";
import { UsageAndPerformance } from "./views/platform-status.ts";

/** The live part of the platform page (platform-page.ts), sent again every refresh. */
export function registerUsageRoutes(app: FastifyInstance, ctx: Ctx): void {
  const refreshSeconds = ctx.opts.usageRefreshSeconds ?? USAGE_REFRESH_SECONDS;

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
          liveUsage(ctx, s, ns, name),
        ]);
        stream.send("usage", renderFragment(UsageAndPerformance({ platform, live })));
      }
    } catch (err) {
      stream.send("error", err instanceof ApiError ? `${err.statusCode}` : "error");
    } finally {
      stream.end();
    }
  });
}
