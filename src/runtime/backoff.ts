/** Exponential backoff with jitter, per key; randomness injected for deterministic tests. */
export interface BackoffOptions {
  /** First retry delay (ms). */
  baseMs?: number;
  /** Upper bound (ms). */
  maxMs?: number;
  /** Fraction of spread around the nominal delay (0.2 = ±20%). */
  jitter?: number;
  /** Source of randomness in [0, 1). */
  random?: () => number;
}

/** Delay for the n-th consecutive failure (n starts at 0): base·2ⁿ, capped, jittered. */
export function backoffDelay(n: number, opts: BackoffOptions = {}): number {
  const base = opts.baseMs ?? 50;
  const max = opts.maxMs ?? 300_000;
  const jitter = opts.jitter ?? 0.2;
  const random = opts.random ?? Math.random;
  // Cap the exponent so 2ⁿ stays finite for keys that fail forever.
  const nominal = Math.min(max, base * 2 ** Math.min(n, 52));
  const spread = nominal * jitter * (random() * 2 - 1);
  return Math.max(0, Math.min(max, Math.round(nominal + spread)));
}

/** Remembers consecutive failures per key and turns them into delays. */
export class KeyBackoff {
  private readonly failures = new Map<string, number>();
  private readonly opts: BackoffOptions;

  constructor(opts: BackoffOptions = {}) {
    this.opts = opts;
  }

  /** Records one more failure of `key` and returns how long to wait before retrying it. */
  when(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    return backoffDelay(n, this.opts);
  }

  /** Consecutive failures recorded for `key`. */
  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Clears the failure count of `key` (it succeeded). */
  forget(key: string): void {
    this.failures.delete(key);
  }
}
