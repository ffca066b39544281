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

  it("claims a target in status, with its identity, before it sends", async () => {
    const note = failedTaskNote();
    note.spec.recipients = { webhooks: ["http://hook.test/x"] };
    const { ctx, client } = makeCtx([note, signing]);
    const seen: (string | undefined)[] = [];
    const http: HttpSender = {
      async post() {
        const st = (await stored(client, note)).status;
        seen.push(st?.deliveries?.[0]?.claimedBy);
        return "HTTP 200";
      },
    };
    const r = new DeliveryReconciler({ config, mail: fakeSenders().mail, http, identity: "op-a_1" });
    await r.reconcile({ namespace: "ns", name: note.metadata.name ?? "" }, ctx);
    expect(seen).toEqual(["op-a_1"]);
    const d = (await stored(client, note)).status?.deliveries?.[0];
    expect(d).toMatchObject({ state: "Delivered", attempts: 1 });
    expect(d?.claimedBy).toBeUndefined();
  });

  it("a claim left by another replica is respected until it cannot be under way, then sent again under the same id", async () => {
    const note = failedTaskNote();
    note.spec.recipients = { webhooks: ["http://hook.test/x"] };
    const { ctx, client, clock } = makeCtx([note, signing], "2026-01-01T00:00:30Z");
    // The previous leader claimed the webhook at :29 and died before recording an outcome.
    await client.applyStatus({
      apiVersion: API_VERSION,
      kind: "Notification",
      metadata: { name: note.metadata.name, namespace: "ns" },
      status: {
        phase: "Pending",
        deliveries: [
          {
            target: "webhook-0",
            channel: "Webhook",
            state: "Pending",
            attempts: 0,
            claimedBy: "op-a_1",
            claimedTime: "2026-01-01T00:00:29Z",
          },
        ],
      },
    });
    // Without leader election (one replica), another identity's claim is a dead process's.
    const single = fakeSenders();
    const alone = new DeliveryReconciler({
      config,
      mail: single.mail,
      http: single.http,
      identity: "op-c_3",
    });
    const copy = structuredClone(await stored(client, note));
    const { ctx: ctx1, client: client1 } = makeCtx([copy, signing], "2026-01-01T00:00:30Z");
    await alone.reconcile({ namespace: "ns", name: note.metadata.name ?? "" }, ctx1);
    expect(single.posts).toHaveLength(1);
    expect((await stored(client1, note)).status?.phase).toBe("Delivered");

    const s = fakeSenders();
    // Lease 4 s, send timeout 3 × 10 s: the claim holds until :29 + 34 s = :63.
    const r = new DeliveryReconciler({
      config,
      mail: s.mail,
      http: s.http,
      identity: "op-b_2",
      leaseDurationMs: 4000,
    });
    const key = { namespace: "ns", name: note.metadata.name ?? "" };
    expect((await r.reconcile(key, ctx)).requeueAfter).toBe(33_000);
    expect(s.posts).toHaveLength(0);
    clock.advance(33_000);
    expect(await r.reconcile(key, ctx)).toEqual({});
    expect(s.posts.map((p) => p.sign?.id)).toEqual([note.spec.id]);
    const d = (await stored(client, note)).status?.deliveries?.[0];
    expect(d).toMatchObject({ state: "Delivered", attempts: 1 });
    expect(d?.claimedBy).toBeUndefined();
  });

  it("does not send when another replica wrote the status after it was read (the claim's precondition fails)", async () => {
    const note = failedTaskNote();
    note.spec.recipients = { webhooks: ["http://hook.test/x"] };
    const { ctx, client } = makeCtx([note, signing]);
    const s = fakeSenders();
    const r = new DeliveryReconciler({ config, mail: s.mail, http: s.http, identity: "op-b_2" });
    // Between this replica's read and its claim, another replica claims (status write).
    const get = client.get.bind(client);
    let raced = false;
    client.get = (async (...args: Parameters<typeof client.get>) => {
      const o = await get(...args);
      if (!raced && args[1] === "Notification") {
        raced = true;
        await client.applyStatus({
          apiVersion: API_VERSION,
          kind: "Notification",
          metadata: { name: note.metadata.name, namespace: "ns" },
          status: { phase: "Pending", deliveries: [] },
        });
      }
      return o;
    }) as typeof client.get;
    expect(await r.reconcile({ namespace: "ns", name: note.metadata.name ?? "" }, ctx)).toEqual({
      requeueAfter: 250,
    });
    expect(s.posts).toHaveLength(0);
  });

  it("records an accepted delivery whose status write failed without sending it again", async () => {
    const note = failedTaskNote();
    note.spec.recipients = { webhooks: ["http://hook.test/x"] };
    const { ctx, client } = makeCtx([note, signing]);
    const s = fakeSenders();
    const r = new DeliveryReconciler({ config, mail: s.mail, http: s.http, identity: "op-a_1" });
    const key = { namespace: "ns", name: note.metadata.name ?? "" };
    // The claim goes through; the outcome's write fails once (API server unavailable).
    let statusWrites = 0;
    client.injectError = (verb) =>
      verb === "applyStatus" && ++statusWrites === 2 ? new Error("503 ServiceUnavailable") : undefined;
    await expect(r.reconcile(key, ctx)).rejects.toThrow("503");
    expect(s.posts).toHaveLength(1);
    client.injectError = undefined;
    await r.reconcile(key, ctx);
    expect(s.posts).toHaveLength(1);
    expect((await stored(client, note)).status?.deliveries?.[0]).toMatchObject({
      state: "Delivered",
      attempts: 1,
    });
  });
});
