import { type ChildProcess, spawn } from "node:child_process";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { Notification } from "../../../src/api/v1alpha1/notification.ts";
import { createLogger } from "../../../src/log.ts";
import { DEFAULT_NOTIFICATIONS_CONFIG, type NotificationsConfig } from "../../../src/notify/config.ts";
import { registerNotificationControllers } from "../../../src/notify/index.ts";
import { RealKubeClient } from "../../../src/runtime/client.ts";
import { KubeListWatch } from "../../../src/runtime/listwatch.ts";
import { Manager } from "../../../src/runtime/manager.ts";
import { KubeTransport } from "../../../src/runtime/rest.ts";
import { kubeConfig, kubeconfigPath, kubectl, waitFor } from "../../support/cluster.ts";

// The notification controllers for the integration tests: in this process (beside the task or
// platform controllers the other helpers start), or the whole operator as a child process that a
// test can SIGKILL. Receivers (SMTP, HTTP) run on the host's loopback; so does the operator.

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));

/** The signing secret of the tests (Standard Webhooks form). */
export const SIGNING_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** Creates the administrator's signing Secret in `namespace`. */
export async function createSigningSecret(namespace: string): Promise<void> {
  await kubectl(
    ["create", "secret", "generic", "notify-signing", `--from-literal=secret=${SIGNING_SECRET}`],
    {
      namespace,
    },
  );
}

/** Channel settings pointing at the test's receivers, fast retries. */
export function testNotificationsConfig(namespace: string, smtpPort: number): NotificationsConfig {
  return {
    ...DEFAULT_NOTIFICATIONS_CONFIG,
    secretNamespace: namespace,
    email: {
      ...DEFAULT_NOTIFICATIONS_CONFIG.email,
      host: "127.0.0.1",
      port: smtpPort,
      security: "None",
      from: "cronscale <ops@cronscale.test>",
    },
    signingSecret: { name: "notify-signing", key: "secret" },
    retry: { ...DEFAULT_NOTIFICATIONS_CONFIG.retry, baseSeconds: 1, maxSeconds: 5 },
  };
}

/** Starts the notification controllers in this process, watching one namespace. */
export async function startNotifier(namespace: string, config: NotificationsConfig): Promise<Manager> {
  const transport = KubeTransport.create(kubeConfig());
  const sink = new Writable({
    write(chunk, _enc, cb) {
      if (process.env.CRONSCALE_TEST_LOGS === "1") process.stderr.write(chunk);
      cb();
    },
  });
  const manager = new Manager({
    client: new RealKubeClient(transport),
    sourceFor: (type, ns) => new KubeListWatch(transport, type, ns),
    log: createLogger({ level: "debug", destination: sink as never }),
    namespace,
    http: false,
    leaderElection: false,
  });
  registerNotificationControllers(manager, { config, workers: 2 });
  await manager.start();
  return manager;
}

/** Installs (or updates) the Notification CRD and waits until it is established. */
export async function waitNotificationCrd(): Promise<void> {
  await kubectl([
    "apply",
    "--server-side",
    "--force-conflicts",
    "-f",
    `${repoRoot}crds/notifications.cronscale.io.yaml`,
  ]);
  await kubectl(["wait", "--for=condition=Established", "--timeout=60s", "crd/notifications.cronscale.io"]);
}

/** The Notifications of a namespace. */
export async function notifications(namespace: string): Promise<Notification[]> {
  const r = await kubectl(["get", "notifications", "-o", "json"], { namespace });
  return (JSON.parse(r.stdout) as { items: Notification[] }).items;
}

/** Waits for `pred` over a list that grows (received mails or posts); returns the list. */
export function waitItems<T>(list: T[], pred: (items: T[]) => boolean, what: string, timeoutMs = 150_000) {
  return waitFor(async () => (pred(list) ? list : undefined), { timeoutMs, intervalMs: 200, what });
}

/** The whole operator (src/main.ts) as a child process, configured by CRONSCALE_* env. */
export interface OperatorChild {
  proc: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts `node src/main.ts` watching `namespace` with extra CRONSCALE_* settings. */
export function spawnOperator(namespace: string, env: Record<string, string>): OperatorChild {
  const proc = spawn(process.execPath, [`${repoRoot}src/main.ts`], {
    cwd: repoRoot,
    env: {
      ...process.env,
      KUBECONFIG: kubeconfigPath(),
      CRONSCALE_NAMESPACE: namespace,
      CRONSCALE_HTTP_HOST: "127.0.0.1",
      CRONSCALE_HTTP_PORT: "0",
      CRONSCALE_LOG_LEVEL: "debug",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
    if (process.env.CRONSCALE_TEST_LOGS === "1") process.stderr.write(d);
  });
  proc.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  return { proc, output: () => out, exited };
}
