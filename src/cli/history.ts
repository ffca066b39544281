import { readFileSync } from "node:fs";
import { type ArchiveAnswer, getArchive } from "../archive/client.ts";
import {
  type CliIO,
  connect,
  errorText,
  KUBE_USAGE,
  type Kube,
  type Output,
  parseCommand,
  printData,
  table,
} from "./common.ts";

// `cronscale history|logs|usage`: read the execution archive through the operator's history
// endpoint. By default through the API server, as the kubeconfig's own user (exec plugins, client
// certificates, tokens: the runtime's KubeTransport): the endpoint is registered as the
// aggregated API history.cronscale.io/v1alpha1 (an APIService), so the API server authenticates
// the caller and hands the endpoint the caller's identity, and the endpoint asks it
// (SubjectAccessReview) whether that user may get the task. No port-forward, no token to copy.
// --server talks to the endpoint directly instead, with a bearer token (--token, $CRONSCALE_TOKEN
// or the kubeconfig user's static token), e.g.
//   kubectl -n cronscale-system port-forward svc/cronscale-history 8081 &
//   cronscale history nightly -n shop --server https://127.0.0.1:8081 --ca-file history-ca.crt --token "$(kubectl create token ...)"

/** Path of the aggregated API the history endpoint serves through the API server. */
export const HISTORY_API = "/apis/history.cronscale.io/v1alpha1";

const COMMON = `${KUBE_USAGE}
      --server      the history endpoint itself (default $CRONSCALE_SERVER; else through the API server)
      --ca-file     with --server: PEM file of the CA of the endpoint's certificate (default $CRONSCALE_CA_FILE)
      --token       with --server: bearer token (default $CRONSCALE_TOKEN, else the kubeconfig user's token)`;

const USAGES = {
  history: `usage: cronscale history <task> [-n ns] [--since 24h] [--failed] [-o json|yaml]

Lists a task's runs from the execution archive, newest first.

      --since       only runs finished within this duration (30m, 24h, 7d) or since an RFC 3339 time
      --failed      only runs that did not succeed
      --result      only runs with this result (Succeeded, Failed, TimedOut)
      --limit       most runs listed (default 100)
      --cursor      the page after the one that printed this cursor (newest first)
${COMMON}`,
  logs: `usage: cronscale logs <task> [-n ns] [--run NAME] [-o json|yaml]

Prints the console output of a task's newest run, or of the run NAME (a TaskExecution name as
\`cronscale history\` lists it).

      --run         the run (default: the newest)
${COMMON}`,
  usage: `usage: cronscale usage [-n ns] [--month 2026-11] [--task NAME] [-o json|yaml]

Prints the month's runs, billed seconds and cost per task of a namespace (default: this month).

      --month       YYYY-MM (default: this month, UTC)
      --task        one task only (needs get on it; the namespace's usage needs list)
${COMMON}`,
} as const;

type Sub = keyof typeof USAGES;

const OPTIONS = {
  server: { type: "string" },
  "ca-file": { type: "string" },
  token: { type: "string" },
  since: { type: "string" },
  failed: { type: "boolean" },
  result: { type: "string" },
  limit: { type: "string" },
  cursor: { type: "string" },
  run: { type: "string" },
  month: { type: "string" },
  task: { type: "string" },
} as const;

interface Summary {
  name: string;
  spec: Record<string, unknown>;
}

type Answer = { body: Record<string, unknown> } | { error: string };

/** GET `path` of the endpoint directly (--server), with a bearer token. */
async function direct(
  server: string,
  path: string,
  v: Record<string, string | undefined>,
  kube: Kube | undefined,
  env: NodeJS.ProcessEnv,
): Promise<Answer> {
  const caFile = v["ca-file"] ?? env.CRONSCALE_CA_FILE;
  let ca: Buffer | undefined;
  try {
    ca = caFile ? readFileSync(caFile) : undefined;
  } catch (e) {
    return { error: `--ca-file: ${(e as Error).message}` };
  }
  const token = v.token ?? env.CRONSCALE_TOKEN ?? kube?.kc.getCurrentUser()?.token;
  let res: ArchiveAnswer;
  try {
    res = await getArchive(`${server}/api/v1${path}`, token, ca);
  } catch (e) {
    return { error: `cannot reach the history endpoint at ${server}: ${(e as Error).message}` };
  }
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(res.text) as Record<string, unknown>;
  } catch {}
  if (res.status < 200 || res.status > 299)
    return { error: `${res.status}: ${String(body.error ?? res.statusText)}` };
  return { body };
}

/** GET `path` of the aggregated API through the API server, as the kubeconfig's user. */
async function throughApiServer(kube: Kube, path: string): Promise<Answer> {
  try {
    return { body: await kube.transport.request<Record<string, unknown>>("GET", `${HISTORY_API}${path}`) };
  } catch (e) {
    const status = (e as { statusCode?: number }).statusCode;
    const body = (e as { body?: { error?: unknown; message?: unknown } }).body;
    if (status === 404 && body?.error === undefined)
      return {
        error: `404: the API server does not serve ${HISTORY_API} (no APIService for the operator's history endpoint: an operator without an execution archive, or run outside the cluster); use --server`,
      };
    if (status) return { error: `${status}: ${String(body?.error ?? body?.message ?? errorText(e))}` };
    return { error: errorText(e) };
  }
}

/** Runs one of the three subcommands; exit 0 ok, 1 refused/failed, 2 usage. */
export async function archiveCommand(
  sub: Sub,
  argv: string[],
  io: CliIO,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const wantTask = sub !== "usage";
  const p = parseCommand(argv, io, USAGES[sub], OPTIONS, {
    min: wantTask ? 1 : 0,
    max: wantTask ? 1 : 0,
    what: wantTask ? "the task's name" : "no arguments",
  });
  if (typeof p === "number") return p;
  const v = p.values as Record<string, string | undefined>;
  const server = (v.server ?? env.CRONSCALE_SERVER)?.replace(/\/$/, "");
  let kube: Kube | undefined;
  try {
    kube = connect(p.values, env);
  } catch (e) {
    // Straight to an endpoint with a token, no kubeconfig is needed.
    if (!server) {
      io.err(`error: ${errorText(e)}`);
      return 1;
    }
  }
  const namespace = v.namespace ?? kube?.namespace ?? "default";
  const q = new URLSearchParams();
  let path = `/namespaces/${encodeURIComponent(namespace)}`;
  if (sub === "usage") {
    path += "/usage";
    if (v.month) q.set("month", v.month);
    if (v.task) q.set("task", v.task);
  } else {
    path += `/scheduledtasks/${encodeURIComponent(p.positionals[0] ?? "")}/${sub}`;
    if (v.since) q.set("since", v.since);
    if (p.values.failed) q.set("failed", "true");
    if (v.result) q.set("result", v.result);
    if (v.limit) q.set("limit", v.limit);
    if (v.cursor) q.set("cursor", v.cursor);
    if (v.run) q.set("run", v.run);
  }
  if (q.size > 0) path += `?${q}`;
  const answer = server
    ? await direct(server, path, v, kube, env)
    : await throughApiServer(kube as Kube, path);
  if ("error" in answer) {
    io.err(`error: ${answer.error}`);
    return 1;
  }
  return print(sub, answer.body, namespace, io, p.output);
}

function print(
  sub: Sub,
  body: Record<string, unknown>,
  namespace: string,
  io: CliIO,
  output: Output,
): number {
  if (printData(io, output, body)) return 0;
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
    if (typeof body.next === "string") io.err(`more: --cursor ${body.next}`);
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
