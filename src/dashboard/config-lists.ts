import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import type { KubeObject } from "../runtime/types.ts";
import {
  applyConfig,
  type ConfigField,
  type ConfigForm,
  type ConfigGroupDef,
  configFieldOf,
  fieldManager,
  formOfValue,
  valuesOf,
} from "./config-model.ts";

// The platform's lists keyed by name (payment gateways, shipping methods) as forms, entry by entry
// (pure). Both lists are `x-kubernetes-list-type: map` keyed by `name`, so server-side apply merges
// and owns them per entry: the dashboard's apply of one list (field manager
// `cronscale-dashboard-<list>`) carries the entries that manager already owns plus the one added
// or edited, and leaves every other entry (kubectl's, a GitOps controller's) to its owner.

/** One editable list of the spec. */
export interface ConfigListDef extends ConfigGroupDef {
  id: "payments" | "shipping";
  /** One entry, in running text ("payment gateway"). */
  one: string;
  /** The list's field under `spec`. */
  specKey: "paymentGateways" | "shippingMethods";
  /** The entry's fields, paths relative to the entry; `name` is the list's key. */
  fields: ConfigField[];
}

type Entry = { name: string } & Record<string, unknown>;

const f = (id: string, label: string, path: string, kind: ConfigField["kind"] = "text", extra = {}) => ({
  id,
  label,
  path: path.split("."),
  kind,
  ...extra,
});
const NAME = f("name", "Name", "name", "text", {
  hint: "Lower-case letters, digits and dashes; the entry's key, not changed later.",
});

export const CONFIG_LISTS: readonly ConfigListDef[] = [
  {
    id: "payments",
    title: "Payment gateways",
    one: "payment gateway",
    specKey: "paymentGateways",
    fields: [
      NAME,
      f("type", "Type", "type", "select", { options: ["Card", "Wallet", "MobileMoney", "BankTransfer"] }),
      f("provider", "Provider", "provider", "select", {
        options: ["test", "stripe", "manual"],
        hint: "test: simulated (Test mode); stripe: cards and wallets (Secret with secretKey, webhookSecret); manual: bank transfer (settings accountHolder, iban).",
      }),
      f("mode", "Mode", "mode", "select", { options: ["Test", "Live"] }),
      f("enabled", "Enabled", "enabled", "checkbox"),
      f("credentials", "Credentials: Secret name", "credentialsSecretRef.name", "text", {
        hint: "A Secret in this namespace holding the provider's keys (never typed here).",
      }),
      f("settings", "Settings", "settings", "pairs", {
        hint: "Non-secret settings, one key=value a line.",
      }),
    ],
  },
  {
    id: "shipping",
    title: "Shipping methods",
    one: "shipping method",
    specKey: "shippingMethods",
    fields: [
      NAME,
      f("carrier", "Carrier", "carrier", "text", { hint: "E.g. dhl, ups or manual." }),
      f("zones", "Zones", "zones", "list", { hint: "Country codes separated by commas, e.g. DE, AT." }),
      f("calculation", "Rate calculation", "rate.calculation", "select", {
        options: ["Flat", "ByWeight", "ByOrderTotal", "Carrier"],
      }),
      f("amount", "Rate amount", "rate.amount", "text", { hint: "E.g. 4.90; not for Carrier rates." }),
      f("currency", "Rate currency", "rate.currency", "text", { hint: "ISO 4217, e.g. EUR." }),
      f("fulfillment", "Fulfillment", "fulfillment", "select", { options: ["Ship", "Pickup", "Digital"] }),
      f("enabled", "Enabled", "enabled", "checkbox"),
    ],
  },
];

export const configList = (id: string) => CONFIG_LISTS.find((l) => l.id === id);

/** The platform's entries of a list. */
export const entriesOf = (list: ConfigListDef, platform: ScalePlatform): Entry[] =>
  ((platform.spec as unknown as Record<string, Entry[] | undefined>)[list.specKey] ?? []).slice();

/**
 * The form of one entry: `entry` undefined is the Add form (name typed), else the edit form of
 * that entry (its name is the route's, not a field). Field ids are unique on the page.
 */
