import { SMTPServer } from "smtp-server";

// A real SMTP server on 127.0.0.1 that keeps what it receives (no TLS, no login).

export interface Mail {
  from: string;
  to: string[];
  raw: string;
}

export async function startSmtpSink(): Promise<{ port: number; mails: Mail[]; close: () => Promise<void> }> {
  const mails: Mail[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
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
  const port = (smtp.server.address() as { port: number }).port;
  return { port, mails, close: () => new Promise<void>((r) => smtp.close(() => r())) };
}
