import { z } from "zod";
import type { KubeObject } from "../../runtime/types.ts";
import { PLAN_TABLE, PLATFORM_PLANS, toQuantity } from "../plans.ts";
import { conditionsSchema, hostname, objectName, observedGenerationSchema, timestamp } from "./common.ts";
import { defineKind } from "./kind.ts";
import { platformNotificationsSchema, SMS_PLAN_RULE } from "./notification.ts";
import { backupSpecSchema, backupStatusSchema } from "./scaleplatform-backup.ts";
import {
  emailSchema,
  localizationSchema,
  paymentGatewaySchema,
  shippingMethodSchema,
  storeSchema,
  webhookSchema,
} from "./scaleplatform-config.ts";

export { WEBHOOK_EVENTS } from "./scaleplatform-config.ts";

// Plan tiers for the downgrade rule. Custom is ranked highest: it is "by agreement", so any fixed
// plan may move to it, but leaving Custom for a fixed plan could shrink resources (and storage,
// which a PVC cannot do) — refused like any downgrade. Keep in sync with PLATFORM_PLANS order.
const PLAN_RANK_CEL = `{${PLATFORM_PLANS.map((p, i) => `'${p}': ${i}`).join(", ")}}`;

// "Upgrades only" must also hold through Custom: a fixed plan moving to Custom keeps at least the
// fixed plan's CPU, memory and storage (else Enterprise → Custom with 1 vCPU would be a downgrade
// the rank rule lets through). Built from the plan table so the figures live in one place.
const FIXED_PLANS = Object.keys(PLAN_TABLE) as (keyof typeof PLAN_TABLE)[];
const planFigureCel = (pick: (f: (typeof PLAN_TABLE)[keyof typeof PLAN_TABLE]) => string) =>
  `{${FIXED_PLANS.map((p) => `'${p}': '${pick(PLAN_TABLE[p])}'`).join(", ")}}[oldSelf.plan]`;
const NO_LESS_THAN_FIXED = (
  [
    ["cpu", (f) => toQuantity.cpu(f.cpuMillis)],
    ["memory", (f) => toQuantity.memory(f.memoryMiB)],
    ["storage", (f) => toQuantity.storage(f.storageGiB)],
  ] as const satisfies readonly (readonly [string, Parameters<typeof planFigureCel>[0]])[]
).map(([field, pick]) => ({
  rule: `self.plan != 'Custom' || oldSelf.plan == 'Custom' || !has(self.resources) || quantity(self.resources.${field}).compareTo(quantity(${planFigureCel(pick)})) >= 0`,
  messageExpression: `'cannot change plan from ' + oldSelf.plan + ' to Custom with ${field} ' + self.resources.${field} + ': below the ' + ${planFigureCel(pick)} + ' of ' + oldSelf.plan + ' (a plan change may not lower CPU, memory or storage)'`,
  fieldPath: `.resources.${field}`,
  reason: "FieldValueForbidden",
}));

// Quantities as strings (e.g. "4", "500m", "8Gi") so CEL's quantity library can compare them.
const quantityString = (description: string) =>
  z
    .string()
    .min(1)
    .max(32)
    .regex(/^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/)
    .meta({ "x-kubernetes-validations": [{ rule: "isQuantity(self)", message: "must be a quantity" }] })
    .describe(description);

export const customResourcesSchema = z
  .object({
    cpu: quantityString("Total vCPU of the plan, e.g. 24. Can only grow."),
    memory: quantityString("Total memory of the plan, e.g. 48Gi. Can only grow."),
    storage: quantityString("Database storage, e.g. 1Ti. Can only grow (volumes cannot shrink)."),
    minReplicas: z.int().min(1).max(50).optional().describe("Minimum app replicas (default 1)."),
    maxReplicas: z
      .int()
      .min(1)
      .max(50)
      .optional()
      .describe("Maximum app replicas the HPA may reach (default 3)."),
  })
  .meta({
    "x-kubernetes-validations": [
      {
        rule: "quantity(self.cpu).compareTo(quantity(oldSelf.cpu)) >= 0",
        messageExpression:
          "'cpu cannot shrink from ' + oldSelf.cpu + ' to ' + self.cpu + ' (a plan change may not lower CPU, memory or storage)'",
        fieldPath: ".cpu",
        reason: "FieldValueForbidden",
      },
      {
        rule: "quantity(self.memory).compareTo(quantity(oldSelf.memory)) >= 0",
        messageExpression:
          "'memory cannot shrink from ' + oldSelf.memory + ' to ' + self.memory + ' (a plan change may not lower CPU, memory or storage)'",
        fieldPath: ".memory",
        reason: "FieldValueForbidden",
      },
      {
        rule: "quantity(self.storage).compareTo(quantity(oldSelf.storage)) >= 0",
        messageExpression:
          "'storage cannot shrink from ' + oldSelf.storage + ' to ' + self.storage + ' (volumes cannot shrink)'",
        fieldPath: ".storage",
        reason: "FieldValueForbidden",
      },
      {
        rule: "!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",
        message: "minReplicas must not exceed maxReplicas",
        fieldPath: ".minReplicas",
      },
    ],
  })
  .describe("Explicit resources; required with plan Custom and refused with the fixed plans.");

