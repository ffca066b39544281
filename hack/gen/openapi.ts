import { z } from "zod";

// zod 4 schema → structural OpenAPI v3.0 schema as apiextensions.k8s.io/v1 wants it.
// We walk `schema._zod.def` ourselves instead of z.toJSONSchema(): CRDs need OpenAPI 3.0
// (nullable, boolean exclusiveMinimum), structural rules (a type on every node, no $ref, no
// anyOf of types) and the x-kubernetes-* extensions, none of which JSON Schema 2020-12 output gives.

/** A node of the generated OpenAPI schema. */
export type OpenApiSchema = { [key: string]: unknown };

/** Raised for a schema the CRD cannot express, or a field without description. */
export class SchemaError extends Error {
  override name = "SchemaError";
}

// `.meta()` keys besides x-kubernetes-* that are copied through: value validations zod itself
// cannot carry (e.g. maxProperties on records, the date-time format of timestamps).
const PASSTHROUGH_META = new Set(["format", "maxProperties", "minProperties", "example"]);

// zod's own string formats → OpenAPI formats the apiserver validates. Others become a pattern.
const STRING_FORMATS: Record<string, string> = {
  datetime: "date-time",
  date: "date",
  email: "email",
  uuid: "uuid",
  ipv4: "ipv4",
  ipv6: "ipv6",
  base64: "byte",
};

// biome-ignore lint/suspicious/noExplicitAny: zod internals are untyped for our purposes
type AnyDef = any;

function defOf(schema: z.ZodType): AnyDef {
  return (schema as unknown as { _zod: { def: AnyDef } })._zod.def;
}

function metaOf(schema: z.ZodType): Record<string, unknown> {
  return (z.globalRegistry.get(schema) as Record<string, unknown> | undefined) ?? {};
}

/** Wrapper chain info collected while unwrapping optional/default/nullable/readonly/pipe. */
interface Unwrapped {
  core: z.ZodType;
  optional: boolean;
  nullable: boolean;
  hasDefault: boolean;
  defaultValue?: unknown;
  /** Meta of every layer, outermost first. */
  metas: Record<string, unknown>[];
}

function unwrap(schema: z.ZodType): Unwrapped {
  const out: Unwrapped = { core: schema, optional: false, nullable: false, hasDefault: false, metas: [] };
  let cur = schema;
  for (;;) {
    out.metas.push(metaOf(cur));
    const def = defOf(cur);
    switch (def.type) {
      case "optional":
        out.optional = true;
        cur = def.innerType;
        continue;
      case "nullable":
        out.nullable = true;
        cur = def.innerType;
        continue;
      case "default":
      case "prefault":
        if (!out.hasDefault) {
          out.hasDefault = true;
          const v = def.defaultValue;
          out.defaultValue = typeof v === "function" ? v() : v;
        }
        cur = def.innerType;
        continue;
      case "readonly":
      case "catch":
        cur = def.innerType;
        continue;
      case "pipe":
        // The stored form is what the apiserver sees: the input side of a transform.
        cur = def.in;
        continue;
    }
    out.core = cur;
    return out;
  }
}

/** Merged meta of a wrapper chain: the outermost layer wins. */
function mergedMeta(metas: Record<string, unknown>[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const m of [...metas].reverse()) Object.assign(merged, m);
  return merged;
}

function applyMeta(node: OpenApiSchema, meta: Record<string, unknown>, path: string): void {
  for (const [key, value] of Object.entries(meta)) {
    if (key === "description") node.description = value;
    else if (key === "x-kubernetes-validations") {
      const rules = value as unknown[];
      const existing = (node[key] as unknown[] | undefined) ?? [];
      node[key] = [...existing, ...rules];
    } else if (key.startsWith("x-kubernetes-") || PASSTHROUGH_META.has(key)) node[key] = value;
    else if (key === "id" || key === "title" || key === "deprecated") continue;
    else throw new SchemaError(`${path}: unsupported .meta() key ${JSON.stringify(key)}`);
  }
}

function literalType(values: unknown[], path: string): string {
  const types = new Set(values.map((v) => typeof v));
  if (types.size !== 1) throw new SchemaError(`${path}: literals of mixed types ${[...types].join(", ")}`);
  const t = [...types][0];
  if (t === "string" || t === "boolean") return t;
  if (t === "number") return values.every((v) => Number.isInteger(v)) ? "integer" : "number";
  throw new SchemaError(`${path}: unsupported literal type ${t}`);
}

