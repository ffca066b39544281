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
import { builtinModules, createRequire } from "node:module";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { build, type Plugin } from "rolldown";

const { values } = parseArgs({ options: { dist: { type: "string", default: "dist" } } });
const dist = resolve(values.dist);
const entry = `${dist}/operator.js`;
if (!existsSync(entry)) throw new Error(`${entry} missing: run tsc (npm run build) first`);

/**
 * ES `import`s of Node's built-in modules become `require`s. Importing a built-in as an ES module
 * makes Node build a facade of all its exports, which reads every lazy one: for node:http that
 * loads Node's internal copy of undici for http.WebSocket (alone, in a quiet process: 21 ms as an
 * import, 2 ms by require; in this bundle about 6 CPU-ms of its import, median of 8 runs).
 * `require` reads only what is used. Only import statements: a bundled
 * CommonJS module's `require("http")` already gets the module object itself, and must (it may
 * assign to it, e.g. http.globalAgent).
 */
function builtinsByRequire(): Plugin {
  const prefix = "\0builtin-by-require:";
  const load = createRequire(import.meta.url);
  return {
    name: "builtins-by-require",
    resolveId(id, _importer, extra) {
      if (extra.kind !== "import-statement") return null;
      const name = id.startsWith("node:") ? id.slice(5) : id;
      // node:module is how the facade gets `require`; the rest are cheap or have no lazy exports.
      if (name === "module" || !builtinModules.includes(name)) return null;
      return { id: prefix + name };
    },
    load(id) {
      if (!id.startsWith(prefix)) return null;
      const name = id.slice(prefix.length);
      const mod = load(`node:${name}`) as Record<string, unknown>;
      // Plain properties only: a lazy one (a getter) is read by whoever uses it, through `default`.
      const names = Object.keys(mod).filter(
        (k) =>
          /^[A-Za-z_$][\w$]*$/.test(k) && k !== "default" && !Object.getOwnPropertyDescriptor(mod, k)?.get,
      );
      return [
        `import { createRequire } from "node:module";`,
        `const m = createRequire(import.meta.url)("node:${name}");`,
        "export default m;",
        ...names.map((k) => `export const ${k} = m.${k};`),
      ].join("\n");
    },
  };
}

rmSync(`${dist}/chunks`, { recursive: true, force: true });
const t0 = performance.now();
await build({
  input: entry,
  platform: "node",
  // Optional peers some dependencies try to load and handle the absence of (pg's native
  // driver, prom-client's OpenTelemetry exemplars): left as runtime imports, as without a bundle.
  external: ["pg-native", "@opentelemetry/api"],
  plugins: [builtinsByRequire()],
  treeshake: {
    // client-node's generated models only define classes; unused, they go (others: the default).
    moduleSideEffects: (id: string) =>
      /@kubernetes\/client-node\/dist\/gen\/models\//.test(id) ? false : undefined,
  },
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
