import { hostname } from "node:os";
import { z } from "zod";
import { NotificationsConfigSchema } from "./notify/config.ts";

/** Accepts real booleans and the strings flags/env carry ("true", "1", "false", "0", ...). */
const boolish = z.preprocess((v) => {
  if (typeof v !== "string") return v;
  const s = v.trim().toLowerCase();
  if (["true", "1", "yes", "on", ""].includes(s)) return true;
  if (["false", "0", "no", "off"].includes(s)) return false;
  return v;
}, z.boolean());

/** A price: a decimal with at most 9 decimals. */
const DECIMAL = /^\d+(\.\d{1,9})?$/;

const seconds = (def: number, what: string) => z.coerce.number().positive().default(def).describe(what);

/** Leader election settings. */
const LeaderElectionSchema = z.object({
  enabled: boolish.default(false).describe("Elect one active replica through a coordination.k8s.io/v1 Lease"),
  namespace: z
    .string()
    .default("")
    .describe("Namespace of the Lease; empty means the pod's namespace (POD_NAMESPACE) or 'default'"),
  name: z.string().default("cronscale-leader").describe("Name of the Lease"),
  identity: z.string().default("").describe("This replica's identity; empty means POD_NAME or hostname_pid"),
  leaseDurationSeconds: seconds(15, "How long a lease stays valid without renewal"),
  renewDeadlineSeconds: seconds(10, "How long the leader keeps retrying renewal before giving up"),
  retryPeriodSeconds: seconds(2, "Interval between acquire/renew attempts"),
});

/** Per-language task runtime images (ScheduledTask owners extend and consume this). */
const ImagesSchema = z
  .object({
    bash: z.string().default("").describe("Image that runs bash scripts"),
    python: z.string().default("").describe("Image that runs Python scripts"),
    go: z.string().default("").describe("Image that runs Go programs"),
    bun: z.string().default("").describe("Image that runs TypeScript/JavaScript with Bun"),
  })
  .catchall(z.string());

/**
 * Options of the kind controllers. Owners of each kind add their fields here (with defaults) so
 * they are configurable by flag and env without further wiring.
 */
const ControllersSchema = z.object({
  scheduledTask: z
    .object({
      images: ImagesSchema.prefault({}).describe("Task runtime image per language"),
      successfulJobsHistoryLimit: z.coerce
        .number()
        .int()
        .min(0)
        .default(3)
        .describe("Finished Jobs kept per task"),
      failedJobsHistoryLimit: z.coerce.number().int().min(0).default(1).describe("Failed Jobs kept per task"),
      imagePullPolicy: z
        .enum(["IfNotPresent", "Always", "Never"])
        .default("IfNotPresent")
        .describe("Pull policy of task pods"),
      startupAllowanceSeconds: z.coerce
        .number()
        .int()
        .min(10)
        .default(120)
        .describe("Seconds a run may take to start (pull, compile) on top of its timeout"),
      jobTtlSecondsAfterFinished: z.coerce
        .number()
        .int()
        .min(60)
        .default(3600)
        .describe("Seconds a finished Job and its pod linger before Kubernetes deletes them"),
    })
    .catchall(z.unknown())
    .prefault({}),
  taskExecution: z
    .object({
      retentionDays: z.coerce.number().positive().default(7).describe("Days TaskExecution records are kept"),
      maxPerTask: z.coerce
        .number()
        .int()
        .min(10)
        .default(100)
        .describe("Most TaskExecution records kept per task (oldest deleted first)"),
      outputMaxChars: z.coerce
        .number()
        .int()
        .min(1024)
        .max(65536)
        .default(65536)
        .describe("Most characters of console output kept per execution (the CRD allows at most 65536)"),
      billing: z
        .object({
          currency: z
            .string()
            .regex(/^[A-Z]{3}$/)
            .default("USD")
            .describe("ISO 4217 currency of the prices"),
          pricePerSecond: z
            .object({
              micro: z
                .string()
                .regex(DECIMAL)
                .default("0.000004")
                .describe("Price of a billed second on the Micro plan"),
              small: z
                .string()
                .regex(DECIMAL)
                .default("0.000008")
                .describe("Price of a billed second on the Small plan"),
              medium: z
                .string()
                .regex(DECIMAL)
                .default("0.000016")
                .describe("Price of a billed second on the Medium plan"),
              large: z
                .string()
                .regex(DECIMAL)
                .default("0.000032")
                .describe("Price of a billed second on the Large plan"),
            })
            .prefault({})
            .describe("Price of one billed second per task plan (decimal, at most 9 decimals)"),
        })
        .prefault({})
        .describe("Billing of task runs: billed seconds × the plan's price"),
    })
    .catchall(z.unknown())
    .prefault({}),
  scalePlatform: z.object({}).catchall(z.unknown()).prefault({}),
});

