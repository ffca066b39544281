import type { Logger } from "pino";
import type { KubeClient } from "./client.ts";
import type { TimerClock } from "./clock.ts";
import { errorMessage, isConflict } from "./errors.ts";
import type { KubeObject } from "./types.ts";

/** Timing and identity of a Lease-based election (client-go defaults: 15 s / 10 s / 2 s). */
export interface LeaderElectionOptions {
  client: KubeClient;
  clock: TimerClock;
  log: Logger;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  random?: () => number;
  onStartedLeading?: () => void;
  /** Called once when leadership is lost (not on release); the process must stop writing. */
  onStoppedLeading?: () => void;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

type Lease = KubeObject & { spec?: LeaseSpec };

/** Lease timestamps are MicroTime (RFC 3339 with microseconds). */
function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/**
 * Leader election over a coordination.k8s.io/v1 Lease, following client-go's algorithm: a lease
 * is considered held while its record keeps changing; expiry is judged by when *we* last saw it
 * change (local clock), so clock skew between nodes does not matter.
 */
export class LeaderElector {
  private readonly o: Required<Omit<LeaderElectionOptions, "onStartedLeading" | "onStoppedLeading">> &
    LeaderElectionOptions;
  private leader = false;
  private stopped = false;
  private observed: { rv?: string; spec?: LeaseSpec; atMs: number } | undefined;
  private lastRenewMs = 0;
  private cancelTimer: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(opts: LeaderElectionOptions) {
    this.o = {
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      random: Math.random,
      ...opts,
    };
    if (this.o.renewDeadlineMs >= this.o.leaseDurationMs)
      throw new Error("renewDeadline must be shorter than leaseDuration");
  }

  /**
   * Whether this process holds the lease *now*. Besides the flag, the last successful renewal must
   * be within the renew deadline: after a pause (GC, SIGSTOP, partition) the flag is stale until
   * the loop runs again, and a standby may already lead; this check fences writes meanwhile.
   */
  isLeader(): boolean {
    return (
      this.leader &&
      !this.stopped &&
      this.o.clock.now().getTime() - this.lastRenewMs <= this.o.renewDeadlineMs
    );
  }

  /** Starts campaigning in the background. */
  start(): void {
    this.stopped = false;
    this.loop ??= this.run();
  }

  /** Stops campaigning; if leading, releases the lease so a standby takes over at once. */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    this.stopped = true;
    this.cancelTimer?.();
    this.wake?.();
    await this.loop;
    this.loop = undefined;
    if (this.leader && (opts.release ?? true)) await this.release();
    this.leader = false;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const now = this.o.clock.now().getTime();
      let ok = false;
      try {
        ok = await this.tryAcquireOrRenew();
      } catch (err) {
        this.o.log.warn({ lease: this.o.name, err: errorMessage(err) }, "lease update failed");
      }
      if (this.stopped) break;
      if (ok) {
        this.lastRenewMs = now;
        if (!this.leader) {
          this.leader = true;
          this.o.log.info({ lease: this.o.name, identity: this.o.identity }, "became leader");
          this.o.onStartedLeading?.();
        }
      } else if (this.leader && this.o.clock.now().getTime() - this.lastRenewMs > this.o.renewDeadlineMs) {
        // Could not renew in time: someone else may hold the lease now. Stop writing immediately.
        this.leader = false;
        this.o.log.error({ lease: this.o.name, identity: this.o.identity }, "leader lease lost");
        this.o.onStoppedLeading?.();
        return;
      }
      // Candidates jitter their retries so they do not hit the server in lockstep.
      const wait = this.leader ? this.o.retryPeriodMs : this.o.retryPeriodMs * (1 + 0.2 * this.o.random());
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.cancelTimer = this.o.clock.setTimer(resolve, wait);
      });
    }
  }

  /** One round of the election; true when we hold the lease afterwards. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { client, clock, namespace, name, identity } = this.o;
    const now = clock.now();
    const live = await client.get<Lease>("coordination.k8s.io/v1", "Lease", namespace, name);
    const durationS = Math.ceil(this.o.leaseDurationMs / 1000);
    if (!live) {
      try {
        await client.create({
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name, namespace },
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: durationS,
            acquireTime: microTime(now),
            renewTime: microTime(now),
            leaseTransitions: 0,
          },
        });
        return true;
      } catch (err) {
        if (isConflict(err)) return false;
        throw err;
      }
    }
    const spec = live.spec ?? {};
    if (!this.observed || this.observed.rv !== live.metadata.resourceVersion) {
      this.observed = { rv: live.metadata.resourceVersion, spec, atMs: now.getTime() };
    }
    const holder = spec.holderIdentity ?? "";
    const held = holder !== "" && holder !== identity;
    const leaseMs = (spec.leaseDurationSeconds ?? durationS) * 1000;
    if (held && this.observed.atMs + leaseMs > now.getTime()) return false;
    const next: Lease = {
      ...live,
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds: durationS,
        acquireTime: holder === identity ? (spec.acquireTime ?? microTime(now)) : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === identity ? 0 : 1),
      },
    };
    try {
      const updated = await client.replace<Lease>(next);
      this.observed = { rv: updated.metadata.resourceVersion, spec: updated.spec, atMs: now.getTime() };
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }

  /** Gives the lease up (empty holder, 1 s duration) so the next candidate need not wait it out. */
  private async release(): Promise<void> {
    const { client, namespace, name, identity, clock } = this.o;
    try {
      const live = await client.get<Lease>("coordination.k8s.io/v1", "Lease", namespace, name);
      if (!live || live.spec?.holderIdentity !== identity) return;
      const now = microTime(clock.now());
      await client.replace({
        ...live,
        spec: { ...live.spec, holderIdentity: "", leaseDurationSeconds: 1, renewTime: now, acquireTime: now },
      });
      this.o.log.info({ lease: name, identity }, "leader lease released");
    } catch (err) {
      this.o.log.warn({ lease: name, err: errorMessage(err) }, "lease release failed");
    }
  }
}
