import nodemailer, { type Transporter } from "nodemailer";
import type { Config, EmailConfig } from "../config.ts";
import type { DB } from "../db/database.ts";
import type { ShippingAddress } from "../db/schema.ts";
import { canonicalLanguage, type Messages, messagesFor } from "../i18n/index.ts";
import { addressLines, countryNames } from "../orders/address.ts";

// Transactional email through the platform's SMTP settings (CONFIG_EMAIL, SMTP_PASSWORD) with
// nodemailer. Mails are jobs enqueued in the transaction of the change (like webhooks), so an
// order confirmation is neither lost on a crash nor sent for an order that rolled back.

export type MailKind = "OrderConfirmation" | "ShippingConfirmation";

export class Mailer {
  private readonly transport: Transporter;
  private readonly email: EmailConfig;
  private readonly db: DB;
  /** The platform's language (`defaultLanguage`): the mail's texts and amounts. */
  private readonly lang: string;
  private readonly t: Messages;

  constructor(
    db: DB,
    email: EmailConfig & { smtp: NonNullable<EmailConfig["smtp"]> },
    password: string | undefined,
    language?: string,
  ) {
    this.db = db;
    this.lang = canonicalLanguage(language);
    this.t = messagesFor(this.lang);
    this.email = email;
    const s = email.smtp;
    this.transport = nodemailer.createTransport({
      host: s.host,
      port: s.port,
      secure: s.security === "TLS",
      requireTLS: s.security === "StartTLS",
      ignoreTLS: s.security === "None",
      ...(s.username ? { auth: { user: s.username, pass: password ?? "" } } : {}),
    });
  }

  /** A mailer when SMTP is configured, else undefined (no mail is sent). */
  static from(db: DB, config: Config): Mailer | undefined {
    const e = config.CONFIG_EMAIL;
    if (!e?.smtp) return undefined;
    return new Mailer(
      db,
      { ...e, smtp: e.smtp },
      config.SMTP_PASSWORD,
      config.CONFIG_LOCALIZATION?.defaultLanguage,
    );
  }

  /** Whether this kind of mail is wanted (all kinds when `transactional` is not set). */
  wants(kind: MailKind): boolean {
    return this.email.transactional === undefined || this.email.transactional.includes(kind);
  }

  /** Sends the mail of `kind` about `orderId`; false when there is no one to send it to. */
  async send(kind: MailKind, orderId: string): Promise<boolean> {
    const o = await this.db
      .selectFrom("orders")
      .leftJoin("customers", "customers.id", "orders.customerId")
      .select([
        "orders.id",
        "orders.totalMinor",
        "orders.currency",
        "orders.trackingNumber",
        "orders.shippingAddress",
        "customers.email",
        "customers.name",
      ])
      .where("orders.id", "=", orderId)
      .executeTakeFirst();
    if (!o?.email) return false;
    const lines = await this.db
      .selectFrom("orderLines")
      .selectAll()
      .where("orderId", "=", orderId)
      .orderBy("position")
      .execute();
    const { subject, text } = composeMail(this.t, this.lang, kind, o, lines);
    await this.transport.sendMail({
      from: this.email.fromName
        ? { name: this.email.fromName, address: this.email.fromAddress }
        : this.email.fromAddress,
      to: o.email,
      subject,
      text,
    });
    return true;
  }

  close(): void {
    this.transport.close();
  }
}

export interface MailOrder {
  id: string;
  name: string | null;
  currency: string;
  totalMinor: number;
  trackingNumber: string | null;
  shippingAddress?: ShippingAddress | null;
}

/** Subject and text of a mail about an order, in the catalog's language and `lang`'s formats. */
export function composeMail(
  t: Messages,
  lang: string,
  kind: MailKind,
  o: MailOrder,
  lines: readonly { quantity: number; title: string; sku: string; totalMinor: number }[],
): { subject: string; text: string } {
  const money = (minor: number) =>
    new Intl.NumberFormat(lang, { style: "currency", currency: o.currency }).format(minor / 100);
  const m = t.mail;
  return {
    subject: kind === "OrderConfirmation" ? m.confirmedSubject(o.id) : m.shippedSubject(o.id),
    text: [
      m.hello(o.name ?? ""),
      "",
      kind === "OrderConfirmation" ? m.thanks : m.onItsWay(o.trackingNumber),
      ...lines.map((l) => `  ${l.quantity} × ${l.title} (${l.sku})  ${money(l.totalMinor)}`),
      m.total(money(o.totalMinor)),
      ...(o.shippingAddress
        ? ["", m.shipTo, ...addressLines(o.shippingAddress, countryNames(lang)).map((l) => `  ${l}`)]
        : []),
    ].join("\n"),
  };
}
