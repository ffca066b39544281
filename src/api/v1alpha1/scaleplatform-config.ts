import { z } from "zod";
import { hostname, secretKeyRefSchema } from "./common.ts";

// The configuration groups of a platform (commerce/README.md, "Config contract"): store information, localization,
// email/SMTP, payment gateways, shipping methods, plus webhooks (commerce/README.md, "Webhooks"). Secrets are only ever
// referenced, never inlined: a spec is readable by anyone who can `get` the object.

const shortText = (max: number, description: string) => z.string().min(1).max(max).describe(description);
const listName = (description: string) =>
  z
    .string()
    .min(1)
    .max(63)
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
    .describe(description);
const email = (description: string) => z.email().max(254).describe(description);
const decimal = (description: string) =>
  z
    .string()
    .max(20)
    .regex(/^[0-9]{1,12}(\.[0-9]{1,4})?$/)
    .describe(description);
const countryCode = z
  .string()
  .length(2)
  .regex(/^[A-Z]{2}$/)
  .describe("ISO 3166-1 alpha-2 country code, e.g. DE.");
const currency = (description: string) =>
  z
    .string()
    .length(3)
    .regex(/^[A-Z]{3}$/)
    .describe(description);

export const storeSchema = z
  .object({
    name: shortText(200, "Store name shown to customers."),
    url: z
      .string()
      .max(2048)
      .regex(/^https?:\/\/[^\s]+$/)
      .optional()
      .describe("Public store URL if it differs from the platform host (http:// or https://)."),
    contactEmail: email("Contact email address of the store."),
    supportPhone: z
      .string()
      .max(32)
      .regex(/^\+?[0-9][0-9 ()-]{3,30}$/)
      .optional()
      .describe("Support phone number, international format preferred (e.g. +49 30 1234567)."),
    address: z
      .object({
        line1: shortText(200, "Street and number."),
        line2: z.string().max(200).optional().describe("Additional address line."),
        city: shortText(100, "City."),
        region: z.string().max(100).optional().describe("State, province or region."),
        postalCode: z.string().max(20).optional().describe("Postal code."),
        country: countryCode,
      })
      .optional()
      .describe("Business address of the store."),
  })
  .describe("Store information (spec §2.3).");

export const localizationSchema = z
  .object({
    defaultLanguage: z
      .string()
      .max(35)
      .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/)
      .default("en")
      .describe("Default language as a BCP 47 tag, e.g. en or pt-BR."),
    currency: currency("Default currency, ISO 4217 code, e.g. EUR.").default("USD"),
    timezone: z
      .string()
      .max(64)
      .regex(/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/)
      .default("UTC")
      .describe("Store timezone, an IANA zone name such as Europe/Berlin."),
    dateFormat: z
      .enum(["YYYY-MM-DD", "DD/MM/YYYY", "MM/DD/YYYY", "DD.MM.YYYY"])
      .default("YYYY-MM-DD")
      .describe("Date format shown to customers."),
    tax: z
      .object({
        pricesIncludeTax: z.boolean().default(false).describe("Whether catalogue prices include tax."),
        defaultRatePercent: decimal("Default tax rate in percent, e.g. 19 or 7.5.").optional(),
        taxId: z.string().max(64).optional().describe("Tax/VAT registration number of the business."),
      })
      .optional()
      .describe("Tax settings."),
  })
  .describe("Localization settings (spec §2.3).");

export const emailSchema = z
  .object({
    smtp: z
      .object({
        host: hostname("SMTP server host name."),
        port: z.int().min(1).max(65535).default(587).describe("SMTP server port."),
        security: z
          .enum(["None", "StartTLS", "TLS"])
          .default("StartTLS")
          .describe("Transport security: None, StartTLS (upgrade) or TLS (implicit)."),
        username: z.string().max(254).optional().describe("SMTP user name; requires passwordSecretRef."),
        passwordSecretRef: secretKeyRefSchema
          .optional()
          .describe(
            "Secret key holding the SMTP password (never inline). The app receives it as env var SMTP_PASSWORD; until the Secret and key exist the app's configuration is not rolled out (condition ConfigurationReady).",
          ),
      })
      .meta({
        "x-kubernetes-validations": [
          {
            rule: "!has(self.username) || has(self.passwordSecretRef)",
            message: "passwordSecretRef is required when username is set",
            fieldPath: ".passwordSecretRef",
            reason: "FieldValueRequired",
          },
        ],
      })
      .describe("SMTP server used for outgoing mail."),
    fromAddress: email("Sender address of transactional emails."),
    fromName: z.string().max(200).optional().describe("Sender display name."),
    notificationRecipients: z
      .array(z.email().max(254))
      .max(10)
      .meta({ "x-kubernetes-list-type": "set" })
      .optional()
      .describe("Addresses that receive store notifications (new orders, low inventory)."),
    transactional: z
      .array(
        z.enum(["OrderConfirmation", "ShippingConfirmation", "PasswordReset", "AccountCreated", "Invoice"]),
      )
      .max(5)
      .meta({ "x-kubernetes-list-type": "set" })
      .optional()
      .describe("Transactional emails to send; default all."),
  })
  .describe("Email configuration (spec §2.3).");

