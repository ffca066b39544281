import { registerOidcRoutes } from "./auth-oidc-routes.ts";
import type { RouteModule } from "./context.ts";
import { registerBackupRoutes } from "./routes-backups.ts";
import { registerConfigRoutes } from "./routes-config.ts";
import { registerConfigListRoutes } from "./routes-config-lists.ts";
import { registerPlatformRoutes } from "./routes-platforms.ts";
import { registerRenameRoutes } from "./routes-rename.ts";
import { registerRestoreRoutes } from "./routes-restore.ts";
import { registerSessionRoutes } from "./routes-session.ts";
import { registerTaskFormRoutes } from "./routes-task-form.ts";
import { registerTaskRoutes } from "./routes-tasks.ts";
import { registerUsageRoutes } from "./routes-usage.ts";
import { registerWebhookRoutes } from "./routes-webhooks.ts";

/**
 * Every route of the dashboard, module by module, in registration order (server.ts registers
 * this list and nothing else). Paths under /dashboard; T = /dashboard/compute/serverless/tasks,
 * P = /dashboard/compute/platforms/scale.
 */
export const ROUTES: readonly RouteModule[] = [
  // /, /dashboard, /healthz, /dashboard/assets/*, GET+POST /dashboard/sign-in, POST /dashboard/sign-out
  registerSessionRoutes,
  // POST /dashboard/sign-in/oidc, GET .../oidc/callback, the ID token refresh hook (only when configured)
  registerOidcRoutes,
  // T, T/results, T/:ns/:name, its run/suspend/resume/delete, env reveal, live run log
  registerTaskRoutes,
  // T/new, T/:ns/:name/edit (dry run, env Secret), the run preview
  registerTaskFormRoutes,
  // T/:ns/:name/rename
  registerRenameRoutes,
  // P, P/events, P/deploy, P/:ns/:name/{events,credentials,stop,start,upgrade}
  registerPlatformRoutes,
  // P/:ns/:name/usage/events
  registerUsageRoutes,
  // P/:ns/:name/webhooks (add, with its signing secret), .../webhooks/:hook/{events,rotate,remove}
  registerWebhookRoutes,
  // P/:ns/:name/config/:group, P/:ns/:name/config/events
  registerConfigRoutes,
  // P/:ns/:name/config/{payments,shipping} entries: add, edit, remove
  registerConfigListRoutes,
  // P/:ns/:name/backups, Back up now, Cancel, P/:ns/:name/backups/events
  registerBackupRoutes,
  // P/:ns/:name/backups/restore, .../restore/at, .../restores/events, release of an old volume
  registerRestoreRoutes,
];
