import { z } from "zod";
import { gatewayProblems } from "./orders/gateways.ts";

// The service's configuration: the environment the operator gives the app container (see the
// README's config contract). Parsed once at start; an unknown or invalid setting stops the process
// with a message naming the setting, so a bad rollout fails its readiness instead of serving wrong.

/** Plans (the operator's plan table, src/api/plans.ts at the repository root). */
export const PLANS = ["Standard", "Professional", "Enterprise", "Custom"] as const;
export type Plan = (typeof PLANS)[number];

/** Wire names of the webhook events (the ScalePlatform's spec.webhooks[].events). */
export const WEBHOOK_EVENTS = [
  "OrderCreated",
  "OrderUpdated",
  "PaymentReceived",
  "InventoryLow",
  "CustomerRegistered",
] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number];

// The configuration groups arrive as JSON. Objects are loose (unknown fields kept, not refused):
// during a rolling upgrade an older app may read a ConfigMap written for a newer one.
const decimal = z.string().regex(/^[0-9]{1,12}(\.[0-9]{1,4})?$/);
const currency = z.string().regex(/^[A-Z]{3}$/);

/**
 * An IANA time zone name the runtime knows. The platform's schema checks only its shape, so a
 * name like "Mars/Olympus" gets this far; analytics would fail on it in SQL at the first read.
 */
const timeZone = z.string().refine((tz) => {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}, "must be an IANA time zone name such as Europe/Berlin");

const localizationSchema = z.looseObject({
  defaultLanguage: z.string().default("en"),
  currency: currency.default("USD"),
  timezone: timeZone.default("UTC"),
  tax: z
    .looseObject({
      pricesIncludeTax: z.boolean().default(false),
      defaultRatePercent: decimal.optional(),
    })
    .optional(),
});
const storeSchema = z.looseObject({ name: z.string().min(1), contactEmail: z.string().optional() });
const emailSchema = z.looseObject({
  smtp: z
    .looseObject({
      host: z.string(),
      port: z.number().int().default(587),
      security: z.enum(["None", "StartTLS", "TLS"]).default("StartTLS"),
      username: z.string().optional(),
    })
    .optional(),
  fromAddress: z.string(),
  fromName: z.string().optional(),
  transactional: z.array(z.string()).optional(),
});
export type EmailConfig = z.infer<typeof emailSchema>;
const paymentGatewaySchema = z.looseObject({
  name: z.string(),
  type: z.enum(["Card", "Wallet", "MobileMoney", "BankTransfer"]),
  provider: z.string(),
  mode: z.enum(["Test", "Live"]).default("Test"),
  enabled: z.boolean().default(true),
  settings: z.record(z.string(), z.string()).optional(),
});
export type PaymentGateway = z.infer<typeof paymentGatewaySchema>;
const shippingMethodSchema = z.looseObject({
  name: z.string(),
  carrier: z.string(),
  zones: z.array(z.string()).default([]),
  rate: z.looseObject({
    calculation: z.enum(["Flat", "ByWeight", "ByOrderTotal", "Carrier"]),
    amount: decimal.optional(),
    currency: currency.optional(),
  }),
  enabled: z.boolean().default(true),
});
const webhookSchema = z.looseObject({
  name: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/),
  url: z.url({ protocol: /^https?$/ }),
  events: z.array(z.enum(WEBHOOK_EVENTS)).min(1),
  enabled: z.boolean().default(true),
});
export type ShippingMethod = z.infer<typeof shippingMethodSchema>;
export type WebhookConfig = z.infer<typeof webhookSchema>;

/** A JSON-valued setting; empty or absent means "not set". */
function jsonOf<T extends z.ZodType>(schema: T) {
  return z
    .string()
    .optional()
    .transform((s, ctx) => {
      if (s === undefined || s.trim() === "") return undefined;
      try {
        return JSON.parse(s) as unknown;
      } catch {
        ctx.addIssue({ code: "custom", message: "is not valid JSON" });
        return z.NEVER;
      }
    })
    .pipe(schema.optional());
}

const cidrList = z
  .string()
  .optional()
  .transform((s) =>
    (s ?? "")
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.cidrv4().or(z.cidrv6())));

