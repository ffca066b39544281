import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { allKinds } from "../../src/api/v1alpha1/index.ts";
import { buildCrd, crdFileName, missingDescriptions, structuralProblems } from "./crd.ts";
import type { OpenApiSchema } from "./openapi.ts";
import { crdTemplate, crdYaml, renderCrds } from "./render.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");

function rootSchema(crd: Record<string, unknown>): OpenApiSchema {
  const spec = crd.spec as { versions: { schema: { openAPIV3Schema: OpenApiSchema } }[] };
  return spec.versions[0]!.schema.openAPIV3Schema;
}

/** Every string and array node reachable from `node`, with its path. */
function walk(node: OpenApiSchema, path: string, visit: (n: OpenApiSchema, p: string) => void): void {
  visit(node, path);
  for (const [k, c] of Object.entries((node.properties as Record<string, OpenApiSchema>) ?? {}))
    walk(c, `${path}.${k}`, visit);
  if (node.items) walk(node.items as OpenApiSchema, `${path}[]`, visit);
  if (typeof node.additionalProperties === "object")
    walk(node.additionalProperties as OpenApiSchema, `${path}{}`, visit);
}

describe.each(allKinds.map((k) => [k.kind, k] as const))("generated CRD of %s", (_name, kind) => {
  const crd = buildCrd(kind);
  const root = rootSchema(crd);

  it("describes every field (kubectl explain has something to say)", () => {
    expect(missingDescriptions(root)).toEqual([]);
  });

  it("is structural: a type on every node, nothing forbidden inside anyOf/allOf", () => {
    expect(structuralProblems(root)).toEqual([]);
  });

  it("bounds every array (maxItems) so CEL cost estimates stay within the apiserver budget", () => {
    const unbounded: string[] = [];
    walk(root, "", (n, p) => {
      if (n.type === "array" && n.maxItems === undefined) unbounded.push(p);
    });
    expect(unbounded).toEqual([]);
  });

  it("bounds every spec string (maxLength, enum or format)", () => {
    const unbounded: string[] = [];
    walk((root.properties as Record<string, OpenApiSchema>).spec!, ".spec", (n, p) => {
      if (n.type === "string" && n.maxLength === undefined && n.enum === undefined) unbounded.push(p);
    });
    expect(unbounded).toEqual([]);
  });

  it("prints each column once (kubectl get shows no AGE twice)", () => {
    const v = (crd.spec as { versions: { additionalPrinterColumns: { name: string }[] }[] }).versions[0]!;
    const names = v.additionalPrinterColumns.map((c) => c.name.toLowerCase());
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
    expect(names.at(-1)).toBe("age");
  });

  it("serves v1alpha1 as storage with the status subresource", () => {
    const v = (crd.spec as { versions: Record<string, unknown>[] }).versions[0]!;
    expect(v).toMatchObject({ name: "v1alpha1", served: true, storage: true, subresources: { status: {} } });
  });

  it("renders the same bytes every time and matches the committed file", () => {
    const once = renderCrds([kind]).get(crdFileName(kind));
    expect(renderCrds([kind]).get(crdFileName(kind))).toBe(once);
    expect(
      readFileSync(join(ROOT, "crds", crdFileName(kind)), "utf8"),
      "crds/ is stale: run node hack/gen/crds.ts",
    ).toBe(once);
    expect(
      readFileSync(join(ROOT, "charts/cronscale/templates/crds", crdFileName(kind)), "utf8"),
      "the chart's CRD templates are stale: run node hack/gen/crds.ts",
    ).toBe(crdTemplate(kind));
  });

  it("is a chart template: the same CRD, only with crds.enabled, labelled, kept on uninstall with crds.keep", () => {
    const text = crdTemplate(kind);
    expect(text).toMatch(/^\{\{- \/\* GENERATED[^\n]*\n\{\{- if \.Values\.crds\.enabled \}\}\n/);
    expect(text.trimEnd().endsWith("{{- end }}")).toBe(true);
    expect(text).toContain("{{- if .Values.crds.keep }}");
    expect(text).toContain("helm.sh/resource-policy: keep");
    // Outside the metadata block the template is the plain CRD, byte for byte.
    const spec = (t: string) => t.slice(t.indexOf("\nspec:\n"));
    expect(spec(text).replace(/\{\{- end \}\}\n$/, "")).toBe(spec(crdYaml(kind)));
  });
});
