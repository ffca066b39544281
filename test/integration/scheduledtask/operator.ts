import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { ExecutionArchive } from "../../../src/archive/store.ts";
import {
  DEFAULT_TASK_CONTROLLER_CONFIG,
  type TaskControllerConfig,
} from "../../../src/controllers/scheduledtask/config.ts";
import { KubePodLogReader } from "../../../src/controllers/taskexecution/logs.ts";
import { registerScheduledTaskControllers } from "../../../src/controllers/tasks.ts";
import { createLogger } from "../../../src/log.ts";
import { type KubeClient, RealKubeClient } from "../../../src/runtime/client.ts";
import { KubeListWatch } from "../../../src/runtime/listwatch.ts";
import { Manager } from "../../../src/runtime/manager.ts";
import { KubeTransport } from "../../../src/runtime/rest.ts";
import { clusterEnv, hasClusterEnv, kubeConfig, kubectl } from "../../support/cluster.ts";
import { imageOverrideVar, imageRef, loadImages } from "../../support/images.ts";

// The operator's task controllers running in this test process against the test cluster, with
// the locally built runtime images, so tests see real CronJobs, Jobs, pods and records.

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));

/** Installs (or updates) the CRDs from crds/ and waits until they are established. */
export async function installCrds(): Promise<void> {
  await kubectl(["apply", "--server-side", "--force-conflicts", "-f", `${repoRoot}crds/`]);
  await kubectl([
    "wait",
    "--for=condition=Established",
    "--timeout=60s",
    "crd/scheduledtasks.cronscale.io",
    "crd/taskexecutions.cronscale.io",
  ]);
}

/** A running in-process operator: its log lines are kept for assertions. */
export interface TestOperator {
  manager: Manager;
  config: TaskControllerConfig;
  logLines: string[];
  stop(): Promise<void>;
}

const IMAGE_OF = { Bash: "bash", Python: "python", Go: "go", Bun: "bun" } as const;

/** Loads the images of `languages` into the node and returns the controllers' config using them. */
export function localTaskConfig(
  overrides: Partial<TaskControllerConfig> = {},
  languages: (keyof typeof IMAGE_OF)[] = ["Bash", "Python", "Go", "Bun"],
): TaskControllerConfig {
  // An image named by CRONSCALE_IMAGE_<NAME> is already where the node finds it: not rebuilt.
  const names = languages.map((l) => IMAGE_OF[l]).filter((n) => !process.env[imageOverrideVar(n)]);
  if (hasClusterEnv() && names.length > 0) loadImages(names, clusterEnv().CONTAINERD_ADDRESS);
  const images = { ...DEFAULT_TASK_CONTROLLER_CONFIG.images };
  for (const l of languages) images[l] = imageRef(IMAGE_OF[l]);
  return {
    ...DEFAULT_TASK_CONTROLLER_CONFIG,
    images,
    // Imported into the node's containerd: never pulled (there is no registry to pull from).
    imagePullPolicy: hasClusterEnv() ? "Never" : "IfNotPresent",
    ...overrides,
  };
}

/** Options of {@link startOperator}. */
export interface StartOptions {
  /** Wraps the operator's client (e.g. to count its requests). */
  wrapClient?: (client: KubeClient) => KubeClient;
  /** The informers' watchdog: a watch silent this long is ended and the type relisted. */
  watchdogMs?: number;
  /** The execution archive the operator writes finished runs to. */
  archive?: ExecutionArchive;
}

/** Starts the ScheduledTask controllers of the operator, watching one namespace. */
export async function startOperator(
  namespace: string,
  config: TaskControllerConfig,
  opts: StartOptions = {},
): Promise<TestOperator> {
  const kc = kubeConfig();
  const transport = KubeTransport.create(kc);
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logLines.push(String(chunk));
      if (process.env.CRONSCALE_TEST_LOGS === "1") process.stderr.write(chunk);
      cb();
    },
  });
  const log = createLogger({ level: "debug", destination: sink as never });
  const manager = new Manager({
    client: (opts.wrapClient ?? ((c) => c))(new RealKubeClient(transport)),
    sourceFor: (type, ns, o) => new KubeListWatch(transport, type, ns, o?.metadataOnly),
    log,
    namespace,
    http: false,
    leaderElection: false,
    informer: opts.watchdogMs ? { watchdogMs: opts.watchdogMs } : undefined,
  });
  registerScheduledTaskControllers(manager, {
    config,
    logs: new KubePodLogReader(KubeTransport.create(kc)),
    workers: 2,
    archive: opts.archive,
  });
  await manager.start();
  return {
    manager,
    config,
    logLines,
    stop: () => manager.stop(),
  };
}
