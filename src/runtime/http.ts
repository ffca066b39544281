import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

/** A named readiness check: ok, or the reason it is not. */
export type ReadyCheck = () => { ok: boolean; detail?: string };

/** Options of the probe/metrics server. */
export interface HttpServerOptions {
  host: string;
  port: number;
  registry: Registry;
  ready: ReadyCheck;
  /** Liveness: false only when the process is wedged (defaults to always alive). */
  alive?: () => boolean;
}

/** Serves /healthz, /readyz and /metrics on one port. */
export class ProbeServer {
  private readonly server: Server;
  private readonly opts: HttpServerOptions;

  constructor(opts: HttpServerOptions) {
    this.opts = opts;
    this.server = createServer((req, res) => {
      const path = (req.url ?? "/").split("?")[0];
      const send = (code: number, body: string, type = "text/plain; charset=utf-8") => {
        res.writeHead(code, { "content-type": type, "cache-control": "no-store" });
        res.end(body);
      };
      if (req.method !== "GET" && req.method !== "HEAD") return send(405, "method not allowed\n");
      if (path === "/healthz" || path === "/livez") {
        return (this.opts.alive?.() ?? true) ? send(200, "ok\n") : send(500, "not alive\n");
      }
      if (path === "/readyz") {
        const r = this.opts.ready();
        return r.ok ? send(200, "ok\n") : send(503, `not ready: ${r.detail ?? "starting"}\n`);
      }
      if (path === "/metrics") {
        this.opts.registry.metrics().then(
          (text) => send(200, text, this.opts.registry.contentType),
          (err: unknown) => send(500, `metrics failed: ${String(err)}\n`),
        );
        return;
      }
      send(404, "not found\n");
    });
    // Probes are tiny; never let a stuck client hold a socket forever.
    this.server.requestTimeout = 10_000;
    this.server.keepAliveTimeout = 5_000;
  }

  /** Starts listening; resolves with the bound port (useful with port 0). */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.opts.port, this.opts.host, () => {
        this.server.off("error", reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  /** Stops accepting connections and closes idle ones. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
    });
  }
}