/** The execution archive (PostgreSQL): optional; without a DSN, TaskExecutions are the whole history. */
const ArchiveSchema = z.object({
  dsn: z
    .string()
    .default("")
    .describe(
      "PostgreSQL connection string of the execution archive; empty: no archive (chart: from a Secret)",
    ),
  secret: z
    .object({
      name: z
        .string()
        .default("")
        .describe(
          "Secret in the operator's namespace with the archive's DSN (key dsn, or password for the PostgreSQL at host); made at start with a generated password when missing, never changed. Unused when dsn is set",
        ),
      host: z
        .string()
        .default("")
        .describe("Host of the chart's PostgreSQL (its Service), for the DSN of that Secret"),
    })
    .prefault({}),
  window: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(10)
    .describe("TaskExecutions kept per task when there is an archive (the recent window)"),
  outputMaxChars: z.coerce
    .number()
    .int()
    .min(65536)
    .max(16_777_216)
    .default(1_048_576)
    .describe("Most characters of console output archived per run (stored gzip-compressed)"),
  pruneIntervalSeconds: seconds(300, "How often runs older than the retention are deleted from the archive"),
  httpHost: z.string().default("0.0.0.0").describe("Address of the history endpoint (with an archive)"),
  httpPort: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(8081)
    .describe(
      "Port of the history endpoint (history, logs, usage; callers' tokens authorized by the API server)",
    ),
  tls: z
    .object({
      certFile: z
        .string()
        .default("")
        .describe(
          "PEM certificate (chain) of the history endpoint; with keyFile it serves HTTPS, else plain HTTP",
        ),
      keyFile: z.string().default("").describe("PEM private key of that certificate"),
      secret: z
        .object({
          name: z
            .string()
            .default("")
            .describe(
              "kubernetes.io/tls Secret in the operator's namespace served when certFile is empty; made at start when missing (a CA in ca.crt and a certificate for dnsNames, 127.0.0.1 and ::1), never changed",
            ),
          dnsNames: z
            .string()
            .default("")
            .transform((s) =>
              s
                .split(",")
                .map((n) => n.trim())
                .filter(Boolean),
            )
            .describe("Comma-separated DNS names of the certificate that Secret is made with"),
        })
        .prefault({}),
      caFile: z
        .string()
        .default("")
        .describe("PEM CA of that certificate: the caBundle of the APIService (archive.apiService)"),
    })
    .prefault({})
    .describe(
      "Serving certificate of the history endpoint (files re-read when they change, e.g. renewed by cert-manager)",
    ),
  apiService: z
    .string()
    .default("")
    .describe(
      "APIService that serves the history endpoint through the API server (v1alpha1.history.cronscale.io); the operator keeps its caBundle equal to the endpoint's CA (tls.caFile, or ca.crt of tls.secret). Empty: none",
    ),
});

