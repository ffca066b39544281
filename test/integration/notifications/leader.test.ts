import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { type HttpSink, startHttpSink } from "../../support/notification-sinks.ts";
import { applyTask, executions, runNow } from "../scheduledtask/helpers.ts";
import { installCrds, localTaskConfig } from "../scheduledtask/operator.ts";
import {
  createSigningSecret,
  notifications,
  type OperatorChild,
  SIGNING_SECRET,
  spawnOperator,
  waitItems,
  waitNotificationCrd,
} from "./support.ts";

// Two operator processes (src/main.ts) with leader election; the leader is SIGKILLed the moment
// each transition (a finished run's TaskExecution) is in the API server — before it sends the
// message or while its request is in flight: the receiver holds every request unanswered until
// the kill, so the killed leader never learns of a delivery (the crash between the receiver's
// answer and the status write is the one window that repeats a copy; docs/notifications.md). The
// standby takes the lease, respects the dead leader's claim until it cannot be under way, and
// delivers. The receiver answers exactly one copy per transition id.

const ns = useNamespace("notify-lead", { "pod-security.kubernetes.io/enforce": "restricted" });
let http: HttpSink;
let env: Record<string, string>;
const children: OperatorChild[] = [];

beforeAll(async () => {
  await installCrds();
  await waitNotificationCrd();
  http = await startHttpSink(SIGNING_SECRET);
  await createSigningSecret(ns.name);
  const cfg = localTaskConfig({}, ["Bash"]);
  env = {
    CRONSCALE_CONTROLLERS__SCHEDULED_TASK__IMAGES__BASH: cfg.images.Bash ?? "",
    CRONSCALE_CONTROLLERS__SCHEDULED_TASK__IMAGE_PULL_POLICY: cfg.imagePullPolicy,
    CRONSCALE_NOTIFICATIONS__SECRET_NAMESPACE: ns.name,
    CRONSCALE_NOTIFICATIONS__SIGNING_SECRET__NAME: "notify-signing",
    CRONSCALE_NOTIFICATIONS__RETRY__BASE_SECONDS: "1",
    CRONSCALE_NOTIFICATIONS__RETRY__MAX_SECONDS: "2",
    // A claim of a dead leader is respected lease + 3 × this long (4 + 6 s).
    CRONSCALE_NOTIFICATIONS__HTTP_TIMEOUT_SECONDS: "2",
    CRONSCALE_LEADER_ELECTION__ENABLED: "true",
    CRONSCALE_LEADER_ELECTION__NAMESPACE: ns.name,
    CRONSCALE_LEADER_ELECTION__LEASE_DURATION_SECONDS: "4",
    CRONSCALE_LEADER_ELECTION__RENEW_DEADLINE_SECONDS: "3",
    CRONSCALE_LEADER_ELECTION__RETRY_PERIOD_SECONDS: "1",
  };
}, 600_000);
afterAll(async () => {
  for (const c of children)
    if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill("SIGTERM");
  await Promise.all(children.map((c) => c.exited));
  await http?.close();
});

function start(): OperatorChild {
  const c = spawnOperator(ns.name, env);
  children.push(c);
  return c;
}

/** The live process holding the Lease (its identity ends with the pid). */
async function leader(): Promise<OperatorChild> {
  try {
    return await waitFor(
      async () => {
        const r = await kubectl(
          ["get", "lease", "cronscale-leader", "-o", "jsonpath={.spec.holderIdentity}"],
          {
            namespace: ns.name,
          },
        );
        const holder = r.code === 0 ? r.stdout.trim() : "";
        return children.find(
          (c) => c.proc.exitCode === null && c.proc.signalCode === null && holder.endsWith(`_${c.proc.pid}`),
        );
      },
      // Two cold Node starts on a loaded machine can take most of a minute.
      { timeoutMs: 150_000, intervalMs: 300, what: "a live leader" },
    );
  } catch (err) {
    for (const c of children) process.stderr.write(`operator ${c.proc.pid}: ${c.output().slice(-2000)}\n`);
    throw err;
  }
}

