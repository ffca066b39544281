import { GROUP, type KindDefinition, VERSION } from "../../src/api/v1alpha1/kind.ts";
import { type OpenApiSchema, SchemaError, toOpenApi } from "./openapi.ts";

/** The CRD object (apiextensions.k8s.io/v1) of one kind; pure. */
export function buildCrd(def: KindDefinition): Record<string, unknown> {
  const spec = toOpenApi(def.specSchema, `${def.kind}.spec`);
  const status = toOpenApi(def.statusSchema, `${def.kind}.status`);
  const root: OpenApiSchema = {
    description: def.description,
    type: "object",
    properties: {
      apiVersion: {
        description:
          "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.",
        type: "string",
      },
      kind: {
        description:
          "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. In CamelCase.",
        type: "string",
      },
      // The apiserver validates metadata itself; a CRD may only say `type: object` here.
      metadata: { type: "object" },
      spec,
      status,
    },
  };
  if (def.specRequired !== false) root.required = ["spec"];
  if (def.topLevelValidations && def.topLevelValidations.length > 0)
    root["x-kubernetes-validations"] = def.topLevelValidations;

  const names: Record<string, unknown> = {
    plural: def.plural,
    singular: def.singular,
    kind: def.kind,
    listKind: `${def.kind}List`,
  };
  if (def.shortNames.length > 0) names.shortNames = def.shortNames;
  if (def.categories.length > 0) names.categories = def.categories;

  const printerColumns = [
    ...def.printerColumns,
    {
      name: "Age",
      type: "date",
      jsonPath: ".metadata.creationTimestamp",
      description: "Time since creation.",
    },
  ];
  for (const c of def.printerColumns) {
    if (!c.jsonPath.startsWith(".")) throw new SchemaError(`${def.kind}: printer column ${c.name} jsonPath`);
    // Every kind gets the Age column above; a kind naming its own would print it twice.
    if (c.name.toLowerCase() === "age")
      throw new SchemaError(`${def.kind}: printer column Age is added for every kind`);
  }

  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: `${def.plural}.${GROUP}`,
      labels: { "app.kubernetes.io/name": "cronscale", "app.kubernetes.io/part-of": "cronscale" },
    },
    spec: {
      group: GROUP,
      names,
      scope: def.scope,
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: printerColumns,
          schema: { openAPIV3Schema: root },
        },
      ],
    },
  };
}

/** File name of a kind's CRD: `<plural>.cronscale.io.yaml`. */
export function crdFileName(def: KindDefinition): string {
  return `${def.plural}.${GROUP}.yaml`;
}

/** Problems that make a schema non-structural (empty when fine); used by tests and the generator. */
export function structuralProblems(node: OpenApiSchema, path = "", inJunctor = false): string[] {
  const problems: string[] = [];
  const intOrString = node["x-kubernetes-int-or-string"] === true;
  const preserve = node["x-kubernetes-preserve-unknown-fields"] === true;
  if (!inJunctor && node.type === undefined && !intOrString && !preserve)
    problems.push(`${path || "<root>"}: no type`);
  if (inJunctor) {
    for (const k of ["description", "default", "additionalProperties", "nullable"])
      if (k in node) problems.push(`${path}: ${k} inside anyOf/allOf`);
  }
  if ("$ref" in node || "oneOf" in node || "not" in node)
    problems.push(`${path}: $ref/oneOf/not not allowed`);
  if (node.type === "object" && node.properties && node.additionalProperties)
    problems.push(`${path}: both properties and additionalProperties`);
  for (const [k, child] of Object.entries((node.properties as Record<string, OpenApiSchema>) ?? {}))
    problems.push(...structuralProblems(child, `${path}.${k}`, inJunctor));
  if (node.items) problems.push(...structuralProblems(node.items as OpenApiSchema, `${path}[]`, inJunctor));
  if (node.additionalProperties && typeof node.additionalProperties === "object")
    problems.push(...structuralProblems(node.additionalProperties as OpenApiSchema, `${path}{}`, inJunctor));
  for (const j of ["anyOf", "allOf"]) {
    const branches = node[j] as OpenApiSchema[] | undefined;
    if (!branches) continue;
    branches.forEach((b, i) => {
      // The one allowed exception: int-or-string branches may name their type.
      const { type: _t, ...rest } = b;
      problems.push(...structuralProblems(intOrString ? rest : b, `${path}.${j}[${i}]`, true));
    });
  }
  return problems;
}

/** Every object property lacking a description (empty when fine). */
export function missingDescriptions(node: OpenApiSchema, path = ""): string[] {
  const out: string[] = [];
  for (const [k, child] of Object.entries((node.properties as Record<string, OpenApiSchema>) ?? {})) {
    const p = `${path}.${k}`;
    if (p !== ".metadata" && (typeof child.description !== "string" || child.description === "")) out.push(p);
    out.push(...missingDescriptions(child, p));
  }
  if (node.items) out.push(...missingDescriptions(node.items as OpenApiSchema, `${path}[]`));
  if (node.additionalProperties && typeof node.additionalProperties === "object")
    out.push(...missingDescriptions(node.additionalProperties as OpenApiSchema, `${path}{}`));
  return out;
}
