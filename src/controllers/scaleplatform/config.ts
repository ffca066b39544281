import { z } from "zod";
import { DEFAULT_REQUEST_FRACTION } from "../../api/plans.ts";
import { PlatformPricesSchema } from "../../api/platform-prices.ts";

// Operator settings of the ScalePlatform controller. They arrive through the operator config's
// `controllers.scalePlatform` section (src/config.ts keeps it open), so every field here is
// settable by flag or env, e.g. CRONSCALE_CONTROLLERS__SCALE_PLATFORM__IMAGES__PLATFORM=ref or
// --controllers.scale-platform.health-check.target=pod.

const int = (def: number, min: number, what: string) =>
  z.coerce.number().int().min(min).default(def).describe(what);

/** The `controllers.scalePlatform` section of the operator config. */
export const PlatformSettingsSchema = z.strictObject({
  images: z
    .strictObject({
      platform: z
        .string()
        .default("ghcr.io/cronscale/commerce:latest")
        .describe("Default platform (app) image when spec.image is empty"),
      database: z
        .string()
        .default("ghcr.io/cronscale/postgres:15")
        .describe(
          "PostgreSQL image of the database: the project's postgres image (PostgreSQL 15, pgBackRest, password set from the Secret at every start)",
        ),
      backupRunner: z
        .string()
        .default("docker.io/library/node:24-slim")
        .describe(
          "Image of the backup Jobs: any image with Node 22 or newer (they run a script of the operator's)",
        ),
    })
    .prefault({}),
  imagePullPolicy: z
    .enum(["IfNotPresent", "Always", "Never"])
    .default("IfNotPresent")
    .describe("Pull policy"),
  requestFraction: z.coerce
    .number()
    .gt(0)
    .max(1)
    .default(DEFAULT_REQUEST_FRACTION)
    .describe(
      "Requests as a fraction of the plan's limits. 0.1 lets Standard and Professional schedule on a 2-core dev node; production should use 1 (Guaranteed QoS: the plan is really reserved)",
    ),
  appPort: int(8080, 1, "Port the platform container listens on"),
  healthPath: z
    .string()
    .default("/readyz")
    .describe(
      "Readiness endpoint of the app (its readiness probe and the operator's health check): 2xx only when the app and its database answer",
    ),
  livenessPath: z
    .string()
    .default("/healthz")
    .describe("Path of the app's liveness probe (the process serves)"),
  metricsPath: z
    .string()
    .default("/metrics")
    .describe(
      "Prometheus endpoint of the app pods (on appPort, pod address only), announced in the pod's prometheus.io annotations for the scraper behind the custom metrics API",
    ),
  webhookAllowedCidrs: z
    .preprocess(
      (v) =>
        typeof v === "string"
          ? v
              .split(",")
              .map((x) => x.trim())
              .filter(Boolean)
          : v,
      z.array(z.union([z.cidrv4(), z.cidrv6()])),
    )
    .default([])
    .describe(
      "Comma-separated CIDRs that webhook destinations may be in although private, loopback or link-local (COMMERCE_WEBHOOK_ALLOWED_CIDRS of every platform); empty: none",
    ),
  drainSeconds: int(
    5,
    0,
    "Seconds an app pod keeps serving after it is told to stop (preStop sleep), so a rollout drops no requests while the endpoint removal propagates",
  ),
  healthCheck: z
    .strictObject({
      target: z
        .enum(["service", "pod"])
        .default("service")
        .describe(
          "What the operator's own health check dials: the app Service's cluster DNS name (in-cluster operator) or a ready app pod's IP (an operator outside the cluster network with a route to the pod CIDR, e.g. the local dev cluster)",
        ),
      intervalSeconds: int(15, 1, "Seconds between health checks of a platform"),
      timeoutMs: int(3000, 100, "Timeout of one health check"),
      clusterDomain: z.string().default("cluster.local").describe("Cluster DNS domain for target=service"),
    })
    .prefault({}),
  defaultIssuer: z
    .strictObject({
      name: z.string().default("").describe("cert-manager issuer used when spec.tls is omitted; empty: none"),
      kind: z.enum(["Issuer", "ClusterIssuer"]).default("ClusterIssuer").describe("Its kind"),
    })
    .prefault({}),
  requireIngressAddress: z
    .preprocess((v) => (typeof v === "string" ? v === "true" || v === "1" : v), z.boolean())
    .default(true)
    .describe(
      "Step 'load balancer set up' needs the Ingress to report an address; false accepts an Ingress whose IngressClass exists (for controllers that publish no status)",
    ),
  featureRecheckSeconds: int(60, 5, "How long detection of cert-manager and custom metrics is cached"),
  pvcRetention: z
    .enum(["Retain", "Delete"])
    .default("Retain")
    .describe("Database volume on platform deletion when spec.database.pvcRetention is not set"),
  customMetrics: z
    .strictObject({
      queueLength: z
        .string()
        .default("http_request_queue_length")
        .describe("Pods metric: queued requests per pod"),
      queueLengthTarget: z.string().default("10").describe("Average queued requests per pod to scale at"),
      responseTime: z.string().default("http_response_time_ms").describe("Pods metric: response time in ms"),
      responseTimeTarget: z.string().default("500").describe("Average response time (ms) to scale at"),
    })
    .prefault({}),
  prices: PlatformPricesSchema.prefault({}),
  defaultBackup: z
    .strictObject({
      s3: z
        .strictObject({
          endpoint: z
            .string()
            .default("")
            .describe(
              "Host[:port] of the S3 endpoint of the default backup repository (HTTPS); empty: no default repository, so platforms without spec.backup have no backups",
            ),
          bucket: z
            .string()
            .default("cronscale-backups")
            .describe("Bucket of the default repository; it must exist"),
          region: z.string().default("us-east-1").describe("Region of the bucket"),
          pathPrefix: z
            .string()
            .default("/cronscale")
            .describe(
              "Path in the bucket; each platform's repository is <pathPrefix>/<namespace>/<platform>",
            ),
          credentialsSecret: z
            .strictObject({
              namespace: z
                .string()
                .default("")
                .describe("Namespace of the Secret; empty means the operator's own (POD_NAMESPACE)"),
              name: z
                .string()
                .default("")
                .describe(
                  "Secret holding the S3 key pair; the operator copies it into each platform's namespace (<platform>-backup-s3) for its database and backup Jobs",
                ),
              accessKeyIdKey: z.string().default("accessKeyId").describe("Key of the access key id"),
              secretAccessKeyKey: z
                .string()
                .default("secretAccessKey")
                .describe("Key of the secret access key"),
            })
            .prefault({}),
          caConfigMapName: z
            .string()
            .default("")
            .describe(
              "ConfigMap present in every platform's namespace with the CA bundle of the endpoint (e.g. kube-root-ca.crt for a certificate of the cluster's CA); empty: a public CA",
            ),
          caKey: z.string().default("ca.crt").describe("Key of the PEM bundle in that ConfigMap"),
        })
        .prefault({}),
    })
    .prefault({})
    .describe(
      "The default backup repository: platforms without spec.backup (and without spec.disableBackups) are backed up there with the default schedules (daily full, hourly incremental, continuous WAL, 30 days), encrypted",
    ),
});

/** Settings of the ScalePlatform controller. */
export type PlatformControllerConfig = z.output<typeof PlatformSettingsSchema>;

/** Defaults (production: public images, in-cluster Service health checks). */
export const DEFAULT_PLATFORM_CONFIG: PlatformControllerConfig = PlatformSettingsSchema.parse({});

/** Parses the operator config's `controllers.scalePlatform` section (throws a readable error). */
export function platformControllerConfigFrom(raw: unknown): PlatformControllerConfig {
  const r = PlatformSettingsSchema.safeParse(raw ?? {});
  if (!r.success) {
    const issues = r.error.issues.map((i) => `controllers.scalePlatform.${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid configuration: ${issues.join("; ")}`);
  }
  return r.data;
}
