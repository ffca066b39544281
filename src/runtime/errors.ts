/**
 * Errors carry intent: the controller decides retry behaviour from the class, not from messages.
 */

/** A problem in the object's spec: record it (condition + Event) and do not retry until the spec changes. */
export class TerminalError extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.name = "TerminalError";
    this.reason = reason;
  }
}

/** A transient failure: retry with per-key exponential backoff. */
export class RetryableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RetryableError";
  }
}

/** Not an error: something is still in progress; check again after `requeueAfterMs`. */
export class WaitError extends Error {
  readonly requeueAfterMs: number;
  constructor(requeueAfterMs: number, message = "waiting") {
    super(message);
    this.name = "WaitError";
    this.requeueAfterMs = requeueAfterMs;
  }
}

/** A non-2xx answer from the Kubernetes API, with the parsed Status body when there was one. */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly reason: string;
  readonly body: unknown;
  constructor(statusCode: number, reason: string, message: string, body?: unknown) {
    super(message);
    this.name = "ApiError";
    this.statusCode = statusCode;
    this.reason = reason;
    this.body = body;
  }
}

function status(err: unknown): number | undefined {
  if (err instanceof ApiError) return err.statusCode;
  const e = err as { statusCode?: unknown; code?: unknown } | null;
  if (e && typeof e.statusCode === "number") return e.statusCode;
  if (e && typeof e.code === "number") return e.code;
  return undefined;
}

/** True for HTTP 404. */
export function isNotFound(err: unknown): boolean {
  return status(err) === 404;
}

/** True for HTTP 409 (conflict or already exists). */
export function isConflict(err: unknown): boolean {
  return status(err) === 409;
}

/** True for HTTP 410 (resourceVersion too old: the informer must relist). */
export function isGone(err: unknown): boolean {
  return status(err) === 410;
}

/** Human-readable message of any thrown value. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
