import nodemailer from "nodemailer";
import { Webhook } from "standardwebhooks";
import type { NotificationsConfig } from "./config.ts";

// The channels' I/O. Email goes through nodemailer (SMTP, STARTTLS/TLS, auth); webhook, chat and
// SMS are one HTTP POST each with Node's fetch. Signing uses the standardwebhooks library, the
// same one receivers verify with.

/** One email to send. */
export interface MailMessage {
  to: string[];
  subject: string;
  text: string;
  /** Stable per notification, so mail clients recognise a resent message as the same one. */
  messageId: string;
  headers: Record<string, string>;
}

/** Sends email; resolves with the server's answer, rejects on failure. */
export interface MailSender {
  send(msg: MailMessage, password: string | undefined): Promise<string>;
}

/** nodemailer over the administrator's SMTP server. */
export class SmtpMailSender implements MailSender {
  private readonly cfg: NotificationsConfig["email"];
  private readonly timeoutMs: number;

  constructor(cfg: NotificationsConfig["email"], timeoutMs: number) {
    this.cfg = cfg;
    this.timeoutMs = timeoutMs;
  }

  async send(msg: MailMessage, password: string | undefined): Promise<string> {
    const c = this.cfg;
    // One transport per message: the password is read from its Secret each time (rotation
    // needs no restart) and nothing stays connected between rare notifications.
    const transport = nodemailer.createTransport({
      host: c.host,
      port: c.port,
      secure: c.security === "TLS",
      requireTLS: c.security === "StartTLS",
      ignoreTLS: c.security === "None",
      auth: c.username ? { user: c.username, pass: password ?? "" } : undefined,
      tls: { rejectUnauthorized: c.rejectUnauthorized },
      connectionTimeout: this.timeoutMs,
      greetingTimeout: this.timeoutMs,
      socketTimeout: this.timeoutMs * 3,
    });
    try {
      const info = await transport.sendMail({
        from: c.from,
        to: msg.to,
        subject: msg.subject,
        text: msg.text,
        messageId: msg.messageId,
        headers: msg.headers,
      });
      return String(info.response ?? "accepted").slice(0, 200);
    } finally {
      transport.close();
    }
  }
}

/** One signed HTTP POST. */
export interface HttpPost {
  url: string;
  body: string;
  /** Standard Webhooks headers are added when `sign` is given. */
  sign?: { id: string; secret: string; at: Date };
  headers?: Record<string, string>;
}

/** Sends HTTP POSTs; resolves with a short answer on 2xx, rejects otherwise. */
export interface HttpSender {
  post(req: HttpPost): Promise<string>;
}

/** The Standard Webhooks headers of a body (webhook-id, webhook-timestamp, webhook-signature). */
export function signatureHeaders(id: string, secret: string, at: Date, body: string): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(id, at, body),
  };
}

/** fetch with a timeout; a non-2xx answer is an error naming the status. */
export class FetchHttpSender implements HttpSender {
  private readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    this.timeoutMs = timeoutMs;
  }

  async post(req: HttpPost): Promise<string> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "cronscale-notifications",
      ...req.headers,
      ...(req.sign ? signatureHeaders(req.sign.id, req.sign.secret, req.sign.at, req.body) : {}),
    };
    const res = await fetch(req.url, {
      method: "POST",
      headers,
      body: req.body,
      redirect: "error",
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const answer = (await res.text().catch(() => "")).slice(0, 200);
    if (!res.ok) throw new Error(`HTTP ${res.status}${answer ? `: ${answer}` : ""}`);
    return `HTTP ${res.status}`;
  }
}
