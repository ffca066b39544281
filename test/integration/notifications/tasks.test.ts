import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Manager } from "../../../src/runtime/manager.ts";
import { kubectl, useNamespace } from "../../support/cluster.ts";
import {
  type HttpSink,
  type SmtpSink,
  startHttpSink,
  startSmtpSink,
} from "../../support/notification-sinks.ts";
import { applyTask, runNow, waitExecutions } from "../scheduledtask/helpers.ts";
import { installCrds, localTaskConfig, startOperator, type TestOperator } from "../scheduledtask/operator.ts";
import {
  createSigningSecret,
  notifications,
  SIGNING_SECRET,
  startNotifier,
  testNotificationsConfig,
  waitItems,
  waitNotificationCrd,
} from "./support.ts";

// A task that fails, then succeeds, on the real cluster: its runs are real pods; the operator
// (task and notification controllers, in this process on the host) sends to an SMTP server and
// an HTTP receiver that this test runs on loopback.

const ns = useNamespace("notify", { "pod-security.kubernetes.io/enforce": "restricted" });
let op: TestOperator;
let notifier: Manager;
let smtp: SmtpSink;
let http: HttpSink;

beforeAll(async () => {
  await installCrds();
  await waitNotificationCrd();
  smtp = await startSmtpSink();
  http = await startHttpSink(SIGNING_SECRET);
  await createSigningSecret(ns.name);
  // Output masks values from Secrets (inline values are plain configuration, shown as written).
  await kubectl(["create", "secret", "generic", "api-token", "--from-literal=token=tok-9f8e7d6c5b"], {
    namespace: ns.name,
  });
  op = await startOperator(ns.name, localTaskConfig({}, ["Bash"]));
  notifier = await startNotifier(ns.name, testNotificationsConfig(ns.name, smtp.port));
}, 600_000);
afterAll(async () => {
  await notifier?.stop();
  await op?.stop();
  await smtp?.close();
  await http?.close();
});

const task = (script: string) => ({
  schedule: "0 0 1 1 *",
  language: "Bash",
  plan: "Micro",
  timeoutSeconds: 30,
  script,
  env: [{ name: "API_TOKEN", valueFrom: { secretKeyRef: { name: "api-token", key: "token" } } }],
  notifications: {
    email: ["dev@example.test"],
    webhooks: [`${http.url}/hook`],
    chat: [`${http.url}/chat`],
  },
});

const byPath = (p: string) => http.posts.filter((x) => x.path === p);

describe("task notifications", () => {
  it("a failing run sends one message per channel naming the task, signed, with the output masked", async () => {
    await applyTask(
      ns.name,
      "nightly",
      task('echo "connecting with $API_TOKEN"; echo "disk full" >&2; exit 3'),
    );
    await runNow(ns.name, "nightly", "fail-1");
    await waitItems(smtp.mails, (m) => m.length >= 1, "failure email");
    await waitItems(http.posts, (p) => p.length >= 2, "failure webhook and chat");

    const mail = smtp.mails[0];
    expect(mail?.to).toEqual(["dev@example.test"]);
    expect(mail?.subject).toBe(`Task ${ns.name}/nightly failed`);
    expect(mail?.text).toContain(`Task: nightly (namespace ${ns.name})`);
    expect(mail?.text).toContain("Exit code: 3");
    expect(mail?.text).toMatch(/Duration: \d+ s/);
    expect(mail?.text).toContain("disk full");
    expect(mail?.text).toContain("connecting with ****");
    expect(mail?.text).not.toContain("tok-9f8e7d6c5b");

    const [hook] = byPath("/hook");
    expect(hook?.verified).toBe(true);
    const body = JSON.parse(hook?.body ?? "{}");
    expect(body).toMatchObject({
      type: "task.failed",
      data: { task: "nightly", namespace: ns.name, result: "Failed", exitCode: "3" },
    });
    expect(hook?.headers["webhook-id"]).toBe(body.data.id);
    expect(mail?.messageId).toBe(`<${body.data.id}@cronscale>`);
    const [chat] = byPath("/chat");
    expect(chat?.verified).toBe(true);
    expect(JSON.parse(chat?.body ?? "{}").text).toContain(`*Task ${ns.name}/nightly failed*`);
  });

  it("the next success sends one recovery, and nothing is sent twice", async () => {
    await applyTask(ns.name, "nightly", task("echo all good"));
    await runNow(ns.name, "nightly", "ok-1");
    await waitItems(smtp.mails, (m) => m.length >= 2, "recovery email");
    await waitItems(http.posts, (p) => p.length >= 4, "recovery webhook and chat");
    expect(smtp.mails[1]?.subject).toBe(`Task ${ns.name}/nightly recovered`);
    expect(smtp.mails[1]?.text).toContain("succeeded again after 1 failed run");
    const hooks = byPath("/hook");
    expect(JSON.parse(hooks[1]?.body ?? "{}").type).toBe("task.recovered");
    expect(new Set(hooks.map((h) => h.headers["webhook-id"])).size).toBe(2);

    // A resync of everything (a restarted notifier re-reads all objects) sends nothing more.
    await notifier.stop();
    notifier = await startNotifier(ns.name, testNotificationsConfig(ns.name, smtp.port));
    await new Promise((r) => setTimeout(r, 4000));
    expect(smtp.mails).toHaveLength(2);
    expect(http.posts).toHaveLength(4);
    const notes = await notifications(ns.name);
    expect(notes.map((n) => [n.spec.event, n.status?.phase]).sort()).toEqual([
      ["TaskFailed", "Delivered"],
      ["TaskRecovered", "Delivered"],
    ]);
    const shown = await kubectl(["get", "notif"], { namespace: ns.name });
    expect(shown.stdout).toMatch(/SOURCE\s+EVENT\s+COUNT\s+STATUS\s+AGE/);
  });

  it("a storm folds: four failures in a row send one message, the recovery carries the three held ones", async () => {
    const storm = (script: string) => ({
      schedule: "0 0 1 1 *",
      language: "Bash",
      plan: "Micro",
      timeoutSeconds: 30,
      script,
      notifications: { webhooks: [`${http.url}/storm`], foldMinutes: 60 },
    });
    await applyTask(ns.name, "flaky", storm("echo upstream down; exit 2"));
    for (const [i, token] of ["s1", "s2", "s3", "s4"].entries()) {
      await runNow(ns.name, "flaky", token);
      await waitExecutions(ns.name, "flaky", () => true, i + 1, 120_000);
    }
    await applyTask(ns.name, "flaky", storm("echo upstream back"));
    await runNow(ns.name, "flaky", "s5");
    await waitItems(byPath("/storm"), () => byPath("/storm").length >= 2, "recovery", 120_000);
    await new Promise((r) => setTimeout(r, 3000));
    const sent = byPath("/storm").map((p) => JSON.parse(p.body).data as Record<string, unknown>);
    expect(sent.map((d) => [d.event, d.count])).toEqual([
      ["TaskFailed", 1],
      ["TaskRecovered", 4],
    ]);
    expect(String(sent[1]?.text)).toContain("after 4 failed runs");
    expect(String(sent[1]?.text)).toContain("3 of them not reported before");
  });
});