/**
 * Runs the task now and SIGKILLs the leader as soon as the run's TaskExecution exists, the
 * receiver holding any request until the leader is dead. Returns the kill time and how many of
 * its requests were in flight.
 */
async function transitionThenKill(token: string, before: number): Promise<{ at: number; inFlight: number }> {
  const lead = await leader();
  http.hold.on = true;
  await runNow(ns.name, "etl", token);
  await waitFor(async () => ((await executions(ns.name, "etl")).length > before ? true : undefined), {
    timeoutMs: 150_000,
    intervalMs: 150,
    what: `run ${token} recorded`,
  });
  const at = Date.now();
  lead.proc.kill("SIGKILL");
  await lead.exited;
  await new Promise((r) => setTimeout(r, 300)); // the receiver sees the dead sender's socket close
  const inFlight = http.held();
  http.hold.on = false;
  http.release();
  return { at, inFlight };
}

describe("notifications across leadership loss", () => {
  it("the leader SIGKILLed right after each transition: the standby delivers, one message per transition id", async () => {
    start();
    start();
    await leader();
    await applyTask(ns.name, "etl", {
      schedule: "0 0 1 1 *",
      language: "Bash",
      plan: "Micro",
      timeoutSeconds: 30,
      script: "echo loading; exit 3",
      notifications: { webhooks: [`${http.url}/hook`] },
    });
    const kill1 = await transitionThenKill("lead-1", 0);
    start(); // a new standby, as a Deployment's replacement pod would be
    await waitItems(http.posts, (p) => p.some((x) => x.status === 200), "failure message", 90_000);
    const failedMs = Date.now() - kill1.at;

    await applyTask(ns.name, "etl", {
      schedule: "0 0 1 1 *",
      language: "Bash",
      plan: "Micro",
      timeoutSeconds: 30,
      script: "echo loading; exit 0",
      notifications: { webhooks: [`${http.url}/hook`] },
    });
    const kill2 = await transitionThenKill("lead-2", 1);
    await waitItems(
      http.posts,
      (p) => p.filter((x) => x.status === 200).length >= 2,
      "recovery message",
      90_000,
    );
    const recoveredMs = Date.now() - kill2.at;
    // Give a duplicate every chance to show up: resyncs, the survivors re-reading everything.
    await new Promise((r) => setTimeout(r, 6000));

    const notes = await notifications(ns.name);
    expect(notes.map((n) => n.spec.event).sort()).toEqual(["TaskFailed", "TaskRecovered"]);
    expect(notes.every((n) => n.status?.phase === "Delivered")).toBe(true);
    // The receiver, counting by id: exactly one answered message per transition.
    const accepted = http.posts.filter((p) => p.status === 200);
    expect(accepted.every((p) => p.verified)).toBe(true);
    const byId = new Map<string, number>();
    for (const p of accepted) {
      const id = String(p.headers["webhook-id"]);
      byId.set(id, (byId.get(id) ?? 0) + 1);
    }
    expect([...byId.keys()].sort()).toEqual(notes.map((n) => n.spec.id).sort());
    for (const n of byId.values()) expect(n).toBe(1);
    // A request of the killed leader that was in flight carries the same id (never a new one).
    const unanswered = http.posts.filter((p) => p.status === 0);
    for (const p of unanswered) expect(byId.has(String(p.headers["webhook-id"]))).toBe(true);
    expect(http.posts.every((p) => p.status === 200 || p.status === 0)).toBe(true);
    const events = accepted.map((p) => JSON.parse(p.body).data.event as string);
    expect(events).toEqual(["TaskFailed", "TaskRecovered"]);
    process.stderr.write(
      `notifications leader: failure delivered ${failedMs / 1000} s and recovery ${recoveredMs / 1000} s after their leader was SIGKILLed; requests in flight at the kills: ${kill1.inFlight} + ${kill2.inFlight}; ${accepted.length} answered post(s) for ${byId.size} id(s)\n`,
    );
  });
});
