import type { Clock } from "./types.ts";

/** A clock that can also schedule callbacks; queues and informers need timers, not only "now". */
export interface TimerClock extends Clock {
  /** Runs `fn` after `ms` milliseconds; returns a function that cancels it. */
  setTimer(fn: () => void, ms: number): () => void;
  /** Resolves after `ms` milliseconds (or at once when aborted). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Wall-clock time and real timers. */
export class RealClock implements TimerClock {
  now(): Date {
    return new Date();
  }

  setTimer(fn: () => void, ms: number): () => void {
    const t = setTimeout(fn, Math.max(0, ms));
    // Timers must never keep a shutting-down process alive.
    t.unref();
    return () => clearTimeout(t);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const cancel = this.setTimer(done, ms);
      function done() {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }
      function onAbort() {
        cancel();
        done();
      }
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/** A manually advanced clock for unit tests: timers fire only from `advance`/`set`, in time order. */
export class FakeClock implements TimerClock {
  private t: number;
  private timers: PendingTimer[] = [];
  private seq = 0;

  constructor(start: Date | string | number = "2026-01-01T00:00:00Z") {
    this.t = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.t);
  }

  setTimer(fn: () => void, ms: number): () => void {
    const timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((x) => x !== timer);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const cancel = this.setTimer(resolve, ms);
      signal?.addEventListener(
        "abort",
        () => {
          cancel();
          resolve();
        },
        { once: true },
      );
    });
  }

  /** Number of timers not yet fired. */
  pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, earliest first. */
  advance(ms: number): void {
    this.set(this.t + ms);
  }

  /** Moves time to `to` (never backwards), firing due timers in order. */
  set(to: Date | number): void {
    const target = new Date(to).getTime();
    for (;;) {
      const due = this.timers.filter((x) => x.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((x) => x !== due);
      this.t = Math.max(this.t, due.at);
      due.fn();
    }
    this.t = Math.max(this.t, target);
  }
}
