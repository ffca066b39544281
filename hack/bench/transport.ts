// Benchmark: client CPU per request of KubeTransport (one pooled undici dispatcher, credentials
// prepared once, undici's request API) against client-node's own request path, in the same run:
// N server-side applies of small ConfigMaps, K in flight, through each client in turn, rounds
// alternated. Figures: client CPU-ms per request (process.cpuUsage: this process only, the API
// server's CPU is not in it), wall time, p50/p99 latency, and the ratios.
//   KUBECONFIG=... npm run bench:transport -- [--count 2000] [--inflight 4] [--rounds 3] [--clients a,b]
// Clients:
// - transport: KubeTransport.request, as the operator's client applies;
// - previous:  the transport as it was, on client-node's path: a RequestContext, the kubeconfig's
//              applySecurityAuthentication per request (credentials files read, a new undici
//              Agent built) and client-node's fetch, keeping the first Agent so connections are reused;
// - prev-fenced: the previous transport's leader-fenced writes (the operator's applies): the same
//              per-request authentication, then undici's request API over HTTP/1.1;
// - client-node: KubernetesObjectApi.patch (server-side apply) as client-node's users call it:
//              the same per-request authentication with its new Agent (a new connection) each time.
// Each client applies to its own namespace (deleted at the end); round 1 creates the ConfigMaps,
// later rounds change their data. Traffic goes to the KUBECONFIG's API server only.
import { parseArgs } from "node:util";
import { KubeConfig, KubernetesObjectApi, PatchStrategy, type RequestContext } from "@kubernetes/client-node";
import { type Dispatcher, getGlobalDispatcher, request as undiciRequest } from "undici";
import { KubeTransport } from "../../src/runtime/rest.ts";

const { values } = parseArgs({
  options: {
    count: { type: "string", default: "2000" },
    inflight: { type: "string", default: "4" },
    rounds: { type: "string", default: "3" },
    /** Comma-separated subset of the clients (e.g. for a CPU profile of one). */
    clients: { type: "string", default: "transport,previous,prev-fenced,client-node" },
  },
});
const N = Number(values.count);
const INFLIGHT = Number(values.inflight);
const ROUNDS = Number(values.rounds);

const kc = new KubeConfig();
kc.loadFromDefault();
const admin = KubeTransport.create(kc);
const runId = Date.now().toString(36);

type Apply = (ns: string, name: string, round: number) => Promise<unknown>;

