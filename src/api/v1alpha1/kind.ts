import type { V1ObjectMeta } from "@kubernetes/client-node";
import type { z } from "zod";

/** API group of every cronscale kind. */
export const GROUP = "cronscale.io";
/** The one served (and stored) version. */
export const VERSION = "v1alpha1";
/** `apiVersion` string of every cronscale object. */
export const API_VERSION = `${GROUP}/${VERSION}`;

/**
 * One CEL rule, emitted verbatim into `x-kubernetes-validations`.
 * A rule that mentions `oldSelf` is a transition rule: the apiserver evaluates it only on update.
 */
export interface CelRule {
  rule: string;
  /** Shown to the user on rejection; must name the field. */
  message?: string;
  messageExpression?: string;
  /** JSONPath-ish path relative to the schema node, e.g. `.resources.cpu`: where the error points. */
  fieldPath?: string;
  reason?: "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired" | "FieldValueDuplicate";
  /** Evaluate a transition rule even when the old object lacks the field (oldSelf is then an optional). */
  optionalOldSelf?: boolean;
}

/** One `additionalPrinterColumns` entry (`kubectl get` columns). */
export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  jsonPath: string;
  description: string;
  /** 0 = shown by default, >0 = only with `-o wide`. */
  priority?: number;
  format?: string;
}

/**
 * Everything the CRD generator needs to know about a kind. Each kind module exports one
 * (`export const scalePlatformKind = defineKind({...})`) and `index.ts` registers it.
 *
 * Schema rules (enforced by `hack/gen/openapi.ts`): every field has `.describe()`, CEL rules go in
 * `.meta({ "x-kubernetes-validations": [...] })`, any other `x-kubernetes-*` key in `.meta()` is
 * copied through; strings and arrays used in CEL need `.max()` so the cost estimate stays in budget.
 */
export interface KindDefinition<Spec extends z.ZodType = z.ZodType, Status extends z.ZodType = z.ZodType> {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  scope: "Namespaced" | "Cluster";
  /** Top-level description of the kind (what `kubectl explain <kind>` prints first). */
  description: string;
  specSchema: Spec;
  statusSchema: Status;
  printerColumns: PrinterColumn[];
  /**
   * CEL rules on the whole object; the only place that may read `self.metadata.name`
   * (the apiserver exposes only name and generateName of metadata to CEL).
   */
  topLevelValidations?: CelRule[];
  /** Whether `spec` must be present (default true). */
  specRequired?: boolean;
}

/** Identity helper that keeps the spec/status schema types for inference. */
export function defineKind<Spec extends z.ZodType, Status extends z.ZodType>(
  def: KindDefinition<Spec, Status>,
): KindDefinition<Spec, Status> {
  return def;
}

/** A typed custom resource object as read from the apiserver (status may be absent). */
export interface Resource<Spec, Status> {
  apiVersion: typeof API_VERSION;
  kind: string;
  metadata: V1ObjectMeta;
  spec: Spec;
  status?: Status;
}

/** Object type of a kind definition: `ResourceOf<typeof scalePlatformKind>`. */
export type ResourceOf<K> =
  K extends KindDefinition<infer Spec, infer Status> ? Resource<z.output<Spec>, z.output<Status>> : never;

/** Version/kind/plural triple as the runtime's `Manager.addController({for})` wants it. */
export function gvkOf(def: KindDefinition): {
  apiVersion: string;
  kind: string;
  plural: string;
  group: string;
  version: string;
} {
  return { apiVersion: API_VERSION, kind: def.kind, plural: def.plural, group: GROUP, version: VERSION };
}
