import { API_VERSION } from "../api/v1alpha1/kind.ts";
import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import { ApiError } from "../runtime/errors.ts";
import type { KubeObject } from "../runtime/types.ts";

// The platform's configuration groups as forms (pure): which spec fields each group edits, the
// form ⇄ spec conversion, and the API server's causes mapped back to form fields. A group is saved
// as a server-side apply of that group's fields only (its own field manager), so the fields
// of other groups, of kubectl users and of the operator are neither sent nor touched.

/**
 * The field manager a group's applies are recorded under (metadata.managedFields): one per group,
 * because an apply removes the fields its manager applied before and now leaves out, so a single
 * manager saving the email group would remove the store fields it had saved.
 */
export const fieldManager = (group: ConfigGroupDef) => `cronscale-dashboard-${group.id}`;

type Kind =
  | "text"
  | "email"
  | "url"
  | "tel"
  | "number"
  | "select"
  | "checkbox"
  | "list"
  | "lines"
  | "checks"
  /** Key/value pairs, one `key=value` a line (a string map). */
  | "pairs";

/** One form field: its id (also the form name), label, spec path and how it is typed. */
export interface ConfigField {
  id: string;
  label: string;
  /** Path under `spec`. */
  path: string[];
  kind: Kind;
  options?: readonly string[];
  hint?: string;
  /** The CRD's default, shown (and offered as a placeholder) while the field is not set. */
  byDefault?: string;
}

/** One editable group. */
export interface ConfigGroupDef {
  id: string;
  title: string;
  fields: ConfigField[];
}

const TRANSACTIONAL = [
  "OrderConfirmation",
  "ShippingConfirmation",
  "PasswordReset",
  "AccountCreated",
  "Invoice",
];

const f = (
  id: string,
  label: string,
  path: string,
  kind: Kind = "text",
  extra: Partial<ConfigField> = {},
) => ({
  id,
  label,
  path: path.split("."),
  kind,
  ...extra,
});

/**
 * The groups the dashboard edits. Payment gateways and shipping methods (lists keyed by name) are
 * edited entry by entry (config-lists.ts), webhooks by Add Webhook.
 */
export const CONFIG_GROUPS: readonly ConfigGroupDef[] = [
  {
    id: "store",
    title: "Store information",
    fields: [
      f("store-name", "Store name", "store.name"),
      f("store-url", "Store URL", "store.url", "url", { hint: "Only if it differs from the platform host." }),
      f("store-contactEmail", "Contact email", "store.contactEmail", "email"),
      f("store-supportPhone", "Support phone", "store.supportPhone", "tel", { hint: "E.g. +49 30 1234567." }),
      f("store-line1", "Address line 1", "store.address.line1"),
      f("store-line2", "Address line 2", "store.address.line2"),
      f("store-city", "City", "store.address.city"),
      f("store-region", "Region", "store.address.region"),
      f("store-postalCode", "Postal code", "store.address.postalCode"),
      f("store-country", "Country", "store.address.country", "text", { hint: "Two letters, e.g. DE." }),
    ],
  },
  {
    id: "localization",
    title: "Localization",
    fields: [
      f("loc-language", "Default language", "localization.defaultLanguage", "text", {
        hint: "E.g. en or pt-BR.",
        byDefault: "en",
      }),
      f("loc-currency", "Currency", "localization.currency", "text", {
        hint: "ISO 4217, e.g. EUR.",
        byDefault: "USD",
      }),
      f("loc-timezone", "Timezone", "localization.timezone", "text", {
        hint: "IANA zone, e.g. Europe/Berlin.",
        byDefault: "UTC",
      }),
      f("loc-dateFormat", "Date format", "localization.dateFormat", "select", {
        options: ["YYYY-MM-DD", "DD/MM/YYYY", "MM/DD/YYYY", "DD.MM.YYYY"],
        byDefault: "YYYY-MM-DD",
      }),
      f("loc-pricesIncludeTax", "Prices include tax", "localization.tax.pricesIncludeTax", "checkbox"),
      f("loc-taxRate", "Default tax rate (%)", "localization.tax.defaultRatePercent", "text", {
        hint: "E.g. 19 or 7.5.",
      }),
      f("loc-taxId", "Tax ID", "localization.tax.taxId"),
    ],
  },
  {
    id: "email",
    title: "Email",
    fields: [
      f("mail-host", "SMTP host", "email.smtp.host"),
      f("mail-port", "SMTP port", "email.smtp.port", "number", { byDefault: "587" }),
      f("mail-security", "Transport security", "email.smtp.security", "select", {
        options: ["StartTLS", "TLS", "None"],
      }),
      f("mail-username", "SMTP user name", "email.smtp.username"),
      f("mail-passwordSecret", "Password: Secret name", "email.smtp.passwordSecretRef.name", "text", {
        hint: "A Secret in this namespace holding the password (never typed here).",
      }),
      f("mail-passwordKey", "Password: key in the Secret", "email.smtp.passwordSecretRef.key"),
      f("mail-fromAddress", "From address", "email.fromAddress", "email"),
      f("mail-fromName", "From name", "email.fromName"),
      f("mail-recipients", "Notification recipients", "email.notificationRecipients", "list", {
        hint: "Addresses separated by commas.",
      }),
      f("mail-transactional", "Transactional emails", "email.transactional", "checks", {
        options: TRANSACTIONAL,
      }),
    ],
  },
  {
    id: "security",
    title: "Security",
    fields: [
      f("sec-cidrs", "Admin allowed networks", "security.adminAllowedCIDRs", "lines", {
        hint: "One CIDR per line, e.g. 203.0.113.0/24; empty: no restriction.",
      }),
    ],
  },
];

