// Bundles the operator's modules into one file: dist/operator.js, the module the process entry
// (dist/main.js) loads, is replaced by a bundle of itself and everything it imports (its own
// modules and its dependencies); the modules it loads on demand (the execution archive's) become
// chunks under dist/chunks/. `npm run build` runs it after tsc; the image ships its result.
//
// Why: loading ~1,000 separate modules (most of them @kubernetes/client-node's generated API)
// was most of the operator's start-up: 340 ms and 450 CPU-ms with the compile cache warm, and
// 156 MiB RSS for the import alone; one file of the same code loads in about a third of that
// (docs/benchmarks.md, "Start-up"). Everything else in dist/ (CLI, dashboard, tests' imports)
// stays tsc's output, module by module.
//
// rolldown is the bundler the test tooling already installs (vite's); it reads tsc's output, so
// the bundle runs exactly the JavaScript the type checker produced.
//
//   node hack/build/bundle-operator.ts [--dist dist]
import { existsSync, rmSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { build } from "rolldown";

const { values } = parseArgs({ options: { dist: { type: "string", default: "dist" } } });
const dist = resolve(values.dist);
const entry = `${dist}/operator.js`;
if (!existsSync(entry)) throw new Error(`${entry} missing: run tsc (npm run build) first`);

rmSync(`${dist}/chunks`, { recursive: true, force: true });
const t0 = performance.now();
await build({
  input: entry,
  platform: "node",
  // Optional peers some dependencies try to load and handle the absence of (pg's native
  // driver, prom-client's OpenTelemetry exemplars): left as runtime imports, as without a bundle.
  external: ["pg-native", "@opentelemetry/api"],
  treeshake: true,
  logLevel: "warn",
  output: {
    dir: dist,
    format: "esm",
    entryFileNames: "operator.js",
    chunkFileNames: "chunks/[name]-[hash].js",
    // tsc's map of dist/operator.js no longer matches; the bundle has none (stack traces name the
    // bundle's functions, which keep their source names).
    sourcemap: false,
  },
});
rmSync(`${entry}.map`, { force: true });
const kib = Math.round(statSync(entry).size / 1024);
process.stdout.write(`bundled ${entry} (${kib} KiB) in ${Math.round(performance.now() - t0)} ms\n`);