/**
 * One CIDR (IPv4 or IPv6). The pattern is the shape; the apiserver's CEL `isCIDR` is the exact
 * check (octets, prefix length, IPv6 groups), so nothing invalid is ever stored.
 */
const cidr = z
  .string()
  .min(3)
  .max(49)
  .regex(/^([0-9]{1,3}(\.[0-9]{1,3}){3}\/[0-9]{1,2}|[0-9a-fA-F:.]{2,45}\/[0-9]{1,3})$/)
  .meta({
    "x-kubernetes-validations": [
      { rule: "isCIDR(self)", message: "must be a CIDR such as 203.0.113.0/24 or 2001:db8::/32" },
    ],
  })
  .describe("A CIDR, e.g. 203.0.113.0/24 or 2001:db8::/32.");

const securitySchema = z
  .object({
    adminAllowedCIDRs: z
      .array(cidr)
      .max(64)
      .optional()
      .describe(
        "Client networks allowed to reach the admin host (an IP allow-list, spec §5); every other address gets 403. Omitted or empty: no restriction. The store and API hosts are not affected.",
      ),
  })
  .describe("Network access rules of the platform.");

export const scalePlatformSpecSchema = z
  .object({
    platform: z
      .enum(["Commerce"])
      .default("Commerce")
      .describe("Platform software to deploy; the commerce platform is the only one offered."),
    plan: z
      .enum(PLATFORM_PLANS)
      .meta({
        "x-kubernetes-validations": [
          {
            rule: `${PLAN_RANK_CEL}[self] >= ${PLAN_RANK_CEL}[oldSelf]`,
            messageExpression: `'cannot change plan from ' + oldSelf + ' to ' + self + ': only upgrades to a higher tier are allowed (${PLATFORM_PLANS.join(" < ")})'`,
            reason: "FieldValueForbidden",
          },
        ],
      })
      .describe(
        "Resource plan: Standard (4 vCPU, 8 GB, 100 GB), Professional (8, 16, 250), Enterprise (16, 32, 500) or Custom (spec.resources). Can only move to a higher tier; moving to Custom needs at least the current plan's CPU, memory and storage.",
      ),
    resources: customResourcesSchema.optional(),
    stopped: z
      .boolean()
      .default(false)
      .describe("Stop the platform: app scaled to zero and database stopped; data is kept."),
    domains: z
      .object({
        platform: hostname("Host of the store frontend, e.g. shop.example.com."),
        admin: hostname("Host of the admin interface; default admin.<platform host>.").optional(),
        api: hostname("Host of the REST API; default api.<platform host>.").optional(),
      })
      .meta({
        "x-kubernetes-validations": [
          {
            rule: "(!has(self.admin) || self.admin != self.platform) && (!has(self.api) || self.api != self.platform) && (!has(self.admin) || !has(self.api) || self.admin != self.api)",
            message: "platform, admin and api hosts must differ",
          },
        ],
      })
      .describe("Host names the platform is served under."),
    ingressClassName: z
      .string()
      .max(253)
      .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/)
      .optional()
      .describe("IngressClass to use; the cluster's default class when omitted."),
    tls: z
      .object({
        issuerRef: z
          .object({
            name: objectName("Name of the cert-manager issuer."),
            kind: z
              .enum(["Issuer", "ClusterIssuer"])
              .default("ClusterIssuer")
              .describe("Issuer or ClusterIssuer."),
          })
          .optional()
          .describe("cert-manager issuer that signs the platform certificate."),
        secretName: objectName(
          "Existing kubernetes.io/tls Secret to serve instead of a cert-manager certificate.",
        ).optional(),
      })
      .meta({
        "x-kubernetes-validations": [
          {
            rule: "has(self.issuerRef) != has(self.secretName)",
            message: "exactly one of issuerRef or secretName must be set",
          },
        ],
      })
      .optional()
      .describe("TLS for all hosts; when omitted the operator's default issuer is used."),
    image: z
      .string()
      .min(1)
      .max(512)
      .regex(/^[^\s]+$/)
      .optional()
      .describe("Platform container image; default from the operator configuration."),
    store: storeSchema.optional(),
    localization: localizationSchema.optional(),
    email: emailSchema.optional(),
    paymentGateways: z
      .array(paymentGatewaySchema)
      .max(16)
      .meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] })
      .optional()
      .describe("Payment gateway setups (card, wallet, mobile money, bank transfer)."),
    shippingMethods: z
      .array(shippingMethodSchema)
      .max(32)
      .meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] })
      .optional()
      .describe("Shipping methods: carrier, zones, rate calculation, fulfillment."),
    webhooks: z
      .array(webhookSchema)
      .max(20)
      .meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] })
      .optional()
      .describe("Webhook subscriptions for platform events."),
    database: z
      .object({
        storageClassName: objectName("StorageClass of the database volume; the cluster default when omitted.")
          .optional()
          .meta({
            "x-kubernetes-validations": [
              { rule: "self == oldSelf", message: "storageClassName is immutable" },
            ],
          }),
        pvcRetention: z
          .enum(["Retain", "Delete"])
          .default("Retain")
          .describe(
            "What happens to the database volume when the platform is deleted: Retain (default) or Delete.",
          ),
      })
      .optional()
      .describe("Database settings; its size comes from the plan."),
    backup: backupSpecSchema.optional(),
    disableBackups: z
      .boolean()
      .default(false)
      .describe(
        "Opt this platform out of backups: no pgBackRest, no WAL archive, no restore to a point in time; a lost volume is lost for good. Status (condition BackupHealthy, reason Disabled) and `kubectl get splat` say so. Without it, a platform without spec.backup is backed up to the operator's default repository (daily full, hourly incremental, continuous WAL, 30 days, encrypted), when the operator has one.",
      ),
    notifications: platformNotificationsSchema.optional(),
    security: securitySchema.optional(),
  })
  .meta({
    "x-kubernetes-validations": [
      {
        rule: "self.plan != 'Custom' || has(self.resources)",
        message: "resources is required when plan is Custom",
        fieldPath: ".resources",
        reason: "FieldValueRequired",
      },
      {
        rule: "self.plan == 'Custom' || !has(self.resources)",
        message:
          "resources is only allowed with plan Custom; fixed plans take their resources from the plan table",
        fieldPath: ".resources",
        reason: "FieldValueForbidden",
      },
      {
        rule: "!(has(self.backup) && has(self.disableBackups) && self.disableBackups)",
        message: "disableBackups cannot be true while spec.backup is set: remove one of them",
        fieldPath: ".disableBackups",
        reason: "FieldValueForbidden",
      },
      ...NO_LESS_THAN_FIXED,
      SMS_PLAN_RULE,
    ],
  })
  .describe("Desired state of a platform instance.");

