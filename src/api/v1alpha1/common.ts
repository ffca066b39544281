import { z } from "zod";

// Shared schema pieces. Every bound below is there for two reasons: the user gets a clear
// rejection, and the apiserver's CEL cost estimator needs maxLength/maxItems to stay in budget.

/** RFC 1123 DNS subdomain: what Kubernetes accepts as a Secret/ConfigMap name. */
export const DNS_SUBDOMAIN_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
/** A host name as written in an Ingress rule: lowercase labels of 1–63 chars, at least two labels. */
export const HOSTNAME_PATTERN =
  "^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\\.)+[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$";

/** Name of an object in the same namespace (Secret, ConfigMap...). */
export function objectName(description: string) {
  return z.string().min(1).max(253).regex(new RegExp(DNS_SUBDOMAIN_PATTERN)).describe(description);
}

/** A fully qualified DNS host name (no wildcard, no trailing dot, no port). */
export function hostname(description: string) {
  return z.string().min(1).max(253).regex(new RegExp(HOSTNAME_PATTERN)).describe(description);
}

/** RFC 3339 timestamp as the apiserver serialises metav1.Time (status fields). */
export function timestamp(description: string) {
  return z.string().max(64).meta({ format: "date-time" }).describe(description);
}

/** Reference to one key of a Secret in the object's namespace. */
export const secretKeyRefSchema = z
  .object({
    name: objectName("Name of the Secret, in the same namespace as this object."),
    key: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[-._a-zA-Z0-9]+$/)
      .describe("Key inside the Secret whose value is used."),
  })
  .describe("A key of a Secret in the same namespace.");

/** Kubernetes resource quantity (e.g. `500m`, `4`, `8Gi`), int or string like core's Quantity. */
export function quantity(description: string) {
  return z
    .union([
      z.int().min(0),
      z
        .string()
        .max(64)
        .regex(/^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/),
    ])
    .meta({ "x-kubernetes-int-or-string": true })
    .describe(description);
}

/** metav1.Condition, as every status carries it. */
export const conditionSchema = z
  .object({
    type: z.string().min(1).max(316).describe("Type of the condition in CamelCase, e.g. Ready."),
    status: z.enum(["True", "False", "Unknown"]).describe("Status of the condition: True, False or Unknown."),
    observedGeneration: z
      .int()
      .min(0)
      .optional()
      .describe("metadata.generation of the object the condition was computed from."),
    lastTransitionTime: timestamp("When the status of this condition last changed."),
    reason: z
      .string()
      .min(1)
      .max(1024)
      .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
      .describe("Machine-readable CamelCase reason for the last transition."),
    message: z.string().max(32768).describe("Human-readable details about the last transition."),
  })
  .describe("One aspect of the object's state (metav1.Condition).");

/** `status.conditions`: a list map keyed by type, as kubectl and SSA expect. */
export function conditionsSchema(description: string) {
  return z
    .array(conditionSchema)
    .max(32)
    .meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"] })
    .describe(description);
}

/** `status.observedGeneration`. */
export const observedGenerationSchema = z
  .int()
  .min(0)
  .describe("metadata.generation the operator last acted on; status is stale while it lags.");
