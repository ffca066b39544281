import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toOpenApi } from "./openapi.ts";

const d = (s: string) => s;

describe("toOpenApi", () => {
  it("maps strings with length, pattern and formats", () => {
    const s = z
      .object({
        name: z
          .string()
          .min(1)
          .max(10)
          .regex(/^[a-z]+$/)
          .describe(d("name")),
        when: z.iso.datetime().describe("when"),
        mail: z.email().max(254).describe("mail"),
        two: z.string().regex(/^a/).regex(/b$/).describe("two patterns"),
      })
      .describe("root");
    expect(toOpenApi(s)).toEqual({
      description: "root",
      type: "object",
      required: ["name", "when", "mail", "two"],
      properties: {
        name: { description: "name", type: "string", minLength: 1, maxLength: 10, pattern: "^[a-z]+$" },
        when: { description: "when", type: "string", format: "date-time" },
        mail: { description: "mail", type: "string", format: "email", maxLength: 254 },
        two: { description: "two patterns", type: "string", pattern: "^a", allOf: [{ pattern: "b$" }] },
      },
    });
  });

  it("maps ints, numbers, bounds and defaults; defaulted and optional fields are not required", () => {
    const s = z
      .object({
        t: z.int().min(10).max(3600).default(300).describe("t"),
        r: z.number().gt(0).lt(1).optional().describe("r"),
        b: z.boolean().default(false).describe("b"),
      })
      .describe("root");
    expect(toOpenApi(s)).toEqual({
      description: "root",
      type: "object",
      properties: {
        t: { description: "t", type: "integer", format: "int64", default: 300, minimum: 10, maximum: 3600 },
        r: {
          description: "r",
          type: "number",
          minimum: 0,
          exclusiveMinimum: true,
          maximum: 1,
          exclusiveMaximum: true,
        },
        b: { description: "b", type: "boolean", default: false },
      },
    });
  });

  it("maps enums, literals and unions of literals to enum", () => {
    const s = z
      .object({
        e: z.enum(["A", "B"]).describe("e"),
        l: z.literal("X").describe("l"),
        u: z.union([z.literal("a"), z.enum(["b", "c"])]).describe("u"),
      })
      .describe("root");
    const out = toOpenApi(s) as { properties: Record<string, unknown> };
    expect(out.properties).toEqual({
      e: { description: "e", type: "string", enum: ["A", "B"] },
      l: { description: "l", type: "string", enum: ["X"] },
      u: { description: "u", type: "string", enum: ["a", "b", "c"] },
    });
  });

  it("maps arrays with bounds and list-type meta, records and nullable", () => {
    const s = z
      .object({
        a: z.array(z.string().max(5)).min(1).max(3).meta({ "x-kubernetes-list-type": "set" }).describe("a"),
        m: z.record(z.string(), z.int()).meta({ maxProperties: 4 }).describe("m"),
        n: z.string().max(3).nullable().describe("n"),
      })
      .describe("root");
    const out = toOpenApi(s) as { properties: Record<string, unknown> };
    expect(out.properties).toEqual({
      a: {
        description: "a",
        type: "array",
        minItems: 1,
        maxItems: 3,
        items: { type: "string", maxLength: 5 },
        "x-kubernetes-list-type": "set",
      },
      m: {
        description: "m",
        type: "object",
        maxProperties: 4,
        additionalProperties: { type: "integer", format: "int64" },
      },
      n: { description: "n", type: "string", nullable: true, maxLength: 3 },
    });
  });

  it("carries CEL rules from .meta() on any wrapper layer", () => {
    const s = z
      .object({ x: z.string().max(3).optional().describe("x") })
      .meta({ "x-kubernetes-validations": [{ rule: "has(self.x)", message: "x is required" }] })
      .describe("root");
    expect(toOpenApi(s)["x-kubernetes-validations"]).toEqual([
      { rule: "has(self.x)", message: "x is required" },
    ]);
  });

  it("emits int-or-string without a top-level type", () => {
    const s = z
      .object({
        q: z
          .union([z.int().min(0), z.string().max(8)])
          .meta({ "x-kubernetes-int-or-string": true })
          .describe("q"),
      })
      .describe("root");
    const q = (toOpenApi(s) as { properties: { q: Record<string, unknown> } }).properties.q;
    expect(q.type).toBeUndefined();
    expect(q["x-kubernetes-int-or-string"]).toBe(true);
    expect(q.anyOf).toEqual([
      { type: "integer", minimum: 0 },
      { type: "string", maxLength: 8 },
    ]);
  });

  it("fails on a field without description, naming it", () => {
    const s = z.object({ spec: z.object({ inner: z.string() }).describe("spec") }).describe("root");
    expect(() => toOpenApi(s, "K")).toThrow(/K\.spec\.inner: field has no description/);
  });

  it("fails on schemas a CRD cannot express", () => {
    expect(() => toOpenApi(z.union([z.string(), z.object({})]).describe("u"))).toThrow(
      /union of non-literals/,
    );
    expect(() => toOpenApi(z.unknown().describe("u"))).toThrow(/preserve-unknown-fields/);
    expect(() => toOpenApi(z.string().regex(/a/i).describe("i"))).toThrow(/regex flags/);
    expect(() => toOpenApi(z.string().meta({ foo: 1 }).describe("m"))).toThrow(/unsupported .meta\(\) key/);
  });
});