/** The seven deployment steps (src/controllers/scaleplatform/README.md), in order. */
export const PLATFORM_STEPS = [
  "InfrastructureProvisioned",
  "SoftwareInstalled",
  "DatabaseConfigured",
  "LoadBalancerSetUp",
  "CertificatesGenerated",
  "InitialConfigurationApplied",
  "HealthChecksPerformed",
] as const;
export type PlatformStep = (typeof PLATFORM_STEPS)[number];
export const PLATFORM_PHASES = ["Provisioning", "Running", "Updating", "Stopped", "Failed"] as const;
/** Skipped: a step that does not apply and does not block the rest (TLS without cert-manager or issuer). */
export const STEP_STATES = ["Pending", "InProgress", "Done", "Skipped", "Failed"] as const;
export const SCALING_TRIGGERS = ["CPU", "Memory", "RequestQueueLength", "ResponseTime"] as const;

const stepSchema = z
  .object({
    name: z.enum(PLATFORM_STEPS).describe("Step name."),
    state: z
      .enum(STEP_STATES)
      .describe("Pending, InProgress, Done, Skipped (not applicable, not blocking) or Failed."),
    startedAt: timestamp("When the step started.").optional(),
    finishedAt: timestamp("When the step finished.").optional(),
    message: z.string().max(1024).optional().describe("What the step is waiting on, or why it failed."),
  })
  .describe("One deployment step.");

const url = (d: string) => z.string().max(2048).optional().describe(d);

