// A loopback HTTP proxy in front of the API server that counts every request by verb, with
// latency and status, so the benchmark sees what the operator (dist/ as shipped, unmodified)
// really asks — reads included. Clients speak plain HTTP to 127.0.0.1 with no credentials; the
// proxy forwards over TLS with the kubeconfig's own (client certificate or token).
import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Agent, request } from "node:https";
import type { AddressInfo } from "node:net";
import type { KubeConfig } from "@kubernetes/client-node";

/** What a request does, Kubernetes style. */
export type Verb = "list" | "watch" | "get" | "apply" | "patch" | "create" | "update" | "delete" | "other";

interface Sample {
  verb: Verb;
  resource: string;
  status: number;
  ms: number;
  /** When the request started, ms after the window began. */
  at: number;
}

/** Per-verb count, 404s and latency (ms) of one measured window. */
export interface VerbStats {
  count: number;
  notFound: number;
  p50: number;
  p99: number;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return +sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
}

/** Classifies a request from its method and URL. */
export function verbOf(
  method: string,
  url: URL,
  contentType: string | undefined,
): { verb: Verb; resource: string } {
  const parts = url.pathname.split("/").filter(Boolean);
  // /api/v1/namespaces/ns/configmaps/name[/status] or /apis/g/v/namespaces/ns/kind/name[/sub]
  const rest = parts[0] === "api" ? parts.slice(2) : parts.slice(3);
  const scoped = rest[0] === "namespaces" && rest.length >= 3 ? rest.slice(2) : rest;
  const resource = scoped.length >= 3 ? `${scoped[0]}/${scoped[2]}` : (scoped[0] ?? "");
  const named = scoped.length >= 2;
  let verb: Verb = "other";
  if (method === "GET") verb = url.searchParams.get("watch") === "true" ? "watch" : named ? "get" : "list";
  else if (method === "PATCH") verb = contentType?.startsWith("application/apply-patch") ? "apply" : "patch";
  else if (method === "POST") verb = "create";
  else if (method === "PUT") verb = "update";
  else if (method === "DELETE") verb = "delete";
  return { verb, resource };
}

/** The counting proxy; `kubeconfigFor()` writes a kubeconfig pointing at it. */
export class CountingProxy {
  private readonly server: Server;
  private readonly kc: KubeConfig;
  private readonly target: URL;
  private agent: Agent | undefined;
  private headers: Record<string, string> = {};
  private samples: Sample[] = [];
  /** Requests but watches sent and not yet answered in full (settled). */
  private inFlight = 0;
  private windowStart = performance.now();
  port = 0;

  constructor(kc: KubeConfig) {
    this.kc = kc;
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("kubeconfig has no current cluster");
    this.target = new URL(cluster.server);
    this.server = createServer((req, res) => this.forward(req, res));
  }

  async start(): Promise<void> {
    const opts: { ca?: Buffer; cert?: Buffer; key?: Buffer; headers?: Record<string, string> } = {};
    await this.kc.applyToHTTPSOptions(opts as never);
    this.headers = (opts.headers ?? {}) as Record<string, string>;
    this.agent = new Agent({ keepAlive: true, ca: opts.ca, cert: opts.cert, key: opts.key });
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
    this.agent?.destroy();
  }

  /** Writes a kubeconfig (plain HTTP to this proxy, no credentials) and returns its path. */
  kubeconfigFor(path: string): string {
    writeFileSync(
      path,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        // client-node refuses plain HTTP unless TLS verification is declared off (there is no TLS here).
        clusters: [
          {
            name: "proxy",
            cluster: { server: `http://127.0.0.1:${this.port}`, "insecure-skip-tls-verify": true },
          },
        ],
        users: [{ name: "proxy", user: {} }],
        contexts: [{ name: "proxy", context: { cluster: "proxy", user: "proxy" } }],
        "current-context": "proxy",
      }),
    );
    return path;
  }

  /** Starts a new window; returns the samples of the one that ended. */
  reset(): Sample[] {
    const s = this.samples;
    this.samples = [];
    this.windowStart = performance.now();
    return s;
  }

  /**
   * Resolves when no request but watches is in flight (or after `timeoutMs`). A request is counted
   * when its answer has been relayed, so a round that ended on a watch event (the last status
   * seen) may still be relaying that write's answer: wait for it before reading the counts.
   */
  async settled(timeoutMs = 5000): Promise<void> {
    for (const end = performance.now() + timeoutMs; this.inFlight > 0 && performance.now() < end; )
      await new Promise((r) => setTimeout(r, 10));
  }

  /** Writes (every verb that changes something) counted so far in this window. */
  writes(): number {
    return this.samples.filter((s) => !["list", "watch", "get", "other"].includes(s.verb)).length;
  }

  /** The current window by verb. */
  stats(): Record<string, VerbStats> {
    const by = new Map<string, Sample[]>();
    for (const s of this.samples) by.set(s.verb, [...(by.get(s.verb) ?? []), s]);
    const out: Record<string, VerbStats> = {};
    for (const [verb, list] of [...by].sort()) {
      const ms = list.map((s) => s.ms).sort((a, b) => a - b);
      out[verb] = {
        count: list.length,
        notFound: list.filter((s) => s.status === 404).length,
        p50: quantile(ms, 0.5),
        p99: quantile(ms, 0.99),
      };
    }
    return out;
  }

  /**
   * When things happened in the current window (s after it began): the first request, the end of
   * the last LIST that started before the first write (the caches' initial sync), the first and
   * the last write answered.
   */
  timeline(): { firstRequest?: number; listsDone?: number; firstWrite?: number; lastWrite?: number } {
    const sec = (ms: number | undefined) => (ms === undefined ? undefined : +(ms / 1000).toFixed(2));
    const isWrite = (s: Sample) => !["list", "watch", "get", "other"].includes(s.verb);
    const writes = this.samples.filter(isWrite);
    const firstWrite = Math.min(...writes.map((s) => s.at));
    const lists = this.samples.filter((s) => s.verb === "list" && s.at < firstWrite);
    return {
      firstRequest: sec(this.samples.length ? Math.min(...this.samples.map((s) => s.at)) : undefined),
      listsDone: sec(lists.length ? Math.max(...lists.map((s) => s.at + s.ms)) : undefined),
      firstWrite: sec(writes.length ? Math.min(...writes.map((s) => s.at + s.ms)) : undefined),
      lastWrite: sec(writes.length ? Math.max(...writes.map((s) => s.at + s.ms)) : undefined),
    };
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const t0 = performance.now();
    const at = t0 - this.windowStart;
    const url = new URL(req.url ?? "/", this.target);
    const { verb, resource } = verbOf(req.method ?? "GET", url, req.headers["content-type"]);
    const headers = { ...req.headers, ...this.headers, host: this.target.host };
    let open = verb !== "watch";
    if (open) this.inFlight++;
    const closed = () => {
      if (open) this.inFlight--;
      open = false;
    };
    const up = request(url, { method: req.method, headers, agent: this.agent }, (upRes: IncomingMessage) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
      const record = () =>
        this.samples.push({
          verb,
          resource,
          status: upRes.statusCode ?? 0,
          ms: performance.now() - t0,
          at,
        });
      // A watch streams for minutes: count it when it starts (latency to its first byte).
      if (verb === "watch") record();
      else upRes.on("end", record);
      upRes.on("close", closed); // after "end"
    });
    up.on("error", () => {
      closed();
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on("close", () => {
      closed();
      up.destroy();
    });
    req.pipe(up);
  }
}
