import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../runtime/errors.ts";

// One server-sent-events stream for the live parts of the pages (steps, backups, task output):
// the response is taken over from fastify, kept open by a comment line every 25 s (proxies close
// idle connections), and `signal` aborts when the viewer goes away.

export interface EventStream {
  /** Sends one event; multi-line data becomes several `data:` lines. */
  send(event: string, data: string): void;
  /** Aborted when the client disconnects or the stream ends: pass it to the watch or log follow. */
  signal: AbortSignal;
  /**
   * Sends the `error` event for `err` (its HTTP status); a refusal (401, 403: access revoked) also
   * ends the stream, since every later update would be refused too.
   */
  fail(err: unknown): void;
  /** Stops the heartbeat and ends the response. */
  end(): void;
}

export function openEventStream(req: FastifyRequest, reply: FastifyReply): EventStream {
  const abort = new AbortController();
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Accel-Buffering": "no",
  });
  const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), 25_000);
  req.raw.on("close", () => abort.abort());
  const stream: EventStream = {
    send: (event, data) => {
      if (res.writableEnded) return;
      res.write(
        `event: ${event}\n${data
          .split("\n")
          .map((l) => `data: ${l}`)
          .join("\n")}\n\n`,
      );
    },
    signal: abort.signal,
    fail: (err) => {
      const status = err instanceof ApiError ? err.statusCode : undefined;
      stream.send("error", status ? `${status}` : "error");
      if (status === 401 || status === 403) stream.end();
    },
    end: () => {
      clearInterval(heartbeat);
      abort.abort();
      if (!res.writableEnded) res.end();
    },
  };
  return stream;
}