export const configGroup = (id: string) => CONFIG_GROUPS.find((g) => g.id === id);

/** A group's form values by field id (strings; "on" for a checked box; lists joined). */
export type ConfigForm = Record<string, string | string[]>;

function at(obj: unknown, path: string[]): unknown {
  let o = obj;
  for (const k of path) o = o && typeof o === "object" ? (o as Record<string, unknown>)[k] : undefined;
  return o;
}

/** The form of a group as the platform's spec has it now. */
export const formOf = (group: ConfigGroupDef, platform: ScalePlatform): ConfigForm =>
  formOfValue(group, platform.spec);

/** The form of a group's fields read from `value` (the spec, or one entry of a list). */
export function formOfValue(group: ConfigGroupDef, value: unknown): ConfigForm {
  const form: ConfigForm = {};
  for (const fd of group.fields) {
    const v = at(value, fd.path);
    if (fd.kind === "checkbox") form[fd.id] = v === true ? "on" : "";
    else if (fd.kind === "checks") form[fd.id] = Array.isArray(v) ? v.map(String) : [...(fd.options ?? [])];
    else if (fd.kind === "list") form[fd.id] = Array.isArray(v) ? v.join(", ") : "";
    else if (fd.kind === "lines") form[fd.id] = Array.isArray(v) ? v.join("\n") : "";
    else if (fd.kind === "pairs")
      form[fd.id] =
        v && typeof v === "object"
          ? Object.entries(v)
              .map(([k, x]) => `${k}=${String(x)}`)
              .join("\n")
          : "";
    else form[fd.id] = v === undefined || v === null ? "" : String(v);
  }
  return form;
}

/** The form as posted (only the group's fields). */
export function formFromBody(group: ConfigGroupDef, body: Record<string, unknown>): ConfigForm {
  const form: ConfigForm = {};
  for (const fd of group.fields) {
    const v = body[fd.id];
    if (fd.kind === "checks") form[fd.id] = (Array.isArray(v) ? v : v ? [v] : []).map(String);
    else form[fd.id] = typeof v === "string" ? v : "";
  }
  return form;
}

function put(obj: Record<string, unknown>, path: string[], value: unknown): void {
  let o = obj;
  for (const k of path.slice(0, -1)) {
    o[k] ??= {};
    o = o[k] as Record<string, unknown>;
  }
  o[path[path.length - 1] ?? ""] = value;
}

/**
 * The apply configuration of one group: the platform's identity and the group's non-empty fields.
 * An emptied field is left out, which (under server-side apply) removes it when the dashboard was
 * its only manager. Values are sent as typed (a port that is not a number is sent as text), so the
 * API server's schema judges them and its message is the one shown.
 */
