import { plurals } from "./plural.ts";

// The admin interface's English catalog: the reference the other admin catalogs are typed
// against (`AdminMessages`), as en.ts is for the store. A separate catalog because the admin
// speaks to the shop's staff (other words, other tone) and the store's texts stay small.

const p = plurals("en");

export const adminEn = {
  lang: "en",
  // Page shell
  skip: "Skip to content",
  admin: (store: string) => `${store} admin`,
  mainNav: "Main",
  nav: {
    overview: "Overview",
    products: "Products",
    orders: "Orders",
    customers: "Customers",
    credentials: "API keys",
    webhooks: "Webhooks",
    settings: "Settings",
  },
  signOut: "Sign out",
  error: "Error",
  errorHeading: {
    403: "Not allowed",
    404: "Not found",
    429: "Too many attempts",
    other: "Something went wrong",
  },
  backToOverview: "Back to the overview",
  staleForm: "The form was stale or did not come from this site. Reload the page and try again.",
  requestFailed: "The request failed; try again.",
  // Sign-in and enrolment
  signIn: "Sign in",
  username: "Username",
  password: "Password",
  wrongPassword: "Wrong username or password.",
  tooManyAttempts: (minutes: number) =>
    p(minutes, {
      one: "Too many failed sign-in attempts. Try again in # minute.",
      other: "Too many failed sign-in attempts. Try again in # minutes.",
    }),
  twoFactor: "Two-factor authentication",
  codeLabel: "Code from your authenticator app, or a recovery code",
  codeHint: "Six digits, or a recovery code such as ABCD-EFGH-JKLM-NPQR (each works once).",
  verify: "Verify",
  badCode: "That code is not valid (or was already used).",
  newPasswordTitle: "Choose a new password",
  newPasswordWhy:
    "The initial password came from the platform's credentials Secret; replace it before going on.",
  newPassword: "New password",
  passwordHint: (n: number) => `At least ${n} characters, different from the initial one.`,
  repeatPassword: "Repeat the new password",
  savePassword: "Save password",
  passwordTooShort: (n: number) => `The password needs at least ${n} characters.`,
  passwordsDiffer: "The two passwords differ.",
  passwordUnchanged: "Choose a password other than the initial one.",
  enrolTitle: "Set up two-factor authentication",
  scanCode: "Scan this code with an authenticator app (TOTP), then enter the six digits it shows.",
  qrAlt: "QR code of the authenticator setup key (the same key is written below)",
  keyByHand: "Or enter this key by hand:",
  sixDigitCode: "Six-digit code",
  confirm: "Confirm",
  codeMismatch: "That code does not match; try the current one.",
  recoveryTitle: "Recovery codes",
  twoFactorOn: "Two-factor authentication is on.",
  recoveryKeep: "Keep these codes somewhere safe: each signs you in once without your authenticator app.",
  recoveryOnce: "They are shown only now.",
  continueToOverview: "Continue to the overview",
  // Overview
  overview: {
    title: "Overview",
    period: "last 30 days",
    revenue: "Revenue",
    orders: "Orders",
    averageOrder: "Average order",
    newCustomers: "New customers",
    byDay: "Revenue and orders by day",
    highestRevenue: (amount: string) => `Revenue (highest ${amount})`,
    highestOrders: (n: string) => `Orders (highest ${n})`,
    chartDesc: (from: string, to: string, revenue: string, orders: string) =>
      `From ${from} to ${to}: bars of revenue (highest day ${revenue}) and a line of orders (highest day ${orders}). The same numbers are in the table below.`,
    dayFigures: (day: string, revenue: string, orders: number) =>
      `${day}: ${revenue}, ${p(orders, { one: "# order", other: "# orders" })}`,
    showTable: "Show as a table",
    perDay: "Revenue and orders per day",
    day: "Day",
    topProducts: "Top products",
    product: "Product",
    sold: "Sold",
    noSales: "No sales in this period.",
    lowStock: "Low stock",
    sku: "SKU",
    available: "Available",
    threshold: "Threshold",
    nothingLow: "Nothing is at or below its threshold.",
  },
  // Formats
  taxIncluded: (rate: string) => `incl. ${rate} % tax`,
  taxExcluded: (rate: string) => `plus ${rate} % tax`,
};

export type AdminMessages = typeof adminEn;
