import { z } from "zod";

// The operator administrator's side of notifications: the channels (SMTP server, SMS gateway,
// the key webhook and chat messages are signed with) and the delivery policy. Credentials are
// named by Secret reference (in the operator's namespace), never given as values.

const secretKey = (what: string, defaultKey: string) =>
  z
    .object({
      name: z.string().default("").describe(`Secret holding ${what}; empty means none`),
      key: z.string().default(defaultKey).describe("Key inside the Secret"),
    })
    .prefault({})
    .describe(`Secret reference for ${what}`);

const int = (def: number, min: number, what: string) =>
  z.coerce.number().int().min(min).default(def).describe(what);

/** Operator-wide notification settings (`CRONSCALE_NOTIFICATIONS__...`, chart `notifications:`). */
export const NotificationsConfigSchema = z
  .object({
    secretNamespace: z
      .string()
      .default("")
      .describe("Namespace of the Secrets named below; empty means the operator's own (POD_NAMESPACE)"),
    email: z
      .object({
        host: z.string().default("").describe("SMTP server host; empty turns email off"),
        port: int(587, 1, "SMTP server port"),
        security: z
          .enum(["None", "StartTLS", "TLS"])
          .default("StartTLS")
          .describe("None, StartTLS (upgrade, required) or TLS (implicit, port 465)"),
        rejectUnauthorized: z
          .preprocess(
            (v) => (typeof v === "string" ? !["false", "0", "no"].includes(v.toLowerCase()) : v),
            z.boolean(),
          )
          .default(true)
          .describe("Verify the SMTP server's certificate"),
        from: z.string().default("").describe('Sender, e.g. "cronscale <alerts@example.com>"'),
        username: z.string().default("").describe("SMTP user; empty means no authentication"),
        passwordSecret: secretKey("the SMTP password", "password"),
      })
      .prefault({}),
    signingSecret: secretKey(
      "the Standard Webhooks signing secret (whsec_...) of webhook and chat messages",
      "secret",
    ),
    sms: z
      .object({
        url: z.string().default("").describe("SMS gateway endpoint (HTTP POST); empty turns SMS off"),
        from: z.string().default("").describe("Sender id or number the gateway sends from"),
        tokenSecret: secretKey("the gateway's bearer token", "token"),
      })
      .prefault({}),
    httpTimeoutSeconds: int(10, 1, "Longest wait for a webhook, chat or SMS gateway answer"),
    retry: z
      .object({
        baseSeconds: int(10, 1, "First retry delay of a failed delivery (doubles each attempt)"),
        maxSeconds: int(1800, 1, "Longest delay between two attempts"),
        giveUpHours: int(24, 1, "A delivery still failing this long after the transition is given up"),
        failureThreshold: int(3, 1, "Failed attempts after which the Notification says DeliveryFailing"),
      })
      .prefault({}),
    maxAgeMinutes: int(
      1440,
      1,
      "A transition older than this when first seen is not announced (e.g. notifications added to an old object)",
    ),
    retentionDays: int(
      7,
      1,
      "Delivered Notifications are deleted after this many days (the newest per object stays)",
    ),
  })
  .prefault({});

/** Parsed notification settings. */
export type NotificationsConfig = z.infer<typeof NotificationsConfigSchema>;

/** Defaults (what an empty configuration parses to). */
export const DEFAULT_NOTIFICATIONS_CONFIG: NotificationsConfig = NotificationsConfigSchema.parse(undefined);
