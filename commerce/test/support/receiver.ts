import { createServer, type Server } from "node:http";
import { Webhook } from "standardwebhooks";

// A real HTTP webhook receiver on 127.0.0.1 that verifies each request with the standardwebhooks
// library, as a customer's endpoint would, and answers what the test scripted.

export interface Received {
  path: string;
  id: string;
  verified: boolean;
  body: { type: string; timestamp: string; data: Record<string, unknown> };
  status: number;
  /** When the request arrived (ms since the epoch). */
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Responses for a path, in order; once used up, 204. */
  script: Map<string, { status: number; headers?: Record<string, string> }[]>;
  /** Milliseconds to wait before answering a path (a slow endpoint). */
  delays: Map<string, number>;
  waitFor: (pred: (r: Received[]) => boolean, timeoutMs?: number) => Promise<void>;
  close: () => Promise<void>;
}

export async function startReceiver(secret: string): Promise<Receiver> {
  const verifier = new Webhook(secret);
  const received: Received[] = [];
  const script: Receiver["script"] = new Map();
  const delays: Receiver["delays"] = new Map();
  const server: Server = createServer((req, res) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString();
      let verified = false;
      try {
        verifier.verify(raw, req.headers as Record<string, string>);
        verified = true;
      } catch {}
      const path = req.url ?? "/";
      const next = script.get(path)?.shift() ?? { status: 204 };
      received.push({
        path,
        id: String(req.headers["webhook-id"]),
        verified,
        body: JSON.parse(raw),
        status: next.status,
        at,
      });
      const answer = () => res.writeHead(next.status, next.headers ?? {}).end();
      const delay = delays.get(path);
      if (delay) setTimeout(answer, delay);
      else answer();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address();
  if (!addr || typeof addr !== "object") throw new Error("no address");
  return {
    url: `http://127.0.0.1:${addr.port}`,
    received,
    script,
    delays,
    waitFor: async (pred, timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!pred(received)) {
        if (Date.now() > deadline)
          throw new Error(
            `receiver: condition not met; got ${JSON.stringify(received.map((r) => [r.path, r.body.type, r.status]))}`,
          );
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