export const paymentGatewaySchema = z
  .object({
    name: listName("Unique name of this gateway setup."),
    type: z
      .enum(["Card", "Wallet", "MobileMoney", "BankTransfer"])
      .describe("Kind of payment: Card, Wallet, MobileMoney or BankTransfer."),
    provider: z
      .enum(["test", "stripe", "manual"])
      .describe(
        "Payment provider the app serves: test (built-in simulator, mode Test only, any type), stripe (Card and Wallet through Stripe PaymentIntents; credentialsSecretRef with keys secretKey and webhookSecret), manual (BankTransfer: the admin marks transfers received; settings accountHolder and iban or accountNumber).",
      ),
    mode: z.enum(["Test", "Live"]).default("Test").describe("Test (sandbox) or Live."),
    enabled: z.boolean().default(true).describe("Whether customers can pay with it."),
    credentialsSecretRef: z
      .object({ name: shortText(253, "Name of the Secret in the same namespace.") })
      .optional()
      .describe(
        "Secret with the provider's credentials (keys are provider-specific). The app receives every key as env var PAYMENT_<NAME>_<key> (NAME upper-cased, non-alphanumerics as _); until the Secret exists the app's configuration is not rolled out (condition ConfigurationReady).",
      ),
    settings: z
      .record(z.string().max(63), z.string().max(1024))
      .meta({ maxProperties: 32 })
      .optional()
      .describe(
        "Non-secret provider settings as key/value pairs: stripe captureMethod (automatic or manual); manual accountHolder, iban or accountNumber, bic, bankName (the payment instructions).",
      ),
  })
  .meta({
    // The same rules as the app's config parse (commerce/src/orders/gateways.ts): a setup the app
    // cannot serve is refused at apply, never accepted and then failed at checkout.
    "x-kubernetes-validations": [
      {
        rule: "self.provider != 'test' || !has(self.mode) || self.mode == 'Test'",
        message: "provider test is the built-in simulator and serves only mode Test",
        fieldPath: ".mode",
      },
      {
        rule: "self.provider != 'stripe' || self.type in ['Card', 'Wallet']",
        message: "provider stripe serves type Card and Wallet",
        fieldPath: ".type",
      },
      {
        rule: "self.provider != 'stripe' || has(self.credentialsSecretRef)",
        message: "provider stripe needs credentialsSecretRef (a Secret with secretKey and webhookSecret)",
        fieldPath: ".credentialsSecretRef",
        reason: "FieldValueRequired",
      },
      {
        rule: "self.provider != 'manual' || self.type == 'BankTransfer'",
        message: "provider manual serves type BankTransfer",
        fieldPath: ".type",
      },
      {
        rule: "self.provider != 'manual' || (has(self.settings) && 'accountHolder' in self.settings && ('iban' in self.settings || 'accountNumber' in self.settings))",
        message:
          "provider manual needs settings accountHolder and iban (or accountNumber): the payment instructions",
        fieldPath: ".settings",
        reason: "FieldValueRequired",
      },
    ],
  })
  .describe("One payment gateway setup.");

export const shippingMethodSchema = z
  .object({
    name: listName("Unique name of this shipping method."),
    carrier: shortText(63, "Carrier integration, e.g. dhl, ups, or manual."),
    zones: z
      .array(countryCode)
      .min(1)
      .max(250)
      .meta({ "x-kubernetes-list-type": "set" })
      .describe("Countries this method ships to."),
    rate: z
      .object({
        calculation: z
          .enum(["Flat", "ByWeight", "ByOrderTotal", "Carrier"])
          .describe("How the rate is computed: Flat, ByWeight, ByOrderTotal or Carrier (live rates)."),
        amount: decimal("Flat amount, or amount per unit for ByWeight/ByOrderTotal.").optional(),
        currency: currency("Currency of amount, ISO 4217.").optional(),
      })
      .meta({
        "x-kubernetes-validations": [
          {
            rule: "self.calculation == 'Carrier' || has(self.amount)",
            message: "amount is required unless calculation is Carrier",
            fieldPath: ".amount",
            reason: "FieldValueRequired",
          },
        ],
      })
      .describe("Rate calculation."),
    fulfillment: z
      .enum(["Ship", "Pickup", "Digital"])
      .default("Ship")
      .describe("Fulfillment option: Ship, Pickup or Digital."),
    enabled: z.boolean().default(true).describe("Whether the method is offered at checkout."),
  })
  .describe("One shipping method.");

/** The five webhook events (commerce/README.md, "Webhooks"), as wire names. */
export const WEBHOOK_EVENTS = [
  "OrderCreated",
  "OrderUpdated",
  "PaymentReceived",
  "InventoryLow",
  "CustomerRegistered",
] as const;

export const webhookSchema = z
  .object({
    name: listName("Unique name of this webhook."),
    url: z
      .string()
      .min(8)
      .max(2048)
      .regex(/^https?:\/\/[^\s/?#]+[^\s]*$/)
      .meta({
        "x-kubernetes-validations": [{ rule: "isURL(self)", message: "url must be an absolute http(s) URL" }],
      })
      .describe("Endpoint URL (http:// or https://) that receives the event payloads."),
    events: z
      .array(z.enum(WEBHOOK_EVENTS))
      .min(1)
      .max(5)
      .meta({ "x-kubernetes-list-type": "set" })
      .describe(`Events to deliver: ${WEBHOOK_EVENTS.join(", ")}.`),
    signingSecretRef: secretKeyRefSchema
      .optional()
      .describe(
        "Secret key used to sign payloads (HMAC-SHA256); unsigned when omitted. The app receives it as env var WEBHOOK_<NAME>_SIGNING_KEY (the webhook name upper-cased, '-' as '_'); until the Secret and key exist the app's configuration is not rolled out (condition ConfigurationReady).",
      ),
    enabled: z.boolean().default(true).describe("Whether events are delivered."),
  })
  .describe("One webhook subscription (spec §6).");
