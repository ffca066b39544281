// The ScheduledTask controllers as a standalone process (for hack/bench/tasks.ts, which measures
// its RSS and writes from outside). Counts its own API writes and prints them on SIGUSR2 and exit.
//   KUBECONFIG=... node hack/bench/task-operator.ts <namespace> [workers]
import { KubeConfig } from "@kubernetes/client-node";
import { DEFAULT_TASK_CONTROLLER_CONFIG } from "../../src/controllers/scheduledtask/config.ts";
import { registerScheduledTaskControllers } from "../../src/controllers/scheduledtask/index.ts";
import { KubePodLogReader } from "../../src/controllers/taskexecution/logs.ts";
import { createLogger } from "../../src/log.ts";
import { type KubeClient, RealKubeClient } from "../../src/runtime/client.ts";
import { KubeListWatch } from "../../src/runtime/listwatch.ts";
import { Manager } from "../../src/runtime/manager.ts";
import { KubeTransport } from "../../src/runtime/rest.ts";

const namespace = process.argv[2] ?? "";
const workers = Number(process.argv[3] ?? 4);
const kc = new KubeConfig();
kc.loadFromDefault();
const transport = KubeTransport.create(kc);
const real = new RealKubeClient(transport);
const writes: Record<string, number> = {};
function counted<A extends unknown[], R>(verb: string, fn: (...a: A) => Promise<R>): (...a: A) => Promise<R> {
  return (...a: A) => {
    writes[verb] = (writes[verb] ?? 0) + 1;
    return fn(...a);
  };
}
// Every write verb counted; reads pass through.
const client: KubeClient = {
  get: (...a) => real.get(...a),
  list: (...a) => real.list(...a),
  getRaw: (...a) => real.getRaw(...a),
  apply: counted("apply", (o, opts) => real.apply(o, opts)),
  applyStatus: counted("applyStatus", (o) => real.applyStatus(o)),
  create: counted("create", (o) => real.create(o)),
  replace: counted("replace", (o) => real.replace(o)),
  delete: counted("delete", (...a: Parameters<KubeClient["delete"]>) => real.delete(...a)),
};
const manager = new Manager({
  client,
  sourceFor: (type, ns) => new KubeListWatch(transport, type, ns),
  log: createLogger({ level: process.env.LOG_LEVEL ?? "warn", destination: process.stderr as never }),
  namespace,
  http: false,
  leaderElection: false,
});
registerScheduledTaskControllers(manager, {
  config: DEFAULT_TASK_CONTROLLER_CONFIG,
  logs: new KubePodLogReader(kc),
  workers,
});
const report = () => process.stdout.write(`${JSON.stringify({ writes, rss: process.memoryUsage().rss })}\n`);
process.on("SIGUSR2", report);
process.on("SIGTERM", () => {
  report();
  void manager.stop().then(() => process.exit(0));
});
await manager.start();
process.stdout.write("started\n");