/** Values of a schema that is a string enum, a literal, or a union of those; undefined otherwise. */
function enumValues(schema: z.ZodType): unknown[] | undefined {
  const u = unwrap(schema);
  const def = defOf(u.core);
  if (def.type === "enum") return Object.values(def.entries);
  if (def.type === "literal") return [...def.values];
  if (def.type === "union") {
    const parts = (def.options as z.ZodType[]).map(enumValues);
    if (parts.every((p) => p !== undefined)) return parts.flat();
  }
  return undefined;
}

function regexSource(pattern: unknown, path: string): string {
  if (pattern instanceof RegExp) {
    if (pattern.flags.replace(/[uv]/g, "") !== "")
      throw new SchemaError(`${path}: regex flags /${pattern.flags} cannot be expressed in OpenAPI`);
    return pattern.source;
  }
  return String(pattern);
}

function stringNode(def: AnyDef, path: string): OpenApiSchema {
  const node: OpenApiSchema = { type: "string" };
  const patterns: string[] = [];
  const checks: AnyDef[] = [...(def.checks ?? []).map((c: AnyDef) => c._zod.def)];
  // z.iso.datetime(), z.email() etc. are themselves a format check.
  if (def.check === "string_format") checks.unshift(def);
  for (const c of checks) {
    switch (c.check) {
      case "min_length":
        node.minLength = c.minimum;
        break;
      case "max_length":
        node.maxLength = c.maximum;
        break;
      case "length_equals":
        node.minLength = c.length;
        node.maxLength = c.length;
        break;
      case "string_format": {
        const fmt = STRING_FORMATS[c.format];
        if (c.format === "regex") patterns.push(regexSource(c.pattern, path));
        else if (fmt) node.format = fmt;
        else if (c.pattern) patterns.push(regexSource(c.pattern, path));
        else throw new SchemaError(`${path}: string format ${c.format} has no OpenAPI equivalent`);
        break;
      }
      default:
        throw new SchemaError(`${path}: unsupported string check ${c.check}`);
    }
  }
  const [first, ...rest] = patterns;
  if (first !== undefined) node.pattern = first;
  if (rest.length > 0) node.allOf = rest.map((p) => ({ pattern: p }));
  return node;
}

function numberNode(def: AnyDef, path: string): OpenApiSchema {
  const node: OpenApiSchema = { type: "number" };
  const checks: AnyDef[] = [...(def.checks ?? []).map((c: AnyDef) => c._zod.def)];
  if (def.check === "number_format") checks.unshift(def);
  for (const c of checks) {
    switch (c.check) {
      case "number_format":
        node.type = "integer";
        if (c.format === "int32") node.format = "int32";
        else if (c.format === "int64" || c.format === "safeint") node.format = "int64";
        else if (c.format === "float32" || c.format === "float64") {
          node.type = "number";
          node.format = c.format === "float32" ? "float" : "double";
        }
        break;
      case "greater_than":
        node.minimum = c.value;
        if (!c.inclusive) node.exclusiveMinimum = true;
        break;
      case "less_than":
        node.maximum = c.value;
        if (!c.inclusive) node.exclusiveMaximum = true;
        break;
      case "multiple_of":
        node.multipleOf = c.value;
        break;
      default:
        throw new SchemaError(`${path}: unsupported number check ${c.check}`);
    }
  }
  return node;
}

function arrayNode(def: AnyDef, path: string): OpenApiSchema {
  const node: OpenApiSchema = { type: "array", items: convertInner(def.element, `${path}[]`) };
  for (const c of (def.checks ?? []).map((c: AnyDef) => c._zod.def)) {
    if (c.check === "min_length") node.minItems = c.minimum;
    else if (c.check === "max_length") node.maxItems = c.maximum;
    else if (c.check === "length_equals") {
      node.minItems = c.length;
      node.maxItems = c.length;
    } else throw new SchemaError(`${path}: unsupported array check ${c.check}`);
  }
  return node;
}

function objectNode(def: AnyDef, path: string): OpenApiSchema {
  const properties: Record<string, OpenApiSchema> = {};
  const required: string[] = [];
  for (const [key, child] of Object.entries(def.shape as Record<string, z.ZodType>)) {
    const childPath = `${path}.${key}`;
    const node = convertField(child, childPath);
    if (typeof node.description !== "string" || node.description.trim() === "")
      throw new SchemaError(`${childPath}: field has no description (add .describe())`);
    properties[key] = node;
    const u = unwrap(child);
    if (!u.optional && !u.hasDefault) required.push(key);
  }
  const node: OpenApiSchema = { type: "object", properties };
  if (required.length > 0) node.required = required;
  const catchall = def.catchall ? defOf(def.catchall).type : undefined;
  if (catchall && catchall !== "never" && catchall !== "unknown")
    throw new SchemaError(`${path}: object catchall other than passthrough is not supported`);
  if (catchall === "unknown") node["x-kubernetes-preserve-unknown-fields"] = true;
  return node;
}