export function applyOf(group: ConfigGroupDef, platform: ScalePlatform, form: ConfigForm): KubeObject {
  const spec = valuesOf(group, form);
  // A checkbox alone does not create its group's object (tax) when it is unchecked.
  const tax = at(spec, ["localization", "tax"]) as Record<string, unknown> | undefined;
  if (tax && Object.keys(tax).length === 1 && tax.pricesIncludeTax === false) {
    const loc = spec.localization as Record<string, unknown>;
    delete loc.tax;
    if (Object.keys(loc).length === 0) delete spec.localization;
  }
  return applyConfig(platform, spec);
}

/** An apply configuration: the platform's identity and `spec`. */
export const applyConfig = (platform: ScalePlatform, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: API_VERSION,
  kind: "ScalePlatform",
  metadata: { name: platform.metadata.name, namespace: platform.metadata.namespace },
  spec,
});

/** The group's non-empty fields of a form as an object (paths as the fields name them). */
export function valuesOf(group: ConfigGroupDef, form: ConfigForm): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  for (const fd of group.fields) {
    const raw = form[fd.id];
    let value: unknown;
    if (fd.kind === "checkbox") value = raw === "on" || raw === "true";
    else if (fd.kind === "checks") value = Array.isArray(raw) && raw.length > 0 ? raw : undefined;
    else if (fd.kind === "list" || fd.kind === "lines") {
      const items = String(raw ?? "")
        .split(fd.kind === "list" ? /[,\s]+/ : /\r?\n/)
        .map((x) => x.trim())
        .filter(Boolean);
      value = items.length > 0 ? items : undefined;
    } else if (fd.kind === "pairs") {
      // A line without "=" is a key with an empty value; the API server judges keys and values.
      const pairs = String(raw ?? "")
        .split(/\r?\n/)
        .map((x) => x.trim())
        .filter(Boolean)
        .map((x) => [
          x.split("=")[0]?.trim() ?? "",
          x.includes("=") ? x.slice(x.indexOf("=") + 1).trim() : "",
        ]);
      value = pairs.length > 0 ? Object.fromEntries(pairs) : undefined;
    } else {
      const s = String(raw ?? "").trim();
      value = s === "" ? undefined : fd.kind === "number" && /^[0-9]+$/.test(s) ? Number(s) : s;
    }
    if (value !== undefined) put(spec, fd.path, value);
  }
  return spec;
}

/** The form field an API path names ("spec.store.contactEmail", ".spec.security.adminAllowedCIDRs[0]"). */
export function configFieldOf(group: ConfigGroupDef, path: string): string {
  const p = path
    .replace(/^\./, "")
    .replace(/\[[^\]]*\]/g, "")
    .replace(/^spec\./, "")
    .split(".");
  const starts = (a: string[], b: string[]) => b.every((k, i) => a[i] === k);
  // The field the path lies in, else the first field under the path (a CEL rule on an object).
  const inside = group.fields.find((fd) => starts(p, fd.path));
  return (inside ?? group.fields.find((fd) => starts(fd.path, p)))?.id ?? "";
}

/** An apply conflict: fields another manager set to a different value, and who. */
export interface ApplyConflict {
  fields: Record<string, string[]>;
  general: string[];
}

/** The conflicts of a refused apply (409 with FieldManagerConflict causes), by form field. */
export function conflictsOf(
  group: ConfigGroupDef,
  err: unknown,
  fieldOf: (path: string) => string = (path) => configFieldOf(group, path),
): ApplyConflict | undefined {
  if (!(err instanceof ApiError) || err.statusCode !== 409) return undefined;
  const causes =
    (
      err.body as
        | { details?: { causes?: { reason?: string; field?: string; message?: string }[] } }
        | undefined
    )?.details?.causes ?? [];
  const conflicts = causes.filter((c) => c.reason === "FieldManagerConflict");
  if (conflicts.length === 0) return undefined;
  const out: ApplyConflict = { fields: {}, general: [] };
  for (const c of conflicts) {
    const text = `Last set by another manager (${c.message ?? "unknown"}); saving anyway makes the dashboard its manager.`;
    const id = fieldOf(c.field ?? "");
    if (id) out.fields[id] = [...(out.fields[id] ?? []), text];
    else out.general.push(`${c.field}: ${text}`);
  }
  return out;
}
