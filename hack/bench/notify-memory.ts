// What the task notifier's view of execution records costs in memory. The notifier used to keep
// its own informer of whole TaskExecutions (output included, up to 64 KiB each) beside the task
// controllers' trimmed one; it now shares the trimmed informer (EXECUTION_CACHE) and reads the
// output of the one record a message quotes. This holds N records as an informer does (decoded
// from the API server's JSON, through the cache's transform or not) and reports the heap they
// retain after a full GC, whole vs trimmed.
//   node --expose-gc hack/bench/notify-memory.ts [--records 10000] [--output-bytes 4096]
import { parseArgs } from "node:util";
import { API_VERSION } from "../../src/api/v1alpha1/kind.ts";
import { EXECUTION_CACHE } from "../../src/controllers/scheduledtask/cache.ts";
import type { KubeObject } from "../../src/runtime/types.ts";

const { values } = parseArgs({
  options: {
    records: { type: "string", default: "10000" },
    "output-bytes": { type: "string", default: "4096" },
  },
});
const N = Number(values.records);
const OUTPUT = Number(values["output-bytes"]);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");

/** One record as the API server sends it (a window of 10 per task: 1,000 tasks = 10,000 records). */
function wire(i: number): string {
  const t = new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString().replace(/\.\d+Z$/, "Z");
  let output = "";
  for (let l = 0; output.length < OUTPUT; l++)
    output += `${t} run ${i} step ${l} value=${(l * 7919) % 10007}\n`;
  return JSON.stringify({
    apiVersion: API_VERSION,
    kind: "TaskExecution",
    metadata: {
      name: `task-${i % 1000}-${9_999_999_999 - i}`,
      namespace: "bench",
      uid: `00000000-0000-0000-0000-${String(i).padStart(12, "0")}`,
      resourceVersion: String(100_000 + i),
      labels: { "app.kubernetes.io/managed-by": "cronscale", "cronscale.io/task": `task-${i % 1000}` },
      ownerReferences: [
        { apiVersion: API_VERSION, kind: "ScheduledTask", name: `task-${i % 1000}`, uid: "u" },
      ],
    },
    spec: {
      taskName: `task-${i % 1000}`,
      trigger: "Schedule",
      jobName: `task-${i % 1000}-${i}`,
      language: "Bash",
      plan: "Micro",
      completionTime: t,
      durationSeconds: 2,
      result: i % 7 === 0 ? "Failed" : "Succeeded",
      exitCode: i % 7 === 0 ? 1 : 0,
      reason: "Completed",
      message: "exit code 0",
      output,
      outputTruncated: false,
      expiresAt: t,
    },
  });
}

function retained(transform: ((o: KubeObject) => KubeObject) | undefined): number {
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const cache = new Map<string, KubeObject>();
  for (let i = 0; i < N; i++) {
    const o = JSON.parse(wire(i)) as KubeObject;
    cache.set(`bench/${o.metadata.name}`, transform ? transform(o) : o);
  }
  gc?.();
  const bytes = process.memoryUsage().heapUsed - before;
  if (cache.size !== N) throw new Error("lost records");
  return bytes;
}

const mib = (b: number) => (b / 1048576).toFixed(1);
const whole = retained(undefined);
const trimmed = retained(EXECUTION_CACHE.transform);
console.log(`records: ${N}, output per record: ${OUTPUT} bytes`);
console.log(`notifier's own cache before (an informer of whole records): ${mib(whole)} MiB`);
console.log(
  `notifier's own cache now: 0 MiB (it shares the task controllers' trimmed informer: ${mib(trimmed)} MiB)`,
);
console.log(`whole/trimmed: ${(whole / trimmed).toFixed(1)}x`);
