import { readFileSync } from "node:fs";
import { delimiter } from "node:path";
import { parseArgs } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { stringify } from "yaml";
import { RealKubeClient } from "../runtime/client.ts";
import { ApiError } from "../runtime/errors.ts";
import { KubeTransport } from "../runtime/rest.ts";

// What the cluster commands share: the kubectl-style flags (--kubeconfig, --context, -n, -o),
// the connection (the runtime's KubeTransport, so the kubeconfig authenticates exactly as the
// operator's does: exec plugins, client certificates, tokens, token files, auth providers), and
// printing data as a table, JSON or YAML.

/** Output streams and clock, injectable so every command is testable in-process too. */
export interface CliIO {
  out: (line: string) => void;
  err: (line: string) => void;
  now: () => Date;
}

/** A command: argv (after its name) and IO to an exit code (0 ok, 1 refused/failed, 2 usage). */
export type Command = (argv: string[], io: CliIO, env?: NodeJS.ProcessEnv) => number | Promise<number>;

/** The kubectl flags every cluster command takes. */
export const KUBE_OPTIONS = {
  kubeconfig: { type: "string" },
  context: { type: "string" },
  namespace: { type: "string", short: "n" },
  output: { type: "string", short: "o" },
  help: { type: "boolean", short: "h" },
} as const;

export const KUBE_USAGE = `  -n, --namespace   namespace (default: the kubeconfig context's, else "default")
  -o, --output      table (default), json or yaml
      --kubeconfig  kubeconfig file (default $KUBECONFIG, else ~/.kube/config)
      --context     kubeconfig context (default its current-context)`;

export type Output = "table" | "json" | "yaml";

type Options = Parameters<typeof parseArgs>[0] extends infer P
  ? P extends { options?: infer O }
    ? O
    : never
  : never;

/**
 * Parses `argv` with the kubectl flags and `extra`; prints the usage and returns an exit code
 * when there is nothing more to do (--help: 0, a usage error: 2).
 */
export function parseCommand<E extends Options>(
  argv: string[],
  io: CliIO,
  usage: string,
  extra: E,
  positionals: { min: number; max: number; what: string },
): { values: Record<string, string | boolean | undefined>; positionals: string[]; output: Output } | number {
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...KUBE_OPTIONS, ...extra },
      allowPositionals: true,
      strict: true,
    }) as typeof parsed;
  } catch (e) {
    io.err(`error: ${(e as Error).message}`);
    io.err(usage);
    return 2;
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help) {
    io.out(usage);
    return 0;
  }
  const n = parsed.positionals.length;
  if (n < positionals.min || n > positionals.max) {
    io.err(`error: expected ${positionals.what}, got ${n === 0 ? "none" : parsed.positionals.join(" ")}`);
    io.err(usage);
    return 2;
  }
  const output = (values.output ?? "table") as string;
  if (output !== "table" && output !== "json" && output !== "yaml") {
    io.err(`error: --output must be table, json or yaml, got "${output}"`);
    return 2;
  }
  return { values, positionals: parsed.positionals, output };
}

/**
 * The kubeconfig as kubectl reads it: --kubeconfig, else every file of $KUBECONFIG merged (the
 * first file's current-context wins), else ~/.kube/config, else in-cluster; --context switches.
 */
export function loadKubeconfig(
  flags: { kubeconfig?: string; context?: string },
  env: NodeJS.ProcessEnv,
): KubeConfig {
  const kc = new KubeConfig();
  const files = (flags.kubeconfig ?? env.KUBECONFIG ?? "").split(delimiter).filter((f) => f !== "");
  if (files.length === 0) kc.loadFromDefault();
  else {
    kc.loadFromFile(files[0] ?? "");
    for (const f of files.slice(1)) {
      const more = new KubeConfig();
      try {
        more.loadFromFile(f);
      } catch {
        continue; // kubectl skips a missing file of the list too
      }
      kc.mergeConfig(more, true);
    }
  }
  if (flags.context) {
    if (!kc.getContextObject(flags.context))
      throw new Error(`context "${flags.context}" not found in the kubeconfig`);
    kc.setCurrentContext(flags.context);
  }
  return kc;
}

/** A connection to the cluster of the current context, and the namespace commands act in. */
export interface Kube {
  kc: KubeConfig;
  transport: KubeTransport;
  client: RealKubeClient;
  namespace: string;
}

/** Connects as the kubeconfig's user; the namespace is -n, else the context's, else "default". */
export function connect(values: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv): Kube {
  const kc = loadKubeconfig(
    { kubeconfig: values.kubeconfig as string | undefined, context: values.context as string | undefined },
    env,
  );
  const ctx = kc.getContextObject(kc.getCurrentContext());
  const transport = KubeTransport.create(kc);
  return {
    kc,
    transport,
    client: new RealKubeClient(transport),
    namespace: (values.namespace as string | undefined) || ctx?.namespace || "default",
  };
}

/** The message of an error from the cluster, as one line. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) {
    const body = err.body as { message?: string } | undefined;
    return body?.message ? `${err.statusCode} ${err.reason}: ${body.message}` : err.message;
  }
  return (err as Error).message ?? String(err);
}

/** Runs `fn`, turning a failure (connection, authentication, a refusal) into "error: …" and exit 1. */
export async function guarded(io: CliIO, fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (err) {
    io.err(`error: ${errorText(err)}`);
    return 1;
  }
}

/** Prints `data` as JSON or YAML; false for table output (the caller prints its table). */
export function printData(io: CliIO, output: Output, data: unknown): boolean {
  if (output === "json") io.out(JSON.stringify(data, null, 2));
  else if (output === "yaml") io.out(stringify(data).replace(/\n$/, ""));
  else return false;
  return true;
}

/** Rows as aligned columns (two spaces apart), as kubectl prints them. */
export function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  return rows.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd(),
  );
}

/** The package's version (package.json), for --version. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

/** Stops waiting after `ms`, or resolves once `fn` returns something other than undefined. */
export async function pollUntil<T>(
  fn: () => Promise<T | undefined>,
  ms: number,
  intervalMs = 1000,
): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() >= end) return undefined;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