const urlOrEmpty = z
  .string()
  .optional()
  .transform((s) => (s?.trim() ? s.trim() : undefined))
  .pipe(z.url({ protocol: /^https?$/ }).optional());

const envSchema = z
  .object({
    PORT: z.coerce.number().int().min(1).max(65535).default(8080),
    COMMERCE_LISTEN_HOST: z.string().default("0.0.0.0"),
    COMMERCE_LOG_LEVEL: z
      .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])
      .default("info"),
    DATABASE_URL: z.string().optional(),
    DB_HOST: z.string().optional(),
    DB_PORT: z.coerce.number().int().min(1).max(65535).default(5432),
    DB_USER: z.string().optional(),
    DB_PASSWORD: z.string().optional(),
    DB_NAME: z.string().optional(),
    COMMERCE_DB_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
    PLATFORM_INSTANCE: z.string().default("commerce"),
    PLATFORM_PLAN: z.enum(PLANS).default("Standard"),
    PLATFORM_URL: urlOrEmpty,
    ADMIN_URL: urlOrEmpty,
    API_URL: urlOrEmpty,
    PLAN_MAX_PRODUCTS: z.string().optional(),
    ADMIN_USERNAME: z.string().optional(),
    ADMIN_PASSWORD: z.string().optional(),
    API_KEY: z.string().min(20, "must be at least 20 characters").optional(),
    CONFIG_STORE: jsonOf(storeSchema),
    CONFIG_LOCALIZATION: jsonOf(localizationSchema),
    CONFIG_EMAIL: jsonOf(emailSchema),
    CONFIG_PAYMENT_GATEWAYS: jsonOf(z.array(paymentGatewaySchema)),
    CONFIG_SHIPPING_METHODS: jsonOf(z.array(shippingMethodSchema)),
    CONFIG_WEBHOOKS: jsonOf(z.array(webhookSchema)),
    SMTP_PASSWORD: z.string().optional(),
    COMMERCE_RATE_LIMIT_PER_MINUTE: z
      .union([z.literal("unlimited"), z.coerce.number().int().min(1)])
      .optional()
      .describe("Overrides the plan's rate; `unlimited` turns limiting off (benchmarks)."),
    COMMERCE_REQUEST_TIME_LIMIT_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .default(60)
      .describe("How long a request may run: an Idempotency-Key still in flight after it is released."),
    COMMERCE_WEBHOOK_ALLOWED_CIDRS: cidrList,
    COMMERCE_WEBHOOK_DB_POOL_SIZE: z.coerce.number().int().min(1).max(50).default(4),
    COMMERCE_WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(128).default(16),
    COMMERCE_ADMIN_ALLOWED_CIDRS: cidrList.describe(
      "Client networks allowed on the admin host (empty: all).",
    ),
    COMMERCE_JWT_ISSUER: urlOrEmpty,
    COMMERCE_STRIPE_API_URL: urlOrEmpty.describe(
      "Where the Stripe SDK sends API calls (tests: a stripe-mock on loopback); unset: Stripe itself.",
    ),
  })
  .strip();

/** Environment prefixes that belong to this service: an unknown name under them is refused. */
const OWN_PREFIXES = ["COMMERCE_", "CONFIG_", "PLATFORM_", "PLAN_", "DB_"];

export type Env = z.infer<typeof envSchema>;
export interface Config extends Env {
  databaseUrl: string;
  /** Host names (lower case) of the three Ingress hosts, when known. */
  hosts: { platform?: string; admin?: string; api?: string };
  /** Issuer of access tokens: COMMERCE_JWT_ISSUER, else the API host's origin. */
  issuer: string;
  /** Webhook signing keys by webhook name (WEBHOOK_<NAME>_SIGNING_KEY). */
  webhookSigningKeys: Map<string, string>;
  /** Payment gateway credentials by gateway name (PAYMENT_<NAME>_<key>). */
  paymentCredentials: Map<string, Record<string, string>>;
}

export class ConfigError extends Error {}

const envPart = (name: string) => name.toUpperCase().replace(/[^A-Z0-9]/g, "_");

