import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useNamespace, waitFor } from "../../support/cluster.ts";
import { type HttpSink, startHttpSink } from "../../support/notification-sinks.ts";
import { applyTask, runNow } from "../scheduledtask/helpers.ts";
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

// The operator process (src/main.ts) killed with SIGKILL after a task's failure was decided but
// before the receiver took the message: a new operator process delivers it, and the receiver
// accepts exactly one message for that transition's id.

const ns = useNamespace("notify-kill", { "pod-security.kubernetes.io/enforce": "restricted" });
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
  };
}, 600_000);
afterAll(async () => {
  for (const c of children)
    if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill("SIGTERM");
  await Promise.all(children.map((c) => c.exited));
  await http?.close();
});

describe("notifications across an operator crash", () => {
  it("a Notification pending when the operator is SIGKILLed is delivered once by the next process", async () => {
    http.answer.status = 503; // the receiver is down: the first operator cannot deliver
    const first = spawnOperator(ns.name, env);
    children.push(first);
    await applyTask(ns.name, "etl", {
      schedule: "0 0 1 1 *",
      language: "Bash",
      plan: "Micro",
      timeoutSeconds: 30,
      script: "echo extracting; exit 4",
      notifications: { webhooks: [`${http.url}/hook`] },
    });
    await runNow(ns.name, "etl", "crash-1");
    await waitItems(http.posts, (p) => p.length >= 1, "first delivery attempt", 150_000);
    first.proc.kill("SIGKILL");
    expect(await first.exited).toBeNull();

    const [pending] = await notifications(ns.name);
    expect(pending?.spec.event).toBe("TaskFailed");
    expect(pending?.status?.phase).not.toBe("Delivered");
    const id = pending?.spec.id;

    http.answer.status = 200;
    const second = spawnOperator(ns.name, env);
    children.push(second);
    await waitItems(
      http.posts,
      (p) => p.some((x) => x.status === 200),
      "delivery by the new process",
      60_000,
    );
    const delivered = await waitFor(
      async () => (await notifications(ns.name)).find((n) => n.status?.phase === "Delivered"),
      { timeoutMs: 30_000, intervalMs: 500, what: "Notification Delivered" },
    );
    // Give a duplicate every chance to show up (the new process re-read everything at start).
    await new Promise((r) => setTimeout(r, 4000));

    expect((await notifications(ns.name)).length).toBe(1);
    expect(delivered.spec.id).toBe(id);
    expect(http.posts.every((p) => p.headers["webhook-id"] === id && p.verified)).toBe(true);
    expect(http.posts.filter((p) => p.status === 200)).toHaveLength(1);
    const data = JSON.parse(http.posts.at(-1)?.body ?? "{}").data;
    expect(data).toMatchObject({ task: "etl", exitCode: "4" });
    process.stderr.write(
      `notifications restart: ${http.posts.length} attempt(s) for ${id}, one accepted after the restart\n`,
    );
  });
});
