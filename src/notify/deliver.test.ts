import { describe, expect, it } from "vitest";
import { API_VERSION } from "../api/v1alpha1/kind.ts";
import type { Notification } from "../api/v1alpha1/notification.ts";
import type { KubeObject } from "../runtime/types.ts";
import { DeliveryReconciler } from "./deliver.ts";
import type { HttpPost, HttpSender, MailMessage, MailSender } from "./senders.ts";
import { decideTask } from "./task.ts";
import { asNotes, makeCtx, makeRun, makeTask, TEST_CONFIG } from "./testing.ts";

/** Senders that record what they were asked and fail while `down` says so. */
function fakeSenders() {
  const state = { mailDown: false, httpDown: false };
  const mails: MailMessage[] = [];
  const posts: HttpPost[] = [];
  const mail: MailSender = {
    async send(m) {
      if (state.mailDown) throw new Error("connect ECONNREFUSED 127.0.0.1:25");
      mails.push(m);
      return "250 OK";
    },
  };
  const http: HttpSender = {
    async post(p) {
      if (state.httpDown) throw new Error("HTTP 503: busy");
      posts.push(p);
      return "HTTP 200";
    },
  };
  return { state, mails, posts, mail, http };
}

const signing: KubeObject = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "notify-signing", namespace: "cronscale-system" },
  data: { secret: Buffer.from("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").toString("base64") },
};

function failedTaskNote(): Notification {
  const task = makeTask("nightly", { chat: ["http://chat.test/hook"] });
  const runs = [makeRun(task, "2026-01-01T00:00:10Z", "Failed")];
  const d = decideTask(task, runs, [], new Date("2026-01-01T00:00:20Z"), 1440);
  return asNotes(task, d.decided, "2026-01-01T00:00:20Z")[0] as Notification;
}

async function stored(client: ReturnType<typeof makeCtx>["client"], n: Notification) {
  return (await client.get<Notification>(
    API_VERSION,
    "Notification",
    "ns",
    n.metadata.name ?? "",
  )) as Notification;
}

const config = { ...TEST_CONFIG, signingSecret: { name: "notify-signing", key: "secret" } };

describe("DeliveryReconciler", () => {
  it("delivers to every target once, signs webhook and chat, and records it in status", async () => {
    const note = failedTaskNote();
    const { ctx, client } = makeCtx([note, signing]);
    const s = fakeSenders();
    const r = new DeliveryReconciler({ config, mail: s.mail, http: s.http });
    const key = { namespace: "ns", name: note.metadata.name ?? "" };
    expect(await r.reconcile(key, ctx)).toEqual({});
    expect(s.mails).toHaveLength(1);
    expect(s.mails[0]).toMatchObject({ to: ["dev@example.test"], subject: "Task ns/nightly failed" });
    expect(s.mails[0]?.messageId).toBe(`<${note.spec.id}@cronscale>`);
    expect(s.posts.map((p) => p.url)).toEqual(["http://hook.test/x", "http://chat.test/hook"]);
    expect(s.posts.every((p) => p.sign?.id === note.spec.id && p.sign.secret.startsWith("whsec_"))).toBe(
      true,
    );
    expect(JSON.parse(s.posts[1]?.body ?? "{}").text).toContain("*Task ns/nightly failed*");
    const after = await stored(client, note);
    expect(after.status?.phase).toBe("Delivered");
    expect(after.status?.deliveries?.map((d) => [d.target, d.state, d.attempts])).toEqual([
      ["email", "Delivered", 1],
      ["webhook-0", "Delivered", 1],
      ["chat-0", "Delivered", 1],
    ]);
    // A restarted operator (new reconciler) finds nothing left to send.
    client.clearWrites();
    await new DeliveryReconciler({ config, mail: s.mail, http: s.http }).reconcile(key, ctx);
    expect(s.mails).toHaveLength(1);
    expect(s.posts).toHaveLength(2);
    expect(client.writes).toEqual([]);
  });

  it("retries a failing channel with backoff, keeps what was delivered, and says DeliveryFailing after repeated failures", async () => {
    const note = failedTaskNote();
    const { ctx, client, clock, events } = makeCtx([note, signing], "2026-01-01T00:00:20Z");
    const s = fakeSenders();
    s.state.httpDown = true;
    const r = new DeliveryReconciler({ config, mail: s.mail, http: s.http, random: () => 0.5 });
    const key = { namespace: "ns", name: note.metadata.name ?? "" };
    const first = await r.reconcile(key, ctx);
    expect(first.requeueAfter).toBe(10_000);
    let st = (await stored(client, note)).status;
    expect(st?.phase).toBe("Retrying");
    expect(st?.deliveries?.find((d) => d.target === "webhook-0")).toMatchObject({
      state: "Pending",
      attempts: 1,
      nextAttemptTime: "2026-01-01T00:00:30Z",
      message: "HTTP 503: busy",
    });
    expect(events.withReason("NotificationDeliveryFailed")).toHaveLength(2);
    expect(events.events[0]?.regarding).toMatchObject({ kind: "ScheduledTask", name: "nightly" });

    // Not before it is due: nothing is attempted.
    clock.advance(5_000);
    await r.reconcile(key, ctx);
    expect(events.withReason("NotificationDeliveryFailed")).toHaveLength(2);

    clock.advance(5_000);
    expect((await r.reconcile(key, ctx)).requeueAfter).toBe(20_000);
    clock.advance(20_000);
    await r.reconcile(key, ctx);
    st = (await stored(client, note)).status;
    expect(st?.conditions?.find((c) => c.type === "Delivered")).toMatchObject({
      status: "False",
      reason: "DeliveryFailing",
    });
    expect(s.mails).toHaveLength(1);

    s.state.httpDown = false;
    clock.advance(40_000);
    await r.reconcile(key, ctx);
    st = (await stored(client, note)).status;
    expect(st?.phase).toBe("Delivered");
    expect(st?.deliveries?.find((d) => d.target === "webhook-0")?.attempts).toBe(4);
    expect(s.posts).toHaveLength(2);
    expect(s.mails).toHaveLength(1);
  });

  it("gives up after giveUpHours and marks the Notification Failed", async () => {
    const note = failedTaskNote();
    note.spec.recipients = { webhooks: ["http://hook.test/x"] };
    const { ctx, client } = makeCtx([note, signing], "2026-01-02T01:00:00Z");
    const s = fakeSenders();
    s.state.httpDown = true;
    const r = new DeliveryReconciler({ config, mail: s.mail, http: s.http });
    expect(await r.reconcile({ namespace: "ns", name: note.metadata.name ?? "" }, ctx)).toEqual({});
    const st = (await stored(client, note)).status;
    expect(st?.phase).toBe("Failed");
    expect(st?.conditions?.[0]).toMatchObject({ status: "False", reason: "DeliveryGaveUp" });
  });

  it("fails a channel the administrator did not configure without retrying", async () => {
    const note = failedTaskNote();
    note.spec.recipients = { email: ["dev@example.test"] };
    const { ctx, client, events } = makeCtx([note]);
    const s = fakeSenders();
    const noMail = { ...TEST_CONFIG, email: { ...TEST_CONFIG.email, host: "" } };
    await new DeliveryReconciler({ config: noMail, mail: s.mail, http: s.http }).reconcile(
      { namespace: "ns", name: note.metadata.name ?? "" },
      ctx,
    );
    expect((await stored(client, note)).status?.phase).toBe("Failed");
    expect(events.events[0]?.note).toContain("email is not configured on this operator");
  });
});
