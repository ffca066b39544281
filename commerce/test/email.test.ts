import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { body, productBody, type Service, startService } from "./support/harness.ts";

// A real SMTP server on 127.0.0.1 receives what the service sends through nodemailer.

interface Mail {
  from: string;
  to: string[];
  raw: string;
}

describe("transactional email", () => {
  const mails: Mail[] = [];
  let smtp: SMTPServer;
  let port = 0;
  let svc: Service;

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      onAuth: (auth, _s, cb) =>
        cb(auth.username === "shop" && auth.password === "s3cret" ? null : new Error("bad login"), {
          user: "shop",
        }),
      onData: (stream, session, cb) => {
        let raw = "";
        stream.on("data", (c: Buffer) => (raw += c.toString()));
        stream.on("end", () => {
          mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
          });
          cb();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, "127.0.0.1", () => r()));
    port = (smtp.server.address() as { port: number }).port;
    svc = await startService(
      {
        CONFIG_LOCALIZATION: '{"currency":"EUR"}',
        CONFIG_EMAIL: JSON.stringify({
          smtp: { host: "127.0.0.1", port, security: "None", username: "shop" },
          fromAddress: "orders@shop.test",
          fromName: "Shop",
          transactional: ["OrderConfirmation"],
        }),
        SMTP_PASSWORD: "s3cret",
      },
      undefined,
      { webhooks: true },
    );
  });
  afterAll(async () => {
    await svc.close();
    await new Promise<void>((r) => smtp.close(() => r()));
  });

  it("sends the order confirmation through the configured SMTP server, and only the kinds asked for", async () => {
    const c = await body(
      await svc.call("/api/v1/customers", {
        method: "POST",
        json: { email: "eve@example.test", name: "Eve" },
      }),
    );
    await svc.call("/api/v1/products", { method: "POST", json: productBody("Pen", ["PEN"], 250, 50) });
    const o = await body(
      await svc.call("/api/v1/orders", {
        method: "POST",
        json: { customerId: c.id, lines: [{ sku: "PEN", quantity: 4 }] },
      }),
    );
    for (let i = 0; i < 100 && mails.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(mails).toHaveLength(1);
    const m = mails[0]!;
    expect(m.from).toBe("orders@shop.test");
    expect(m.to).toEqual(["eve@example.test"]);
    expect(m.raw).toContain(`Subject: Order ${o.id} confirmed`);
    // The text part is quoted-printable: decode it as bytes, then as UTF-8.
    const text = Buffer.from(
      m.raw
        .replace(/=\r\n/g, "")
        .replace(/=([0-9A-F]{2})/g, (_x, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
      "latin1",
    ).toString("utf8");
    expect(text).toContain("4 × Pen — PEN (PEN)  €10.00");
    expect(text).toContain("Total: €10.00");

    // ShippingConfirmation is not in `transactional`: shipping the order sends nothing.
    await svc.call(`/api/v1/orders/${o.id}/transitions`, { method: "POST", json: { to: "paid" } });
    await svc.call(`/api/v1/orders/${o.id}/transitions`, { method: "POST", json: { to: "fulfilled" } });
    await svc.call(`/api/v1/orders/${o.id}/transitions`, {
      method: "POST",
      json: { to: "shipped", trackingNumber: "T1" },
    });
    await new Promise((r) => setTimeout(r, 1500));
    expect(mails).toHaveLength(1);
  });
});
