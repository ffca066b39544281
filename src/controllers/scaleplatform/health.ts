// The operator's own periodic HTTP check of a platform's health endpoint, and the uptime it
// implies. The check result lives in memory (one entry per platform) and reaches status only
// when something a reader cares about changes: a healthy platform causes no status writes.

/** Result of one HTTP health check. */
export interface HealthResult {
  ok: boolean;
  /** HTTP status, when an answer came. */
  statusCode?: number;
  latencyMs: number;
  /** The URL checked (no credentials in it). */
  url: string;
  message: string;
}

/** Performs one check of `url`; injected so unit tests need no network. */
export type HealthProbe = (url: string, timeoutMs: number) => Promise<HealthResult>;

/** The real probe: GET with a timeout; healthy on 2xx. */
export const httpHealthProbe: HealthProbe = async (url, timeoutMs) => {
  const start = performance.now();
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: "manual" });
    const body = (await res.text()).slice(0, 200).trim();
    const latencyMs = Math.round(performance.now() - start);
    return { ok: res.ok, statusCode: res.status, latencyMs, url, message: `HTTP ${res.status}: ${body}` };
  } catch (err) {
    const latencyMs = Math.round(performance.now() - start);
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    const message =
      err instanceof Error ? `${err.name}: ${err.message}${cause ? ` (${cause})` : ""}` : String(err);
    return { ok: false, latencyMs, url, message };
  }
};

/** What is known about one platform's health. */
export interface HealthState {
  last?: HealthResult;
  lastAt?: Date;
  /** Checks counted for uptime (only while the platform is meant to be up), and how many passed. */
  total: number;
  passed: number;
  /** Start of the uptime measurement. */
  since?: Date;
}

/** Per-platform health state, keyed by the platform's uid. */
export class HealthTracker {
  private readonly states = new Map<string, HealthState>();

  /** The state of a platform, seeded from its last status after an operator restart. */
  state(
    uid: string,
    seed?: { uptimePercent?: number; since?: string; now: Date; intervalMs: number },
  ): HealthState {
    let s = this.states.get(uid);
    if (!s) {
      s = { total: 0, passed: 0 };
      // Approximate the counts from the stored percentage and the time measured so far, so the
      // uptime does not restart at 100 % whenever the operator does.
      if (seed?.since && seed.uptimePercent !== undefined) {
        const since = new Date(seed.since);
        const total = Math.max(0, Math.floor((seed.now.getTime() - since.getTime()) / seed.intervalMs));
        s.since = since;
        s.total = total;
        s.passed = Math.round((total * seed.uptimePercent) / 100);
      }
      this.states.set(uid, s);
    }
    return s;
  }

  /** Whether a check is due. */
  due(uid: string, now: Date, intervalMs: number): boolean {
    const at = this.states.get(uid)?.lastAt;
    return !at || now.getTime() - at.getTime() >= intervalMs;
  }

  /** Records a check; `counts` says whether it counts toward uptime. */
  record(uid: string, result: HealthResult, now: Date, counts: boolean): HealthState {
    const s = this.state(uid);
    s.last = result;
    s.lastAt = now;
    if (counts) {
      s.since ??= now;
      s.total++;
      if (result.ok) s.passed++;
    }
    return s;
  }

  /** Counts the last check toward uptime when nothing has been counted yet (first deployment). */
  countLast(uid: string): void {
    const s = this.states.get(uid);
    if (!s?.last || !s.lastAt || s.total > 0) return;
    s.since = s.lastAt;
    s.total = 1;
    if (s.last.ok) s.passed = 1;
  }

  /** Forgets a deleted platform. */
  forget(uid: string): void {
    this.states.delete(uid);
  }

  /** How many platforms have a state (memory stays proportional to the live platforms). */
  get size(): number {
    return this.states.size;
  }
}

/** Uptime percentage with two decimals (so a healthy platform's value stays put at 100). */
export function uptimePercent(s: HealthState): number | undefined {
  if (s.total === 0) return undefined;
  return Math.floor((s.passed / s.total) * 10000) / 100;
}
