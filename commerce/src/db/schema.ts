import type { ColumnType, Generated, Insertable, Selectable } from "kysely";

// Table types for kysely (camelCase here, snake_case in PostgreSQL through CamelCasePlugin). Money
// is in minor units (bigint, parsed to number: safe below 2^53) with an ISO 4217 currency.

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface StoresTable {
  id: string;
  name: string;
  currency: string;
  createdAt: Timestamp;
}

export interface ProductsTable {
  id: string;
  title: string;
  description: string | null;
  status: "active" | "draft" | "archived";
  version: Generated<number>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface VariantsTable {
  id: string;
  productId: string;
  sku: string;
  title: string;
  priceMinor: number;
  currency: string;
  position: number;
}

export interface InventoryLevelsTable {
  variantId: string;
  storeId: string;
  available: number;
  lowStockThreshold: number;
  /** True while at or below the threshold (so "inventory low" fires once per crossing). */
  low: Generated<boolean>;
  version: Generated<number>;
  updatedAt: Timestamp;
}

export interface InventoryAdjustmentsTable {
  id: string;
  variantId: string;
  storeId: string;
  delta: number;
  reason: string;
  createdAt: Timestamp;
}

export interface CustomersTable {
  id: string;
  email: string;
  name: string;
  version: Generated<number>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export const ORDER_STATUSES = [
  "pending",
  "paid",
  "fulfilled",
  "shipped",
  "delivered",
  "cancelled",
  "refunded",
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** A postal address an order ships to. */
export interface ShippingAddress {
  name: string;
  line1: string;
  line2?: string;
  city: string;
  region?: string;
  postalCode: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
}

export interface OrdersTable {
  id: string;
  storeId: string;
  customerId: string | null;
  status: OrderStatus;
  currency: string;
  subtotalMinor: number;
  taxMinor: number;
  shippingMinor: number;
  totalMinor: number;
  shippingMethod: string | null;
  /** Where the order ships to (jsonb, written as JSON text when the order is placed). */
  shippingAddress: ColumnType<ShippingAddress | null, string | null | undefined, never>;
  trackingNumber: string | null;
  version: Generated<number>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface OrderLinesTable {
  id: string;
  orderId: string;
  position: number;
  variantId: string;
  productId: string;
  sku: string;
  title: string;
  quantity: number;
  unitPriceMinor: number;
  totalMinor: number;
}

export interface OrderStatusHistoryTable {
  id: Generated<number>;
  orderId: string;
  fromStatus: OrderStatus | null;
  toStatus: OrderStatus;
  note: string | null;
  at: Timestamp;
}

export interface ApiKeysTable {
  id: string;
  name: string;
  /** First characters of the key, to recognise it in lists (never enough to use it). */
  prefix: string;
  hash: string;
  scopes: string[];
  createdAt: Timestamp;
  revokedAt: Timestamp | null;
  lastUsedAt: Timestamp | null;
}

export interface OauthClientsTable {
  id: string;
  name: string;
  secretHash: string;
  scopes: string[];
  createdAt: Timestamp;
  revokedAt: Timestamp | null;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  privateJwk: unknown;
  publicJwk: unknown;
  createdAt: Timestamp;
}

export interface IdempotencyKeysTable {
  credential: string;
  key: string;
  requestHash: string;
  statusCode: number | null;
  responseBody: string | null;
  responseHeaders: Record<string, string> | null;
  createdAt: Timestamp;
}

export interface RateLimitCountersTable {
  credential: string;
  windowStart: Timestamp;
  count: number;
}

/** GCRA state per rate-limited key: the theoretical arrival time (migration 0007). */
export interface RateLimitBucketsTable {
  key: string;
  tat: Timestamp;
}

export interface PaymentsTable {
  id: string;
  orderId: string;
  gateway: string;
  provider: string;
  mode: string;
  amountMinor: number;
  currency: string;
  status: PaymentStatus;
  failureReason: string | null;
  /** The provider's id of this payment (a Stripe PaymentIntent), when it has one. */
  providerRef: Generated<string | null>;
  /** The idempotency key the provider's object was created with. */
  idempotencyKey: Generated<string | null>;
  /** What the customer must do next (Stripe's `next_action`, e.g. a 3-D Secure redirect). */
  nextAction: Generated<unknown | null>;
  /** Payment instructions (bank transfer: reference and account). */
  instructions: Generated<unknown | null>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export const PAYMENT_STATUSES = [
  "pending",
  "requires_action",
  "authorized",
  "succeeded",
  "failed",
  "refunded",
] as const;
/** pending: awaiting the provider or a transfer; authorized: to be captured (manual capture). */
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** Provider events applied (migration 0009), so a redelivered event changes nothing. */
export interface PaymentProviderEventsTable {
  id: string;
  gateway: string;
  type: string;
  receivedAt: Generated<Timestamp>;
}

export interface WebhookEventsTable {
  /** The Standard Webhooks message id (webhook-id): the same on every attempt. */
  id: string;
  type: string;
  payload: unknown;
  createdAt: Timestamp;
}

export type DeliveryStatus = "pending" | "succeeded" | "failed" | "cancelled";

export interface WebhookDeliveriesTable {
  id: string;
  eventId: string;
  webhook: string;
  url: string;
  status: DeliveryStatus;
  attempts: Generated<number>;
  nextAttemptAt: Timestamp | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  deliveryId: string;
  attempt: number;
  at: Timestamp;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface WebhookEndpointsTable {
  name: string;
  disabledAt: Timestamp | null;
  disabledReason: string | null;
}

export interface StoreAccountsTable {
  customerId: string;
  passwordHash: string;
  createdAt: Timestamp;
}

export interface StoreSessionsTable {
  /** SHA-256 (hex) of the cookie's token: the table alone does not yield a session. */
  id: string;
  customerId: string | null;
  lastOrderId: string | null;
  createdAt: Timestamp;
  expiresAt: Timestamp;
}

export interface StoreCartLinesTable {
  sessionId: string;
  variantId: string;
  quantity: number;
  addedAt: Timestamp;
}

export interface Database {
  storeAccounts: StoreAccountsTable;
  storeSessions: StoreSessionsTable;
  storeCartLines: StoreCartLinesTable;
  payments: PaymentsTable;
  paymentProviderEvents: PaymentProviderEventsTable;
  webhookEvents: WebhookEventsTable;
  webhookDeliveries: WebhookDeliveriesTable;
  webhookAttempts: WebhookAttemptsTable;
  webhookEndpoints: WebhookEndpointsTable;
  stores: StoresTable;
  products: ProductsTable;
  variants: VariantsTable;
  inventoryLevels: InventoryLevelsTable;
  inventoryAdjustments: InventoryAdjustmentsTable;
  customers: CustomersTable;
  orders: OrdersTable;
  orderLines: OrderLinesTable;
  orderStatusHistory: OrderStatusHistoryTable;
  apiKeys: ApiKeysTable;
  oauthClients: OauthClientsTable;
  signingKeys: SigningKeysTable;
  idempotencyKeys: IdempotencyKeysTable;
  rateLimitCounters: RateLimitCountersTable;
  rateLimitBuckets: RateLimitBucketsTable;
}

export type Product = Selectable<ProductsTable>;
export type Variant = Selectable<VariantsTable>;
export type NewVariant = Insertable<VariantsTable>;
