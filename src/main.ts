// The operator process entry (`node dist/main.js`): turns on Node's module compile cache, then
// loads the operator (operator.ts) and runs it until a signal.
//
// Why a separate entry: loading the operator's modules is most of its start-up CPU (about 0.5 s
// before the first request, most of it compiling @kubernetes/client-node's generated API), and a
// cache only helps modules loaded after it is on — static imports of this file would load first.
// The cache lives in os.tmpdir() (NODE_COMPILE_CACHE overrides it): the chart's /tmp emptyDir, so
// a restarted container (lost leadership, crash) starts from compiled code. Where nothing is
// writable, Node reports it and runs uncached (NODE_DISABLE_COMPILE_CACHE=1 turns it off); the
// operator does not depend on it. It costs about 5 MiB of RSS (the loaded code cache).
import module from "node:module";

module.enableCompileCache?.();

const { runOperator } = await import("./operator.ts");
// Written now rather than at exit: the entries waiting to be written cost about 4 MiB of RSS for
// the life of the process (measured: +9 MiB unflushed, +5 MiB flushed, against no cache).
module.flushCompileCache?.();
const code = await runOperator(process.argv.slice(2), process.env).catch((err: unknown) => {
  process.stderr.write(`cronscale: ${err instanceof Error ? err.message : String(err)}\n`);
  return 1;
});
process.exit(code);