/** The operator's whole configuration: one zod object with defaults. */
export const ConfigSchema = z.object({
  kubeconfig: z
    .string()
    .default("")
    .describe("Path of a kubeconfig; empty means KUBECONFIG, in-cluster, or ~/.kube/config"),
  namespace: z.string().default("").describe("Namespace to watch; empty watches all namespaces"),
  httpHost: z.string().default("0.0.0.0").describe("Address of the /healthz /readyz /metrics server"),
  httpPort: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(8080)
    .describe("Port of the probe and metrics server"),
  logLevel: z
    .enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"])
    .default("info")
    .describe("Log level"),
  workers: z.coerce.number().int().min(1).default(2).describe("Concurrent reconciles per controller"),
  shutdownTimeoutSeconds: seconds(30, "Longest wait for in-flight reconciles on SIGTERM"),
  kubeRequestTimeoutSeconds: seconds(
    30,
    "Longest time one Kubernetes API request (not a watch) may take before it fails and is retried",
  ),
  leaderElection: LeaderElectionSchema.prefault({}),
  controllers: ControllersSchema.prefault({}),
  notifications: NotificationsConfigSchema,
  archive: ArchiveSchema.prefault({}),
});

/** The parsed configuration. */
export type Config = z.infer<typeof ConfigSchema>;

/** Flag aliases kept for familiarity with controller-runtime based operators. */
const FLAG_ALIASES: Record<string, string> = {
  "leader-elect": "leaderElection.enabled",
  "leader-election-namespace": "leaderElection.namespace",
  "leader-election-id": "leaderElection.name",
  "metrics-port": "httpPort",
  "metrics-bind-address": "httpHost",
  "log-level": "logLevel",
  "max-concurrent-reconciles": "workers",
};

/** kebab-case or snake_case to camelCase ("lease-duration" → "leaseDuration"). */
const camel = (s: string) => s.replace(/[-_]([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let cur = target;
  for (const p of path.slice(0, -1)) {
    const next = cur[p];
    if (typeof next !== "object" || next === null) cur[p] = {};
    cur = cur[p] as Record<string, unknown>;
  }
  cur[path[path.length - 1]!] = value;
}

/**
 * Collects raw settings from env and flags (flags win). Env: `CRONSCALE_<PATH>` with `__`
 * between levels, e.g. `CRONSCALE_LEADER_ELECTION__ENABLED=true`,
 * `CRONSCALE_CONTROLLERS__SCHEDULED_TASK__IMAGES__PYTHON=ref`. Flags: `--<path>=value` with dots
 * between levels and kebab-case names, e.g. `--leader-election.enabled`,
 * `--controllers.scheduled-task.images.python=ref`, plus the aliases above.
 */
export function rawSettings(argv: readonly string[], env: NodeJS.ProcessEnv): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(env)) {
    if (!k.startsWith("CRONSCALE_") || v === undefined) continue;
    setPath(raw, k.slice("CRONSCALE_".length).toLowerCase().split("__").map(camel), v);
  }
  if (env.KUBECONFIG && raw.kubeconfig === undefined) raw.kubeconfig = env.KUBECONFIG.split(":")[0];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("--")) continue;
    const eq = arg.indexOf("=");
    let name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    let value: string | undefined = eq < 0 ? undefined : arg.slice(eq + 1);
    const nextArg = argv[i + 1];
    if (value === undefined) {
      // "--flag value" unless the next token is another flag; a bare flag means true.
      if (nextArg !== undefined && !nextArg.startsWith("--")) {
        value = nextArg;
        i++;
      } else value = "true";
    }
    name = FLAG_ALIASES[name] ?? name;
    setPath(raw, name.split(".").map(camel), value);
  }
  return raw;
}

/** Parses configuration from flags and env; throws a readable error on invalid input. */
export function loadConfig(
  argv: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): Config {
  const parsed = ConfigSchema.safeParse(rawSettings(argv, env));
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new Error(`invalid configuration: ${issues}`);
  }
  const cfg = parsed.data;
  // Fill identity and lease namespace from the pod's downward API when not set explicitly.
  cfg.leaderElection.identity ||= env.POD_NAME || `${hostname()}_${process.pid}`;
  cfg.leaderElection.namespace ||= env.POD_NAMESPACE || cfg.namespace || "default";
  return cfg;
}
