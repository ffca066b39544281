import { type Dispatcher, request as undiciRequest } from "undici";
import type { HeaderMap } from "./kube-auth.ts";

/**
 * Sends a watch request and delivers its events. Events are split into lines and parsed straight
 * from the response's bytes, through undici's stream API, with an inactivity limit of our own.
 * (client-node's Watch hard-codes a 30 s limit in a private field; its fetch, web-stream and
 * readline layers cost about the same CPU per event as this: JSON.parse dominates —
 * hack/bench/watch-decode.ts.) `onDone` is called once: the server's clean close (no error), a
 * failure or non-200 answer (an error with `statusCode`), no data for `inactivityTimeoutMs`, or
 * the returned controller's `abort()`. Resolves once the answer's head is in.
 */
export async function watchStream(
  url: string,
  label: string,
  headers: HeaderMap,
  dispatcher: Dispatcher,
  onEvent: (type: string, obj: unknown) => void,
  onDone: (err: unknown) => void,
  inactivityTimeoutMs: number,
): Promise<AbortController> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let finished = false;
  const finish = (err: unknown) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    controller.abort();
    onDone(err);
  };
  // One timer, restarted by every chunk (refresh() allocates nothing; a chunk is often one event).
  const arm = () => {
    if (timer) {
      timer.refresh();
      return;
    }
    // A DOMException named TimeoutError, as an aborted fetch reports it.
    timer = setTimeout(
      () =>
        finish(new DOMException(`watch ${label}: no data within ${inactivityTimeoutMs} ms`, "TimeoutError")),
      inactivityTimeoutMs,
    );
    timer.unref();
  };
  const line = (bytes: Buffer) => {
    if (bytes.length === 0 || finished) return;
    let event: { type?: string; object?: unknown };
    try {
      event = JSON.parse(bytes.toString("utf8"));
    } catch {
      return; // not an event (as client-node's Watch, skip it)
    }
    if (typeof event?.type === "string") onEvent(event.type, event.object);
  };
  const run = async () => {
    arm();
    const res = await undiciRequest(url, { method: "GET", headers, dispatcher, signal: controller.signal });
    if (res.statusCode !== 200) {
      const text = await res.body.text().catch(() => "");
      const err = new Error(`watch ${label}: ${res.statusCode} ${text.slice(0, 200)}`);
      (err as Error & { statusCode: number }).statusCode = res.statusCode;
      throw err;
    }
    arm();
    // Bytes of a line not ended yet (a line may span chunks, a character too).
    let pending: Buffer[] = [];
    res.body.on("data", (chunk: Buffer) => {
      if (finished) return;
      arm();
      let start = 0;
      for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
        const part = chunk.subarray(start, nl);
        line(pending.length ? Buffer.concat([...pending, part]) : part);
        pending = [];
        start = nl + 1;
        if (finished) return;
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
    });
    res.body.on("end", () => {
      if (pending.length) line(Buffer.concat(pending));
      finish(null);
    });
    res.body.on("error", finish);
    res.body.on("close", () => finish(null));
  };
  // Resolves once the answer's head is in (or the watch has failed).
  await run().catch(finish);
  return controller;
}
