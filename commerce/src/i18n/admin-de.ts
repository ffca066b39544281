import type { AdminMessages } from "./admin-en.ts";
import { plurals } from "./plural.ts";

// The admin interface's German catalog (formal "Sie"). Typed by the English one: a missing or
// extra key, or a text with other arguments, fails `npm run typecheck`.

const p = plurals("de");

export const adminDe: AdminMessages = {
  lang: "de",
  skip: "Zum Inhalt springen",
  admin: (store: string) => `${store} – Verwaltung`,
  mainNav: "Hauptmenü",
  nav: {
    overview: "Übersicht",
    products: "Produkte",
    orders: "Bestellungen",
    customers: "Kunden",
    credentials: "API-Schlüssel",
    webhooks: "Webhooks",
    settings: "Einstellungen",
  },
  signOut: "Abmelden",
  error: "Fehler",
  errorHeading: {
    403: "Nicht erlaubt",
    404: "Nicht gefunden",
    429: "Zu viele Versuche",
    other: "Etwas ist schiefgelaufen",
  },
  backToOverview: "Zurück zur Übersicht",
  staleForm:
    "Das Formular war veraltet oder kam nicht von dieser Seite. Laden Sie die Seite neu und versuchen Sie es noch einmal.",
  requestFailed: "Die Anfrage ist fehlgeschlagen; bitte versuchen Sie es noch einmal.",
  signIn: "Anmelden",
  username: "Benutzername",
  password: "Passwort",
  wrongPassword: "Benutzername oder Passwort ist falsch.",
  tooManyAttempts: (minutes: number) =>
    p(minutes, {
      one: "Zu viele fehlgeschlagene Anmeldeversuche. Versuchen Sie es in # Minute erneut.",
      other: "Zu viele fehlgeschlagene Anmeldeversuche. Versuchen Sie es in # Minuten erneut.",
    }),
  twoFactor: "Zwei-Faktor-Authentifizierung",
  codeLabel: "Code aus Ihrer Authenticator-App oder ein Wiederherstellungscode",
  codeHint: "Sechs Ziffern oder ein Wiederherstellungscode wie ABCD-EFGH-JKLM-NPQR (jeder gilt einmal).",
  verify: "Bestätigen",
  badCode: "Dieser Code ist ungültig (oder wurde schon verwendet).",
  newPasswordTitle: "Neues Passwort wählen",
  newPasswordWhy:
    "Das erste Passwort stammt aus dem Credentials-Secret der Plattform; ersetzen Sie es, bevor es weitergeht.",
  newPassword: "Neues Passwort",
  passwordHint: (n: number) => `Mindestens ${n} Zeichen, anders als das erste Passwort.`,
  repeatPassword: "Neues Passwort wiederholen",
  savePassword: "Passwort speichern",
  passwordTooShort: (n: number) => `Das Passwort braucht mindestens ${n} Zeichen.`,
  passwordsDiffer: "Die beiden Passwörter stimmen nicht überein.",
  passwordUnchanged: "Wählen Sie ein anderes Passwort als das erste.",
  enrolTitle: "Zwei-Faktor-Authentifizierung einrichten",
  scanCode:
    "Scannen Sie diesen Code mit einer Authenticator-App (TOTP) und geben Sie dann die sechs Ziffern ein, die sie anzeigt.",
  qrAlt: "QR-Code des Einrichtungsschlüssels (derselbe Schlüssel steht darunter)",
  keyByHand: "Oder geben Sie diesen Schlüssel von Hand ein:",
  sixDigitCode: "Sechsstelliger Code",
  confirm: "Bestätigen",
  codeMismatch: "Dieser Code passt nicht; versuchen Sie den aktuellen.",
  recoveryTitle: "Wiederherstellungscodes",
  twoFactorOn: "Die Zwei-Faktor-Authentifizierung ist eingeschaltet.",
  recoveryKeep:
    "Bewahren Sie diese Codes sicher auf: Jeder meldet Sie einmal ohne Ihre Authenticator-App an.",
  recoveryOnce: "Sie werden nur jetzt angezeigt.",
  continueToOverview: "Weiter zur Übersicht",
  overview: {
    title: "Übersicht",
    period: "letzte 30 Tage",
    revenue: "Umsatz",
    orders: "Bestellungen",
    averageOrder: "Durchschnittliche Bestellung",
    newCustomers: "Neue Kunden",
    byDay: "Umsatz und Bestellungen pro Tag",
    highestRevenue: (amount: string) => `Umsatz (Höchstwert ${amount})`,
    highestOrders: (n: string) => `Bestellungen (Höchstwert ${n})`,
    chartDesc: (from: string, to: string, revenue: string, orders: string) =>
      `Vom ${from} bis ${to}: Balken für den Umsatz (bester Tag ${revenue}) und eine Linie für die Bestellungen (bester Tag ${orders}). Dieselben Zahlen stehen in der Tabelle darunter.`,
    dayFigures: (day: string, revenue: string, orders: number) =>
      `${day}: ${revenue}, ${p(orders, { one: "# Bestellung", other: "# Bestellungen" })}`,
    showTable: "Als Tabelle anzeigen",
    perDay: "Umsatz und Bestellungen pro Tag",
    day: "Tag",
    topProducts: "Meistverkaufte Produkte",
    product: "Produkt",
    sold: "Verkauft",
    noSales: "Keine Verkäufe in diesem Zeitraum.",
    lowStock: "Niedriger Bestand",
    sku: "Artikelnummer",
    available: "Verfügbar",
    threshold: "Schwelle",
    nothingLow: "Kein Bestand liegt auf oder unter seiner Schwelle.",
  },
  taxIncluded: (rate: string) => `inkl. ${rate} % MwSt.`,
  taxExcluded: (rate: string) => `zzgl. ${rate} % MwSt.`,
};
