import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { type ArchiveAnswer, getArchive } from "../archive/client.ts";
import type { CliIO } from "./next-runs.ts";

// `cronscale history|logs|usage`: read the execution archive through the operator's history
// endpoint, with the caller's own Kubernetes token (the endpoint asks the API server whether that
// token may get the task). The chart serves it over HTTPS (the Secret archive.tls.existingSecret, e.g.
// kept by cert-manager, or a CA and certificate the chart generates for the Service and 127.0.0.1), so
// the CLI trusts that CA with --ca-file, e.g.
//   kubectl -n cronscale-system get secret cronscale-history-tls -o jsonpath='{.data.ca\.crt}' | base64 -d > history-ca.crt
//   kubectl -n cronscale-system port-forward svc/cronscale-history 8081 &
//   cronscale history nightly -n shop --since 24h --ca-file history-ca.crt

const COMMON = `  -n, --namespace  namespace of the task (default: the kubeconfig context's, else "default")
      --server     the history endpoint (default $CRONSCALE_SERVER, else https://127.0.0.1:8081)
      --ca-file    PEM file of the CA that signed the endpoint's certificate (default $CRONSCALE_CA_FILE)
      --token      bearer token (default $CRONSCALE_TOKEN, else the kubeconfig user's token)
  -o, --output     table (default) or json`;

const USAGES = {
  history: `usage: cronscale history <task> [-n ns] [--since 24h] [--failed] [--output json]

Lists a task's runs from the execution archive, newest first.

      --since      only runs finished within this duration (30m, 24h, 7d) or since an RFC 3339 time
      --failed     only runs that did not succeed
      --limit      most runs listed (default 100)
${COMMON}`,
  logs: `usage: cronscale logs <task> [-n ns] [--run NAME]

Prints the console output of a task's newest run, or of the run NAME (a TaskExecution name as
\`cronscale history\` lists it).

${COMMON}`,
  usage: `usage: cronscale usage [-n ns] [--month 2026-11] [--task NAME]

Prints the month's runs, billed seconds and cost per task of a namespace (default: this month).

${COMMON}`,
} as const;

type Sub = keyof typeof USAGES;

const OPTIONS = {
  namespace: { type: "string", short: "n" },
  server: { type: "string" },
  "ca-file": { type: "string" },
  token: { type: "string" },
  output: { type: "string", short: "o" },
  since: { type: "string" },
  failed: { type: "boolean" },
  limit: { type: "string" },
  run: { type: "string" },
  month: { type: "string" },
  task: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** Namespace and token of the current kubeconfig context, when there is one. */
function fromKubeconfig(env: NodeJS.ProcessEnv): { namespace?: string; token?: string } {
  try {
    const kc = new KubeConfig();
    if (env.KUBECONFIG) kc.loadFromFile(env.KUBECONFIG.split(":")[0] ?? "");
    else kc.loadFromDefault();
    const ctx = kc.getContextObject(kc.getCurrentContext());
    return { namespace: ctx?.namespace, token: kc.getCurrentUser()?.token };
  } catch {
    return {};
  }
}

function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  return rows.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd(),
  );
}

interface Summary {
  name: string;
  spec: Record<string, unknown>;
}

/** Runs one of the three subcommands; exit 0 ok, 1 refused/failed, 2 usage. */
export async function archiveCommand(
  sub: Sub,
  argv: string[],
  io: CliIO,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  } catch (e) {
    io.err(`error: ${(e as Error).message}`);
    io.err(USAGES[sub]);
    return 2;
  }
  const { values: v, positionals } = parsed;
  if (v.help) {
    io.out(USAGES[sub]);
    return 0;
  }
  const wantTask = sub !== "usage";
  if (positionals.length !== (wantTask ? 1 : 0)) {
    io.err(wantTask ? "error: expected the task's name" : "error: usage takes no arguments");
    io.err(USAGES[sub]);
    return 2;
  }
  const output = v.output ?? "table";
  if (output !== "table" && output !== "json") {
    io.err(`error: --output must be table or json, got "${output}"`);
    return 2;
  }
  const kube = fromKubeconfig(env);
  const namespace = v.namespace ?? kube.namespace ?? "default";
  const server = (v.server ?? env.CRONSCALE_SERVER ?? "https://127.0.0.1:8081").replace(/\/$/, "");
  const caFile = v["ca-file"] ?? env.CRONSCALE_CA_FILE;
  let ca: Buffer | undefined;
  try {
    ca = caFile ? readFileSync(caFile) : undefined;
  } catch (e) {
    io.err(`error: --ca-file: ${(e as Error).message}`);
    return 2;
  }
  const token = v.token ?? env.CRONSCALE_TOKEN ?? kube.token;
  const ns = encodeURIComponent(namespace);
  const q = new URLSearchParams();
  let path: string;
  if (sub === "usage") {
    path = `/api/v1/namespaces/${ns}/usage`;
    if (v.month) q.set("month", v.month);
    if (v.task) q.set("task", v.task);
  } else {
    path = `/api/v1/namespaces/${ns}/scheduledtasks/${encodeURIComponent(positionals[0] ?? "")}/${sub}`;
    if (v.since) q.set("since", v.since);
    if (v.failed) q.set("failed", "true");
    if (v.limit) q.set("limit", v.limit);
    if (v.run) q.set("run", v.run);
  }
  let res: ArchiveAnswer;
  try {
    res = await getArchive(`${server}${path}${q.size > 0 ? `?${q}` : ""}`, token, ca);
  } catch (e) {
    io.err(`error: cannot reach the history endpoint at ${server}: ${(e as Error).message}`);
    return 1;
  }
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(res.text) as Record<string, unknown>;
  } catch {}
  if (res.status < 200 || res.status > 299) {
    io.err(`error: ${res.status}: ${String(body.error ?? res.statusText)}`);
    return 1;
  }
  if (output === "json") {
    io.out(JSON.stringify(body, null, 2));
    return 0;
  }
  if (sub === "logs") {
    const spec = (body.spec ?? {}) as Record<string, unknown>;
    io.out(String(spec.output ?? "").replace(/\n$/, ""));
    return 0;
  }
  if (sub === "history") {
    const items = (body.items ?? []) as Summary[];
    const rows = items.map((i) => [
      i.name,
      String(i.spec.result ?? ""),
      String(i.spec.exitCode ?? ""),
      String(i.spec.completionTime ?? ""),
      String(i.spec.billedSeconds ?? ""),
      `${String(i.spec.cost ?? "")} ${String(i.spec.currency ?? "")}`.trim(),
      String(i.spec.message ?? ""),
    ]);
    for (const line of table([["NAME", "RESULT", "EXIT", "FINISHED", "BILLED", "COST", "MESSAGE"], ...rows]))
      io.out(line);
    return 0;
  }
  const items = (body.items ?? []) as Record<string, unknown>[];
  const rows = items.map((u) => [
    String(u.taskName),
    String(u.runs),
    String(u.billedSeconds),
    `${String(u.cost)} ${String(u.currency)}`,
  ]);
  io.out(`${namespace}, ${String(body.month)}`);
  for (const line of table([["TASK", "RUNS", "BILLED SECONDS", "COST"], ...rows])) io.out(line);
  return 0;
}