function unionNode(
  schema: z.ZodType,
  def: AnyDef,
  meta: Record<string, unknown>,
  path: string,
): OpenApiSchema {
  const values = enumValues(schema);
  if (values) return { type: literalType(values, path), enum: values };
  if (meta["x-kubernetes-int-or-string"] === true) {
    // Structural schemas allow anyOf only as value validation without types; keep the
    // string branch's pattern so the apiserver still rejects malformed strings.
    const node: OpenApiSchema = {};
    const branches = (def.options as z.ZodType[]).map((o, i) => convertInner(o, `${path}|${i}`));
    const str = branches.find((b) => b.type === "string");
    const int = branches.find((b) => b.type === "integer");
    if (!str || !int) throw new SchemaError(`${path}: int-or-string needs an int and a string branch`);
    const anyOf = branches.map((b) => {
      const { type: _t, format: _f, ...rest } = b;
      return { type: b.type, ...rest };
    });
    node.anyOf = anyOf;
    return node;
  }
  throw new SchemaError(`${path}: union of non-literals needs .meta({"x-kubernetes-int-or-string": true})`);
}

/** Core node of one schema, without the field-level meta of its wrappers. */
function coreNode(schema: z.ZodType, meta: Record<string, unknown>, path: string): OpenApiSchema {
  const def = defOf(schema);
  switch (def.type) {
    case "string":
      return stringNode(def, path);
    case "number":
    case "int":
      return numberNode(def, path);
    case "boolean":
      return { type: "boolean" };
    case "enum":
    case "literal": {
      const values = enumValues(schema) ?? [];
      return { type: literalType(values, path), enum: values };
    }
    case "union":
      return unionNode(schema, def, meta, path);
    case "array":
      return arrayNode(def, path);
    case "object":
      return objectNode(def, path);
    case "record": {
      const keyDef = defOf(def.keyType);
      if (keyDef.type !== "string" && keyDef.type !== "enum")
        throw new SchemaError(`${path}: record keys must be strings`);
      return { type: "object", additionalProperties: convertInner(def.valueType, `${path}{}`) };
    }
    case "unknown":
    case "any":
      if (meta["x-kubernetes-preserve-unknown-fields"] !== true)
        throw new SchemaError(
          `${path}: unknown/any needs .meta({"x-kubernetes-preserve-unknown-fields": true})`,
        );
      return {};
    default:
      throw new SchemaError(`${path}: zod type ${def.type} is not supported in CRDs`);
  }
}

function build(schema: z.ZodType, path: string): OpenApiSchema {
  const u = unwrap(schema);
  const meta = mergedMeta(u.metas);
  const node = coreNode(u.core, meta, path);
  if (meta["x-kubernetes-int-or-string"] === true) {
    // int-or-string nodes carry no type (structural rule); the anyOf holds the branches.
    delete node.type;
  }
  applyMeta(node, meta, path);
  if (u.nullable) node.nullable = true;
  if (u.hasDefault && u.defaultValue !== undefined) node.default = u.defaultValue;
  return orderKeys(node);
}

/** A field (object property): must end up with a description. */
function convertField(schema: z.ZodType, path: string): OpenApiSchema {
  return build(schema, path);
}

/** An array item / record value / union branch: description optional. */
function convertInner(schema: z.ZodType, path: string): OpenApiSchema {
  return build(schema, path);
}

// Stable, readable key order so generated YAML diffs stay small.
const KEY_ORDER = [
  "description",
  "type",
  "format",
  "enum",
  "default",
  "nullable",
  "minimum",
  "exclusiveMinimum",
  "maximum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "required",
  "properties",
  "additionalProperties",
  "items",
  "anyOf",
  "allOf",
];

function orderKeys(node: OpenApiSchema): OpenApiSchema {
  const out: OpenApiSchema = {};
  for (const k of KEY_ORDER) if (k in node) out[k] = node[k];
  for (const k of Object.keys(node).sort()) if (!(k in out)) out[k] = node[k];
  return out;
}

/** Converts one zod schema (spec or status of a kind) into a structural OpenAPI v3 node. */
export function toOpenApi(schema: z.ZodType, path = ""): OpenApiSchema {
  const node = build(schema, path);
  if (typeof node.description !== "string" || node.description.trim() === "")
    throw new SchemaError(`${path || "<root>"}: schema has no description (add .describe())`);
  return node;
}