export function entryGroup(list: ConfigListDef, entry?: string): ConfigGroupDef {
  const key = entry === undefined ? "add" : `e-${entry}`;
  return {
    id: list.id,
    title: list.title,
    fields: list.fields
      .filter((fd) => entry === undefined || fd.id !== "name")
      .map((fd) => ({ ...fd, id: `${list.id}-${key}-${fd.id}` })),
  };
}

/** The form of an entry as the spec has it; the Add form starts enabled. */
export const entryForm = (group: ConfigGroupDef, entry: Entry | undefined): ConfigForm =>
  formOfValue(group, entry ?? { enabled: true });

/** The entry a form describes (named `name`). */
export const entryOf = (group: ConfigGroupDef, name: string, form: ConfigForm): Entry => ({
  ...valuesOf(group, form),
  name,
});

/** A managedFields key of a map-list entry (`k:{"name":"stripe"}`) → the entry's name. */
function keyName(key: string): string | undefined {
  if (!key.startsWith("k:")) return undefined;
  try {
    const k = JSON.parse(key.slice(2)) as { name?: unknown };
    return typeof k.name === "string" ? k.name : undefined;
  } catch {
    return undefined;
  }
}

/** Who manages fields of each entry: entry name → managers ("kubectl (Apply)"), from managedFields. */
export function entryManagers(list: ConfigListDef, platform: ScalePlatform): Map<string, string[]> {
  const out = new Map<string, string[]>();
  type Managed = { manager?: string; operation?: string; fieldsV1?: Record<string, Record<string, object>> };
  for (const m of (platform.metadata.managedFields ?? []) as Managed[]) {
    const spec = m.fieldsV1?.["f:spec"];
    for (const key of Object.keys(spec?.[`f:${list.specKey}`] ?? {})) {
      const name = keyName(key);
      if (name === undefined) continue;
      out.set(name, [...(out.get(name) ?? []), `${m.manager ?? "unknown"} (${m.operation ?? "?"})`]);
    }
  }
  return out;
}

/** The entries the list's dashboard manager owns by apply (its earlier saves). */
export function ownedByDashboard(list: ConfigListDef, platform: ScalePlatform): Set<string> {
  const mine = `${fieldManager(list)} (Apply)`;
  return new Set(
    [...entryManagers(list, platform)].filter(([, ms]) => ms.includes(mine)).map(([name]) => name),
  );
}

/** Managers other than the list's dashboard manager that own fields of `name`. */
export const otherOwners = (list: ConfigListDef, platform: ScalePlatform, name: string): string[] =>
  (entryManagers(list, platform).get(name) ?? []).filter((m) => m !== `${fieldManager(list)} (Apply)`);

/**
 * The apply configuration that adds or edits `entry`: the entries the dashboard's manager already
 * owns, as they are now (an apply that left them out would remove them), and `entry`.
 */
export function applyOfEntry(list: ConfigListDef, platform: ScalePlatform, entry: Entry): KubeObject {
  const mine = ownedByDashboard(list, platform);
  const kept = entriesOf(list, platform).filter((e) => mine.has(e.name) && e.name !== entry.name);
  return applyConfig(platform, { [list.specKey]: [...kept, entry] });
}

/**
 * The form field an API path names: `spec.shippingMethods[0].rate.amount` (validation) or
 * `.spec.shippingMethods[name="x"].rate.amount` (a conflict) → the entry form's field.
 */
export function entryFieldOf(list: ConfigListDef, group: ConfigGroupDef, path: string): string {
  const prefix = new RegExp(`^\\.?spec\\.${list.specKey}(\\[[^\\]]*\\])?`);
  if (!prefix.test(path)) return "";
  const rest = path.replace(prefix, "spec");
  // The entry itself (a CEL rule or a missing required field): its first field.
  return rest === "spec" ? (group.fields[0]?.id ?? "") : configFieldOf(group, rest);
}

/**
 * The JSON patch that removes `seen` (the entry as the viewer confirmed its removal) at its
 * index now: the `test` makes the API server refuse it if the entry changed or moved since.
 */
export function removalPatch(
  list: ConfigListDef,
  platform: ScalePlatform,
  seen: Entry,
): unknown[] | undefined {
  const i = entriesOf(list, platform).findIndex((e) => e.name === seen.name);
  if (i < 0) return undefined;
  const path = `/spec/${list.specKey}/${i}`;
  return [
    { op: "test", path, value: seen },
    { op: "remove", path },
  ];
}
