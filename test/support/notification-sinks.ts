import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { Webhook } from "standardwebhooks";

// Real receivers for notification tests, on the loopback interface: an SMTP server (smtp-server)
// that parses every message it accepts (mailparser), and an HTTP server that records each POST
// and verifies its Standard Webhooks signature with the standardwebhooks library.

/** One accepted email. */
export interface ReceivedMail {
  to: string[];
  subject: string;
  text: string;
  messageId: string;
  headers: Map<string, unknown>;
}

/** A running SMTP sink. */
export interface SmtpSink {
  port: number;
  mails: ReceivedMail[];
  close(): Promise<void>;
}

/** Starts an SMTP server on `host` (no TLS, any sender, any login). */
export async function startSmtpSink(host = "127.0.0.1"): Promise<SmtpSink> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    logger: false,
    onAuth: (_auth, _session, cb) => cb(null, { user: "test" }),
    onData(stream, _session, cb) {
      simpleParser(stream).then(
        (m: ParsedMail) => {
          const to = (Array.isArray(m.to) ? m.to : m.to ? [m.to] : []).flatMap((a) =>
            a.value.map((v) => v.address ?? ""),
          );
          mails.push({
            to,
            subject: m.subject ?? "",
            text: m.text ?? "",
            messageId: m.messageId ?? "",
            headers: m.headers,
          });
          cb();
        },
        (err: Error) => cb(err),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, mails, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** One POST the HTTP sink received. */
export interface ReceivedPost {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Whether the Standard Webhooks signature verified (undefined when no secret was given). */
  verified?: boolean;
  /**
   * The status the sink answered; 0 when the sender's connection was gone before the answer (a
   * held request whose sender died: it never learnt the message was received).
   */
  status: number;
}

/** A running HTTP sink. */
export interface HttpSink {
  url: string;
  posts: ReceivedPost[];
  /** Status to answer with (200 by default; e.g. 503 to make deliveries fail). */
  answer: { status: number };
  /** While `on`, requests are received whole but not answered until `release()`. */
  hold: { on: boolean };
  /** How many requests are held unanswered. */
  held(): number;
  /** Answers the held requests (those whose sender is gone are recorded with status 0). */
  release(): void;
  close(): Promise<void>;
}

/** Starts an HTTP server on 127.0.0.1 that records POSTs and verifies signatures with `secret`. */
export async function startHttpSink(secret?: string, host = "127.0.0.1"): Promise<HttpSink> {
  const posts: ReceivedPost[] = [];
  const answer = { status: 200 };
  const hold = { on: false };
  const waiting: (() => void)[] = [];
  const verifier = secret ? new Webhook(secret) : undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let gone = false;
    res.on("close", () => {
      if (!res.writableFinished) gone = true;
    });
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let verified: boolean | undefined;
      if (verifier) {
        try {
          verifier.verify(body, req.headers as Record<string, string>);
          verified = true;
        } catch {
          verified = false;
        }
      }
      const respond = () => {
        if (gone) {
          posts.push({ path: req.url ?? "", headers: req.headers, body, verified, status: 0 });
          return;
        }
        posts.push({ path: req.url ?? "", headers: req.headers, body, verified, status: answer.status });
        res
          .writeHead(answer.status, { "content-type": "text/plain" })
          .end(answer.status < 300 ? "ok" : "unavailable");
      };
      if (hold.on) waiting.push(respond);
      else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    posts,
    answer,
    hold,
    held: () => waiting.length,
    release: () => {
      for (const respond of waiting.splice(0)) respond();
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
