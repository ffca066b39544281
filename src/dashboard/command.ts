import { parseArgs } from "node:util";
import type { CliIO } from "../cli/next-runs.ts";
import { createLogger } from "../log.ts";
import { loadKubeConfig } from "../runtime/kube.ts";
import { KubeListWatch } from "../runtime/listwatch.ts";
import { KubeTransport } from "../runtime/rest.ts";
import { KubeViewerApi } from "./kube.ts";
import { createDashboard } from "./server.ts";
import { SharedTaskCache, TASK_TYPE } from "./task-cache.ts";
import { SIGN_IN_PATH, TASKS_PATH } from "./views/layout.ts";

const USAGE = `usage: cronscale dashboard [--listen HOST:PORT] [--kubeconfig PATH] [--namespaces a,b] [--no-task-cache]

Serves the web dashboard. Viewers sign in with a Kubernetes bearer token; every action runs with
that token, so the API server's authentication and RBAC decide what each viewer may do. The
dashboard's own kubeconfig (or in-cluster ServiceAccount) names the API server and its CA, and
reads the task lists shared by all viewers (each viewer's right to list them is checked first).

  --listen       address to listen on (default 127.0.0.1:8090; in a pod: 0.0.0.0:8090)
  --kubeconfig   kubeconfig naming the API server (default: KUBECONFIG, in-cluster, ~/.kube/config)
  --namespaces   namespaces offered to viewers who may not list namespaces (comma-separated)
  --no-task-cache  read every task list with the viewer's own LIST instead of a shared watched copy
  --log-level    info (default), debug, warn, error

Serve it behind TLS: its cookies are Secure, which browsers accept over plain HTTP only on
localhost.`;

/** `cronscale dashboard`: runs until SIGINT/SIGTERM; returns the exit code. */
export async function dashboardCommand(argv: string[], io: CliIO): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      allowNegative: true,
      options: {
        listen: { type: "string", default: process.env.CRONSCALE_DASHBOARD_LISTEN ?? "127.0.0.1:8090" },
        kubeconfig: { type: "string" },
        namespaces: { type: "string", default: process.env.CRONSCALE_DASHBOARD_NAMESPACES ?? "" },
        "log-level": { type: "string", default: "info" },
        "task-cache": { type: "boolean", default: true },
        help: { type: "boolean", short: "h" },
      },
    }).values;
  } catch (e) {
    io.err(`error: ${(e as Error).message}`);
    io.err(USAGE);
    return 2;
  }
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const listen = String(values.listen);
  const m = /^(.*):(\d+)$/.exec(listen);
  if (!m) {
    io.err(`error: --listen must be HOST:PORT, got "${listen}"`);
    return 2;
  }
  const kc = loadKubeConfig(values.kubeconfig as string | undefined);
  const log = createLogger({ level: String(values["log-level"]) }).child({ component: "dashboard" });
  const namespaces = String(values.namespaces)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  // The shared task lists are read as the dashboard itself (see task-cache.ts).
  const transport = KubeTransport.create(kc);
  const taskCache = values["task-cache"]
    ? new SharedTaskCache({ log, sourceFor: (ns) => new KubeListWatch(transport, TASK_TYPE, ns) })
    : undefined;
  const app = await createDashboard({
    log,
    namespaces,
    taskCache,
    viewerApi: (token) => new KubeViewerApi(kc, token),
  });
  const address = await app.listen({ host: m[1] || "0.0.0.0", port: Number(m[2]) });
  io.out(
    `dashboard: ${address.replace("127.0.0.1", "localhost")}${TASKS_PATH} (sign in at ${SIGN_IN_PATH} with a bearer token)`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await app.close();
  await taskCache?.stop();
  return 0;
}
