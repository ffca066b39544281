import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type HttpSink,
  type SmtpSink,
  startHttpSink,
  startSmtpSink,
} from "../../test/support/notification-sinks.ts";
import { DEFAULT_NOTIFICATIONS_CONFIG } from "./config.ts";
import { eventType, smsBody, webhookBody } from "./payloads.ts";
import { FetchHttpSender, SmtpMailSender } from "./senders.ts";

// The real senders against real receivers on the loopback interface.

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
let smtp: SmtpSink;
let http: HttpSink;

beforeAll(async () => {
  smtp = await startSmtpSink();
  http = await startHttpSink(SECRET);
});
afterAll(async () => {
  await smtp?.close();
  await http?.close();
});

describe("SmtpMailSender", () => {
  it("sends through the configured SMTP server with the notification's stable Message-ID", async () => {
    const sender = new SmtpMailSender(
      {
        ...DEFAULT_NOTIFICATIONS_CONFIG.email,
        host: "127.0.0.1",
        port: smtp.port,
        security: "None",
        from: "cronscale <ops@example.test>",
        username: "ops",
      },
      5000,
    );
    const answer = await sender.send(
      {
        to: ["a@example.test", "b@example.test"],
        subject: "Task ns/nightly failed",
        text: "Exit code: 3",
        messageId: "<notif_abc@cronscale>",
        headers: { "X-Cronscale-Notification-Id": "notif_abc" },
      },
      "s3cret",
    );
    expect(answer).toMatch(/^250/);
    expect(smtp.mails).toHaveLength(1);
    expect(smtp.mails[0]).toMatchObject({
      to: ["a@example.test", "b@example.test"],
      subject: "Task ns/nightly failed",
      messageId: "<notif_abc@cronscale>",
    });
    expect(smtp.mails[0]?.text).toContain("Exit code: 3");
    expect(smtp.mails[0]?.headers.get("x-cronscale-notification-id")).toBe("notif_abc");
  });

  it("rejects when the server is unreachable", async () => {
    const sender = new SmtpMailSender(
      {
        ...DEFAULT_NOTIFICATIONS_CONFIG.email,
        host: "127.0.0.1",
        port: 1,
        security: "None",
        from: "a@b.test",
      },
      2000,
    );
    await expect(
      sender.send(
        { to: ["x@example.test"], subject: "s", text: "t", messageId: "<m@c>", headers: {} },
        undefined,
      ),
    ).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe("FetchHttpSender", () => {
  it("signs the Standard Webhooks way: the standardwebhooks library verifies it", async () => {
    const spec = {
      id: "notif_0123",
      source: { kind: "ScheduledTask" as const, name: "nightly", uid: "u" },
      event: "TaskFailed" as const,
      occurredAt: "2026-01-01T00:00:00Z",
      count: 1,
      subject: "Task ns/nightly failed",
      text: "Exit code: 3",
      details: { task: "nightly", exitCode: "3" },
      recipients: {},
    };
    const body = webhookBody(spec, "ns");
    await new FetchHttpSender(5000).post({
      url: `${http.url}/hook`,
      body,
      sign: { id: spec.id, secret: SECRET, at: new Date() },
    });
    const got = http.posts.at(-1);
    expect(got?.verified).toBe(true);
    expect(got?.headers["webhook-id"]).toBe("notif_0123");
    expect(JSON.parse(got?.body ?? "{}")).toMatchObject({
      type: "task.failed",
      data: {
        id: "notif_0123",
        task: "nightly",
        exitCode: "3",
        source: { namespace: "ns", name: "nightly" },
      },
    });
  });

  it("rejects a non-2xx answer naming the status", async () => {
    http.answer.status = 503;
    try {
      await expect(new FetchHttpSender(5000).post({ url: http.url, body: "{}" })).rejects.toThrow(/HTTP 503/);
    } finally {
      http.answer.status = 200;
    }
  });
});

describe("payloads", () => {
  it("names event types and keeps SMS texts short", () => {
    expect(eventType("TaskRecovered")).toBe("task.recovered");
    expect(eventType("HealthCheckFailing")).toBe("health.check_failing");
    const long = {
      id: "i",
      source: { kind: "ScalePlatform" as const, name: "p" },
      event: "HealthCheckFailing" as const,
      occurredAt: "2026-01-01T00:00:00Z",
      count: 1,
      subject: "x".repeat(400),
      text: "",
      recipients: {},
    };
    expect(JSON.parse(smsBody(long, "+491511234567", "cronscale")).text).toHaveLength(306);
  });
});