export const scalePlatformStatusSchema = z
  .object({
    observedGeneration: observedGenerationSchema.optional(),
    phase: z.enum(PLATFORM_PHASES).optional().describe("Provisioning, Running, Updating, Stopped or Failed."),
    stepSummary: z.string().max(8).optional().describe("Completed steps out of seven, e.g. 3/7."),
    steps: z
      .array(stepSchema)
      .max(7)
      .meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] })
      .optional()
      .describe("The seven deployment steps in order, with state and timestamps."),
    urls: z
      .object({
        platform: url("Store frontend URL."),
        admin: url("Admin interface URL."),
        api: url("REST API endpoint URL."),
      })
      .optional()
      .describe("Where the platform is reachable."),
    credentialsSecretName: z
      .string()
      .max(253)
      .optional()
      .describe("Secret holding the initial admin credentials and the API key (values never in status)."),
    resources: z
      .object({
        cpu: z.string().max(32).optional().describe("Total vCPU allocated by the plan."),
        memory: z.string().max(32).optional().describe("Total memory allocated by the plan."),
        storage: z.string().max(32).optional().describe("Database storage requested."),
        storageActual: z.string().max(32).optional().describe("Database volume capacity as bound."),
        appReplicas: z.int().min(0).optional().describe("App replicas currently running."),
        minReplicas: z.int().min(0).optional().describe("Lower bound of the app's autoscaling."),
        maxReplicas: z.int().min(0).optional().describe("Upper bound of the app's autoscaling."),
      })
      .optional()
      .describe("Resource allocation of the deployment summary."),
    monthlyCostEstimate: z
      .object({
        amount: z.string().max(32).describe("Estimated amount per month."),
        currency: z.string().max(3).describe("ISO 4217 currency of the amount."),
      })
      .optional()
      .describe("Monthly cost estimate from the operator's price table."),
    features: z.array(z.string().max(128)).max(32).optional().describe("Features included in the plan."),
    uptimePercent: z
      .number()
      .min(0)
      .max(100)
      .optional()
      .describe("Share of the operator's health checks that passed since uptimeSince (while not stopped)."),
    lastRestartTime: timestamp("When an app pod last (re)started.").optional(),
    uptimeSince: timestamp("Start of the uptime measurement (the first counted health check).").optional(),
    deployedTime: timestamp(
      "When the platform first reached Running (end of the deployment sequence).",
    ).optional(),
    healthCheck: z
      .object({
        status: z.enum(["Healthy", "Unhealthy", "Unknown"]).describe("Result of the latest health check."),
        lastTransitionTime: timestamp(
          "When the result last changed (checks run periodically; an unchanged result is not rewritten).",
        ).optional(),
        url: z
          .string()
          .max(2048)
          .optional()
          .describe("What the operator checked (Service or pod address and path)."),
        message: z.string().max(1024).optional().describe("Details of a failed check."),
      })
      .optional()
      .describe("The operator's own periodic HTTP check of the platform's health endpoint."),
    activeScalingTriggers: z
      .array(z.enum(SCALING_TRIGGERS))
      .max(4)
      .meta({ "x-kubernetes-list-type": "set" })
      .optional()
      .describe("Autoscaling triggers in effect; custom metrics only when the cluster serves them."),
    backup: backupStatusSchema.optional(),
    conditions: conditionsSchema("Current state: Ready plus detail conditions.").optional(),
  })
  .describe("Observed state of a platform instance.");

export const scalePlatformKind = defineKind({
  kind: "ScalePlatform",
  plural: "scaleplatforms",
  singular: "scaleplatform",
  shortNames: ["splat"],
  categories: ["cronscale"],
  scope: "Namespaced",
  description:
    "ScalePlatform is a managed commerce platform instance on a resource plan: database, app, ingress, TLS, autoscaling. The name is the instance name and is used in URLs.",
  specSchema: scalePlatformSpecSchema,
  statusSchema: scalePlatformStatusSchema,
  printerColumns: [
    { name: "Plan", type: "string", jsonPath: ".spec.plan", description: "Resource plan." },
    { name: "Status", type: "string", jsonPath: ".status.phase", description: "Lifecycle phase." },
    { name: "Step", type: "string", jsonPath: ".status.stepSummary", description: "Deployment steps done." },
    { name: "URL", type: "string", jsonPath: ".status.urls.platform", description: "Store frontend URL." },
    {
      name: "Backups",
      type: "string",
      jsonPath: '.status.conditions[?(@.type=="BackupHealthy")].reason',
      description:
        "Backup health: BackupsCurrent, NoBackupYet, Disabled (opted out), NotConfigured (no repository), or a problem.",
    },
    {
      name: "Last Backup",
      type: "date",
      jsonPath: ".status.backup.lastSuccessfulBackup.stopTime",
      description: "When the last successful backup finished.",
    },
  ],
  topLevelValidations: [
    {
      // Child names append suffixes of up to 12 characters (names.ts) and StatefulSet pod labels
      // cap at 63; 40 keeps every derived name valid. DNS label form: it becomes host prefixes.
      rule: "self.metadata.name.size() <= 40 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
      message:
        "metadata.name must be at most 40 characters of lowercase letters, digits and hyphens, starting with a letter",
      // No fieldPath: the CRD schema declares no metadata properties for it to point at.
    },
  ],
});

export type ScalePlatformSpec = z.output<typeof scalePlatformSpecSchema>;
export type ScalePlatformStatus = z.output<typeof scalePlatformStatusSchema>;
/** A ScalePlatform as read from the API server. */
export type ScalePlatform = KubeObject & { spec: ScalePlatformSpec; status?: ScalePlatformStatus };
