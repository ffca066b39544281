// Preloaded into the benchmarked operator (node --expose-gc --import=this): on SIGUSR2 it runs a
// full GC and writes the process's memory figures to $BENCH_MEMORY_FILE. The operator's own code
// is the dist/ as shipped; this only reads memory from inside.
import { readFileSync, writeFileSync } from "node:fs";
import { getHeapStatistics } from "node:v8";

process.on("SIGUSR2", () => {
  globalThis.gc?.();
  const status = readFileSync("/proc/self/status", "utf8");
  const kib = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
  const m = process.memoryUsage();
  const out = {
    heapUsedAfterGc: m.heapUsed,
    heapLimit: getHeapStatistics().heap_size_limit,
    external: m.external,
    rss: m.rss,
    vmHwm: kib("VmHWM") * 1024,
    vmRss: kib("VmRSS") * 1024,
  };
  writeFileSync(process.env.BENCH_MEMORY_FILE ?? "/dev/stderr", `${JSON.stringify(out)}\n`);
});
