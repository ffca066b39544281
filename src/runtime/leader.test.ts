import { describe, expect, it } from "vitest";
import { silentLogger } from "../log.ts";
import { FakeClock } from "./clock.ts";
import { FakeKubeClient } from "./fake-client.ts";
import { LeaderElector } from "./leader.ts";

async function settle(rounds = 30): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}

/** Advances the fake clock in small steps so the election loops get to run between timers. */
async function run(clock: FakeClock, ms: number, step = 250): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    clock.advance(step);
    await settle();
  }
}

function candidate(client: FakeKubeClient, clock: FakeClock, identity: string) {
  const log: string[] = [];
  const e = new LeaderElector({
    client,
    clock,
    log: silentLogger(),
    namespace: "ns",
    name: "lease",
    identity,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    random: () => 0,
    onStartedLeading: () => log.push("started"),
    onStoppedLeading: () => log.push("stopped"),
  });
  return { e, log };
}

const lease = (c: FakeKubeClient) => c.get("coordination.k8s.io/v1", "Lease", "ns", "lease");

describe("LeaderElector", () => {
  it("the first candidate creates the lease and leads; the second waits", async () => {
    const clock = new FakeClock();
    const client = new FakeKubeClient({ clock });
    const a = candidate(client, clock, "a");
    const b = candidate(client, clock, "b");
    a.e.start();
    await settle();
    b.e.start();
    await run(clock, 20_000);
    expect(a.e.isLeader()).toBe(true);
    expect(b.e.isLeader()).toBe(false);
    expect((await lease(client))?.spec).toMatchObject({
      holderIdentity: "a",
      leaseDurationSeconds: 15,
      leaseTransitions: 0,
    });
    await a.e.stop({ release: false });
    await b.e.stop();
  });

  it("a standby takes over within lease duration after the leader vanishes", async () => {
    const clock = new FakeClock();
    const client = new FakeKubeClient({ clock });
    const a = candidate(client, clock, "a");
    const b = candidate(client, clock, "b");
    a.e.start();
    await settle();
    b.e.start();
    await run(clock, 5_000);
    // Simulate kill -9: the leader stops renewing without releasing.
    await a.e.stop({ release: false });
    const killedAt = clock.now().getTime();
    let tookOverAt = 0;
    for (let i = 0; i < 200 && !tookOverAt; i++) {
      await run(clock, 250, 250);
      if (b.e.isLeader()) tookOverAt = clock.now().getTime();
    }
    expect(tookOverAt - killedAt).toBeLessThanOrEqual(15_000 + 2_500);
    expect(tookOverAt - killedAt).toBeGreaterThan(10_000);
    expect((await lease(client))?.spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
    await b.e.stop();
  });

  it("a released lease is taken over on the next retry", async () => {
    const clock = new FakeClock();
    const client = new FakeKubeClient({ clock });
    const a = candidate(client, clock, "a");
    const b = candidate(client, clock, "b");
    a.e.start();
    await settle();
    b.e.start();
    await run(clock, 3_000);
    await a.e.stop();
    expect((await lease(client))?.spec).toMatchObject({ holderIdentity: "" });
    await run(clock, 3_000);
    expect(b.e.isLeader()).toBe(true);
    await b.e.stop();
  });

  it("a leader that cannot renew within the deadline steps down and says so once", async () => {
    const clock = new FakeClock();
    const client = new FakeKubeClient({ clock });
    const a = candidate(client, clock, "a");
    a.e.start();
    await run(clock, 3_000);
    expect(a.log).toEqual(["started"]);
    client.injectError = () => new Error("apiserver unreachable");
    await run(clock, 12_500);
    expect(a.e.isLeader()).toBe(false);
    expect(a.log).toEqual(["started", "stopped"]);
    await a.e.stop();
  });

  it("rejects a renew deadline not shorter than the lease", () => {
    const clock = new FakeClock();
    const client = new FakeKubeClient({ clock });
    expect(
      () =>
        new LeaderElector({
          client,
          clock,
          log: silentLogger(),
          namespace: "n",
          name: "l",
          identity: "i",
          leaseDurationMs: 5000,
          renewDeadlineMs: 5000,
        }),
    ).toThrow();
  });
});
