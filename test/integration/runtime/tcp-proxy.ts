import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A loopback TCP proxy in front of the API server, so a test can cut every connection (a real
 * broken watch: the client sees its socket die) and refuse new ones for a while.
 */
export class TcpProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private refusing = false;
  port = 0;

  constructor(targetHost: string, targetPort: number) {
    this.server = createServer((client) => {
      if (this.refusing) {
        client.destroy();
        return;
      }
      const upstream = connect(targetPort, targetHost);
      this.sockets.add(client);
      this.sockets.add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on("error", drop).on("close", drop);
      upstream.on("error", drop).on("close", drop);
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  /** Listens on 127.0.0.1 on a free port. */
  listen(): Promise<number> {
    return new Promise((resolve) => {
      this.server.listen(0, "127.0.0.1", () => {
        const addr = this.server.address();
        this.port = typeof addr === "object" && addr ? addr.port : 0;
        resolve(this.port);
      });
    });
  }

  /** Destroys every open connection and refuses new ones until `restore`. */
  cut(): void {
    this.refusing = true;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  /** Accepts connections again. */
  restore(): void {
    this.refusing = false;
  }

  /** Open proxied connections (both directions counted). */
  openConnections(): number {
    return this.sockets.size;
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
