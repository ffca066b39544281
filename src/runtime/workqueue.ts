import { type BackoffOptions, KeyBackoff } from "./backoff.ts";
import { RealClock, type TimerClock } from "./clock.ts";

/** Options of a WorkQueue. */
export interface WorkQueueOptions {
  clock?: TimerClock;
  backoff?: BackoffOptions;
  /** Called whenever the number of waiting keys changes (for the workqueue_depth gauge). */
  onDepth?: (depth: number) => void;
}

/**
 * A key-based work queue with client-go semantics:
 * - a key waiting in the queue is never queued twice (de-dup);
 * - a key being processed is never handed out again until `done`; adds meanwhile mark it dirty
 *   and it is requeued once when `done` is called;
 * - `addAfter` delays (the earliest pending time wins), `addRateLimited` uses per-key backoff;
 * - `shutdown` stops accepting keys and drops waiting ones; `drain` waits for in-flight keys.
 */
export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly delayed = new Map<string, { at: number; cancel: () => void }>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private readonly drainWaiters: (() => void)[] = [];
  private readonly clock: TimerClock;
  private readonly limiter: KeyBackoff;
  private readonly onDepth: (depth: number) => void;
  private shuttingDown = false;

  constructor(opts: WorkQueueOptions = {}) {
    this.clock = opts.clock ?? new RealClock();
    this.limiter = new KeyBackoff(opts.backoff);
    this.onDepth = opts.onDepth ?? (() => {});
  }

  /** Queues `key` now (no-op when already waiting or after shutdown). */
  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      this.dirty.delete(key);
      this.processing.add(key);
      waiter(key);
      return;
    }
    this.queue.push(key);
    this.onDepth(this.queue.length);
  }

  /** Queues `key` after `ms`; an earlier pending add of the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = this.clock.now().getTime() + ms;
    const existing = this.delayed.get(key);
    if (existing && existing.at <= at) return;
    existing?.cancel();
    const cancel = this.clock.setTimer(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { at, cancel });
  }

  /** Queues `key` after its per-key backoff delay; returns that delay (ms). */
  addRateLimited(key: string): number {
    const delay = this.limiter.when(key);
    this.addAfter(key, delay);
    return delay;
  }

  /** Resets the backoff of `key` (its last attempt succeeded). */
  forget(key: string): void {
    this.limiter.forget(key);
  }

  /** Consecutive failures recorded for `key`. */
  numRequeues(key: string): number {
    return this.limiter.retries(key);
  }

  /** Waits for the next key; undefined once the queue is shut down. Call `done(key)` when finished. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.queue.shift();
    if (key !== undefined) {
      this.dirty.delete(key);
      this.processing.add(key);
      this.onDepth(this.queue.length);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks `key` finished; if it was added meanwhile, it goes back in the queue. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) {
      this.dirty.delete(key);
      this.add(key);
    }
    if (this.processing.size === 0) for (const w of this.drainWaiters.splice(0)) w();
  }

  /** Keys waiting to be handed out. */
  len(): number {
    return this.queue.length;
  }

  /** Keys currently handed out and not yet done. */
  inFlight(): number {
    return this.processing.size;
  }

  /** Keys waiting for a delayed add. */
  pendingDelayed(): number {
    return this.delayed.size;
  }

  /** Whether `shutdown` was called. */
  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Stops accepting keys, drops waiting and delayed ones, and releases blocked `get` calls. */
  shutdown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const d of this.delayed.values()) d.cancel();
    this.delayed.clear();
    this.queue.length = 0;
    this.dirty.clear();
    this.onDepth(0);
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  /** Shuts down and resolves once every in-flight key is done. */
  async shutdownWithDrain(): Promise<void> {
    this.shutdown();
    if (this.processing.size === 0) return;
    await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }
}