const configMap = (ns: string, name: string, round: number) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: ns, labels: { "app.kubernetes.io/name": "bench-transport" } },
  data: { round: String(round), payload: "x".repeat(200) },
});
const cmPath = (ns: string, name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
const SSA = { fieldManager: "bench", force: "true" };

function viaTransport(): Apply {
  const t = KubeTransport.create(kc);
  return (ns, name, round) =>
    t.request("PATCH", cmPath(ns, name), {
      query: SSA,
      body: configMap(ns, name, round),
      contentType: "application/apply-patch+yaml",
    });
}

/**
 * client-node's configuration, and a RequestContext for one apply made the way the previous
 * transport made each request: headers, then the kubeconfig's authentication run again.
 */
function previousContext() {
  const api = KubernetesObjectApi.makeApiClient(kc);
  // biome-ignore lint/suspicious/noExplicitAny: the configuration client-node built, as the transport used it
  const cfg = (api as any).configuration;
  const context = async (ns: string, name: string): Promise<RequestContext> => {
    const ctx: RequestContext = cfg.baseServer.makeRequestContext(cmPath(ns, name), "PATCH");
    for (const [k, v] of Object.entries(SSA)) ctx.setQueryParam(k, v);
    ctx.setHeaderParam("Accept", "application/json");
    ctx.setHeaderParam("User-Agent", "cronscale");
    ctx.setHeaderParam("Content-Type", "application/apply-patch+yaml");
    await kc.applySecurityAuthentication(ctx);
    return ctx;
  };
  return { cfg, context };
}

/** The transport before this one: client-node's RequestContext, per-request auth, its fetch. */
function viaPrevious(): Apply {
  const { cfg, context } = previousContext();
  let dispatcher: unknown;
  return async (ns, name, round) => {
    const ctx = await context(ns, name);
    ctx.setBody(JSON.stringify(configMap(ns, name, round)));
    dispatcher ??= ctx.getDispatcher();
    if (dispatcher) ctx.setDispatcher(dispatcher as never);
    const res = await cfg.httpApi.send(ctx).toPromise();
    const text = await res.body.text();
    if (res.httpStatusCode >= 300) throw new Error(`${res.httpStatusCode} ${text.slice(0, 200)}`);
    return JSON.parse(text);
  };
}

/**
 * The transport's leader-fenced writes as they were: the same per-request authentication, then
 * undici's request API over HTTP/1.1 on the first Agent (isolates the authentication step).
 */
function viaPreviousFenced(): Apply {
  const { context } = previousContext();
  let dispatcher: Dispatcher | undefined;
  return async (ns, name, round) => {
    const ctx = await context(ns, name);
    dispatcher ??= (ctx.getDispatcher() as Dispatcher | undefined) ?? getGlobalDispatcher();
    const res = await undiciRequest(ctx.getUrl(), {
      dispatcher,
      method: "PATCH",
      headers: ctx.getHeaders(),
      body: JSON.stringify(configMap(ns, name, round)),
      allowH2: false,
    } as Parameters<typeof undiciRequest>[1]);
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${res.statusCode} ${text.slice(0, 200)}`);
    return JSON.parse(text);
  };
}

function viaClientNode(): Apply {
  const api = KubernetesObjectApi.makeApiClient(kc);
  return (ns, name, round) =>
    api.patch(configMap(ns, name, round), undefined, undefined, "bench", true, PatchStrategy.ServerSideApply);
}

const all: Record<string, () => Apply> = {
  transport: viaTransport,
  previous: viaPrevious,
  "prev-fenced": viaPreviousFenced,
  "client-node": viaClientNode,
};
const clients: Record<string, Apply> = Object.fromEntries(
  values.clients.split(",").map((c) => {
    const make = all[c];
    if (!make) throw new Error(`unknown client ${c}: one of ${Object.keys(all).join(", ")}`);
    return [c, make()];
  }),
);
const nsOf = (client: string) => `bench-transport-${runId}-${client}`;

interface Round {
  cpuMsPerRequest: number;
  wallMs: number;
  p50: number;
  p99: number;
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

async function round(apply: Apply, ns: string, r: number): Promise<Round> {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      for (let i = next++; i < N; i = next++) {
        const s = performance.now();
        await apply(ns, `cm-${i}`, r);
        latencies.push(performance.now() - s);
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  const wallMs = performance.now() - t0;
  latencies.sort((a, b) => a - b);
  return {
    cpuMsPerRequest: (cpu.user + cpu.system) / 1000 / N,
    wallMs,
    p50: pct(latencies, 0.5),
    p99: pct(latencies, 0.99),
  };
}

/**
 * Lets the previous round's leftovers go before the next is measured: client-node's per-request
 * Agents leave idle connections that close after undici's 4 s keep-alive timeout, and their
 * garbage; either would otherwise be charged to whichever client runs next.
 */
async function settle(): Promise<void> {
  await new Promise((r) => setTimeout(r, 5_000));
  (globalThis as { gc?: () => void }).gc?.();
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const f = (x: number, d = 3) => x.toFixed(d);

try {
  for (const c of Object.keys(clients)) {
    await admin.request("POST", "/api/v1/namespaces", {
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: nsOf(c) } },
    });
  }
  // Warm-up: connections, TLS sessions, JIT, before anything is measured.
  for (const [c, apply] of Object.entries(clients)) {
    for (let i = 0; i < 50; i++) await apply(nsOf(c), `warm-${i}`, 0);
  }
  console.log(`${N} server-side applies of a ConfigMap per round, ${INFLIGHT} in flight, ${ROUNDS} rounds`);
  const results: Record<string, Round[]> = Object.fromEntries(Object.keys(clients).map((c) => [c, []]));
  for (let r = 1; r <= ROUNDS; r++) {
    // Alternated: each round starts with a different client.
    const order = Object.keys(clients);
    for (let k = 0; k < (r - 1) % order.length; k++) order.push(order.shift() as string);
    for (const c of order) {
      await settle();
      const res = await round(clients[c] as Apply, nsOf(c), r);
      results[c]?.push(res);
      console.log(
        `round ${r} ${c.padEnd(11)} cpu ${f(res.cpuMsPerRequest)} ms/req  wall ${f(res.wallMs / 1000, 2)} s  p50 ${f(res.p50, 2)} ms  p99 ${f(res.p99, 2)} ms`,
      );
    }
  }
  console.log("\nmedians of the rounds:");
  const med = (c: string, k: keyof Round) => median((results[c] ?? []).map((x) => x[k]));
  for (const c of Object.keys(clients)) {
    console.log(
      `${c.padEnd(11)} cpu ${f(med(c, "cpuMsPerRequest"))} ms/req  wall ${f(med(c, "wallMs") / 1000, 2)} s  p50 ${f(med(c, "p50"), 2)} ms  p99 ${f(med(c, "p99"), 2)} ms`,
    );
  }
  for (const c of ["previous", "prev-fenced", "client-node"].filter(
    (x) => x in clients && "transport" in clients,
  )) {
    console.log(
      `${c} / transport: cpu ${f(med(c, "cpuMsPerRequest") / med("transport", "cpuMsPerRequest"), 2)}x  wall ${f(med(c, "wallMs") / med("transport", "wallMs"), 2)}x  p50 ${f(med(c, "p50") / med("transport", "p50"), 2)}x  p99 ${f(med(c, "p99") / med("transport", "p99"), 2)}x`,
    );
  }
} finally {
  for (const c of Object.keys(clients)) {
    await admin.request("DELETE", `/api/v1/namespaces/${nsOf(c)}`).catch(() => undefined);
  }
}
process.exit(0);
