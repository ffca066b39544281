import { ApiError } from "../runtime/errors.ts";
import type { KubeTransport } from "../runtime/rest.ts";

// The API server answers 429 with a delay to retry after (Status details.retryAfterSeconds, also
// the Retry-After header) when it did not process a request: while a resource's watch cache
// (re)initializes ("storage is (re)initializing": just after a CRD is created, or after the
// cache's watch of etcd was reset) and under API Priority and Fairness. client-go, hence kubectl,
// retries such answers itself (up to 10 times). The dashboard's calls are made while the viewer
// waits for a page, so they are retried here too, within a few seconds: otherwise the viewer gets
// an error page for a state that lasts about a second.

/** How often and how long a viewer's call is retried. */
export interface RetryAfterOptions {
  attempts: number;
  /** A longer delay asked for is cut to this. */
  maxDelayMs: number;
  sleep: (ms: number) => Promise<void>;
}

const DEFAULTS: RetryAfterOptions = {
  attempts: 5,
  maxDelayMs: 2_000,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** The delay the API server asked for when it did not process the request; undefined: no retry. */
export function retryDelayMs(err: unknown): number | undefined {
  if (!(err instanceof ApiError)) return undefined;
  const seconds = (err.body as { details?: { retryAfterSeconds?: number } } | undefined)?.details
    ?.retryAfterSeconds;
  if (err.statusCode === 429) return (seconds ?? 1) * 1000;
  if (err.statusCode === 503 && seconds !== undefined) return seconds * 1000;
  return undefined;
}

/** `call`, again after the delay the API server asks for (429), at most `attempts` times in all. */
export async function withRetryAfter<T>(
  call: () => Promise<T>,
  opts: RetryAfterOptions = DEFAULTS,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      const delay = retryDelayMs(err);
      if (delay === undefined || attempt >= opts.attempts) throw err;
      await opts.sleep(Math.min(Math.max(delay, 100), opts.maxDelayMs));
    }
  }
}

/** `t` with each of its requests retried as above (its watches are not: their pages reconnect). */
export function retryingTransport(t: KubeTransport): KubeTransport {
  const request = t.request.bind(t);
  t.request = ((...args: Parameters<typeof request>) =>
    withRetryAfter(() => request(...args))) as typeof t.request;
  return t;
}
