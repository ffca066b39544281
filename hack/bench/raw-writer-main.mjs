// Entry of the raw writer's own process, the floor of tasks.ts:
//   node raw-writer-main.mjs <bundle> <namespace> <workers>
// As dist/main.js does for the operator: the module compile cache on, then the bundle loaded and
// the cache written, so both sides start the same way. Prints its CPU seconds on exit.
import module from "node:module";

module.enableCompileCache?.();
const [bundle, namespace, workers] = process.argv.slice(2);
const { runRawWriter } = await import(bundle);
module.flushCompileCache?.();
await runRawWriter(namespace, Number(workers));
const cpu = process.cpuUsage();
process.stdout.write(`${JSON.stringify({ cpuSeconds: (cpu.user + cpu.system) / 1e6 })}\n`);
process.exit(0);
