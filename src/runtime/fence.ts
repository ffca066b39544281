import type { Dispatcher } from "undici";

/** Carries the error a fence threw from inside undici to the caller, unwrapped. */
export class FenceRefusal extends Error {
  readonly reason: unknown;
  constructor(reason: unknown) {
    super("refused by the write fence");
    this.reason = reason;
  }
}

/**
 * `dispatcher` with `fence` called when a request is about to be written on its connection
 * (undici's onRequestStart, on a connected socket, before the request line); a throw aborts the
 * request there, before any byte of it leaves, and is passed to `onRefused`.
 */
export function fencedDispatcher(
  dispatcher: Dispatcher,
  fence: () => void,
  onRefused: (err: unknown) => void,
): Dispatcher {
  return dispatcher.compose((dispatch) => (opts, handler) => {
    // Inherits every other callback of the caller's handler, with `this` kept.
    const fenced: Dispatcher.DispatchHandler = Object.create(handler);
    fenced.onRequestStart = function (controller, context) {
      try {
        fence();
      } catch (err) {
        onRefused(err);
        controller.abort(err as Error);
        return;
      }
      handler.onRequestStart?.call(this, controller, context);
    };
    return dispatch(opts, fenced);
  });
}