/** Parses the environment; throws ConfigError naming every bad setting. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const problems: string[] = [];
  const known = new Set(Object.keys(envSchema.shape));
  for (const name of Object.keys(env).sort()) {
    if (OWN_PREFIXES.some((p) => name.startsWith(p)) && !known.has(name)) {
      problems.push(`${name}: unknown setting`);
    }
  }
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const [name, ...rest] = issue.path.map(String);
      const where = rest.length ? `${name} (at ${rest.join(".")})` : name;
      problems.push(`${where}: ${issue.message}`);
    }
  }
  if (!parsed.success || problems.length)
    throw new ConfigError(`invalid configuration: ${problems.join("; ")}`);
  const e = parsed.data;

  let databaseUrl = e.DATABASE_URL;
  if (!databaseUrl) {
    if (!e.DB_HOST || !e.DB_USER || !e.DB_NAME) {
      throw new ConfigError(
        "invalid configuration: DATABASE_URL: required (or DB_HOST, DB_USER and DB_NAME)",
      );
    }
    const u = new URL(`postgres://${e.DB_HOST}:${e.DB_PORT}`);
    u.username = e.DB_USER;
    if (e.DB_PASSWORD) u.password = e.DB_PASSWORD;
    u.pathname = `/${e.DB_NAME}`;
    databaseUrl = u.toString();
  }

  const webhooks = e.CONFIG_WEBHOOKS ?? [];
  const signingKeys = new Map<string, string>();
  const byEnv = new Map(webhooks.map((w) => [`WEBHOOK_${envPart(w.name)}_SIGNING_KEY`, w.name]));
  for (const [name, value] of Object.entries(env)) {
    if (!/^WEBHOOK_.*_SIGNING_KEY$/.test(name) || value === undefined) continue;
    const hook = byEnv.get(name);
    if (!hook) problems.push(`${name}: no webhook in CONFIG_WEBHOOKS has this signing key`);
    else signingKeys.set(hook, value);
  }
  const gateways = e.CONFIG_PAYMENT_GATEWAYS ?? [];
  const payment = new Map<string, Record<string, string>>();
  for (const g of gateways) {
    const prefix = `PAYMENT_${envPart(g.name)}_`;
    const creds: Record<string, string> = {};
    for (const [name, value] of Object.entries(env)) {
      if (name.startsWith(prefix) && value !== undefined) creds[name.slice(prefix.length)] = value;
    }
    payment.set(g.name, creds);
    for (const [field, message] of gatewayProblems(g, creds, (k) => `${prefix}${k}`)) {
      problems.push(
        `CONFIG_PAYMENT_GATEWAYS (at ${gateways.indexOf(g)}.${field}): gateway ${g.name}: ${message}`,
      );
    }
  }
  if (
    e.PLATFORM_PLAN === "Custom" &&
    e.PLAN_MAX_PRODUCTS &&
    !/^(\d+|unlimited|by agreement)$/.test(e.PLAN_MAX_PRODUCTS)
  ) {
    problems.push("PLAN_MAX_PRODUCTS: must be a number, 'unlimited' or 'by agreement'");
  }
  if (problems.length) throw new ConfigError(`invalid configuration: ${problems.join("; ")}`);

  const host = (u?: string) => (u ? new URL(u).hostname.toLowerCase() : undefined);
  const hosts = { platform: host(e.PLATFORM_URL), admin: host(e.ADMIN_URL), api: host(e.API_URL) };
  const issuer =
    e.COMMERCE_JWT_ISSUER ?? (e.API_URL ? new URL(e.API_URL).origin : `urn:cronscale:${e.PLATFORM_INSTANCE}`);
  return { ...e, databaseUrl, hosts, issuer, webhookSigningKeys: signingKeys, paymentCredentials: payment };
}

/** The plan's product limit: Standard 10,000, Professional 50,000, else unlimited. */
export function maxProducts(cfg: Pick<Config, "PLATFORM_PLAN" | "PLAN_MAX_PRODUCTS">): number | undefined {
  if (cfg.PLATFORM_PLAN === "Standard") return 10_000;
  if (cfg.PLATFORM_PLAN === "Professional") return 50_000;
  if (cfg.PLATFORM_PLAN === "Custom" && cfg.PLAN_MAX_PRODUCTS && /^\d+$/.test(cfg.PLAN_MAX_PRODUCTS)) {
    return Number(cfg.PLAN_MAX_PRODUCTS);
  }
  return undefined;
}
