import { createHash } from "node:crypto";
import {
  ANNOTATION_CONFIG_HASH,
  ANNOTATION_PLATFORM_PLAN,
  ANNOTATION_SECRETS_REVISION,
} from "../../../api/v1alpha1/labels.ts";
import {
  platformAppName,
  platformConfigMapName,
  platformCredentialsSecretName,
  platformDatabaseName,
  platformDatabaseSecretName,
} from "../../../api/v1alpha1/names.ts";
import type { KubeObject } from "../../../runtime/types.ts";
import {
  childLabels,
  childMeta,
  containerResources,
  nameOf,
  type PlatformInputs,
  RESTRICTED_CONTAINER,
  selectorLabels,
} from "./common.ts";
import { CREDENTIAL_KEYS, DB_KEYS } from "./credentials.ts";
import { DB_PORT } from "./database.ts";
import { secretFromUses, secretRefUses } from "./secretrefs.ts";

// The platform app: a Deployment scaled by its HPA and the ClusterIP Service in front of it. Pure.

/** Port of the app Service (the Ingress backend). */
export const APP_SERVICE_PORT = 80;

/** Hash of the configuration data, put on the pod template so a config change rolls the pods. */
export function configHash(data: Record<string, string>): string {
  const h = createHash("sha256");
  for (const k of Object.keys(data).sort()) h.update(`${k}\0${data[k]}\0`);
  return h.digest("hex").slice(0, 16);
}

/** The config hash on a live Deployment's pod template (what its pods run with). */
export function liveConfigHash(dep: KubeObject | undefined): string | undefined {
  const spec = dep?.spec as
    | { template?: { metadata?: { annotations?: Record<string, string> } } }
    | undefined;
  return spec?.template?.metadata?.annotations?.[ANNOTATION_CONFIG_HASH];
}

/** The app container image: spec.image, else the operator's default. */
export function appImage(inp: PlatformInputs): string {
  return inp.spec.image ?? inp.config.images.platform;
}

/**
 * The app Deployment. While running, `replicas` is left out entirely so the HPA owns it (a field
 * this manager does not apply is never reset by the operator). While stopped the HPA is deleted
 * and replicas is 0.
 */
export function desiredAppDeployment(inp: PlatformInputs, configData: Record<string, string>): KubeObject {
  const name = platformAppName(nameOf(inp));
  const dbSecret = platformDatabaseSecretName(nameOf(inp));
  const creds = platformCredentialsSecretName(nameOf(inp));
  const ns = inp.platform.metadata.namespace ?? "";
  const port = inp.config.appPort;
  const fromSecret = (envName: string, secret: string, key: string) => ({
    name: envName,
    valueFrom: { secretKeyRef: { name: secret, key } },
  });
  const probe = (path: string) => ({ httpGet: { path, port: "http" } });
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: childMeta(inp, name, "app"),
    spec: {
      ...(inp.spec.stopped ? { replicas: 0 } : {}),
      selector: { matchLabels: selectorLabels(inp, "app") },
      // One new pod at a time and none taken away before it is ready: an upgrade keeps serving.
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      revisionHistoryLimit: 3,
      progressDeadlineSeconds: 600,
      template: {
        metadata: {
          labels: childLabels(inp, "app"),
          annotations: {
            // Where a Prometheus-style scraper (the source of the custom metrics API the HPA
            // asks) finds the app's metrics: pod address only, never routed by the Ingress.
            "prometheus.io/scrape": "true",
            "prometheus.io/port": String(port),
            "prometheus.io/path": inp.config.metricsPath,
            [ANNOTATION_PLATFORM_PLAN]: inp.spec.plan,
            [ANNOTATION_CONFIG_HASH]: configHash(configData),
            ...(inp.secretsRevision ? { [ANNOTATION_SECRETS_REVISION]: inp.secretsRevision } : {}),
          },
        },
        spec: {
          securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
          automountServiceAccountToken: false,
          // 30 s to finish in-flight requests after SIGTERM, on top of the drain sleep.
          terminationGracePeriodSeconds: 30 + inp.config.drainSeconds,
          containers: [
            {
              name: "platform",
              image: appImage(inp),
              imagePullPolicy: inp.config.imagePullPolicy,
              ports: [{ name: "http", containerPort: port, protocol: "TCP" }],
              env: [
                { name: "PORT", value: String(port) },
                fromSecret("DB_USER", dbSecret, DB_KEYS.user),
                fromSecret("DB_PASSWORD", dbSecret, DB_KEYS.password),
                fromSecret("DB_NAME", dbSecret, DB_KEYS.database),
                // $(VAR) is expanded by the kubelet: the password never appears in the spec.
                {
                  name: "DATABASE_URL",
                  value: `postgres://$(DB_USER):$(DB_PASSWORD)@${platformDatabaseName(nameOf(inp))}.${ns}.svc:${DB_PORT}/$(DB_NAME)?sslmode=disable`,
                },
                fromSecret("ADMIN_USERNAME", creds, CREDENTIAL_KEYS.adminUser),
                fromSecret("ADMIN_PASSWORD", creds, CREDENTIAL_KEYS.adminPassword),
                fromSecret("API_KEY", creds, CREDENTIAL_KEYS.apiKey),
                // The user's Secrets (SMTP password, webhook signing keys): the reconciler checks
                // they exist before applying this, since a missing one stops the container.
                ...secretRefUses(inp).map((r) => fromSecret(r.env, r.name, r.key)),
              ],
              envFrom: [
                { configMapRef: { name: platformConfigMapName(nameOf(inp)) } },
                // Payment gateway credentials: every key of the user's Secret, prefixed.
                ...secretFromUses(inp).map((r) => ({ prefix: r.prefix, secretRef: { name: r.name } })),
              ],
              resources: containerResources(inp.budget.app, inp.config.requestFraction),
              // The service listens once its database answers and its migrations ran, which on
              // a first start (initdb, several replicas at once) can take minutes: liveness
              // counts only after the process has served once, so a slow start is not killed.
              startupProbe: {
                ...probe(inp.config.livenessPath),
                periodSeconds: 5,
                timeoutSeconds: 3,
                failureThreshold: 120,
              },
              readinessProbe: { ...probe(inp.config.healthPath), periodSeconds: 5, timeoutSeconds: 3 },
              livenessProbe: {
                ...probe(inp.config.livenessPath),
                periodSeconds: 10,
                timeoutSeconds: 3,
                // A minute of failures before a restart: a database hiccup must not kill the app.
                failureThreshold: 6,
              },
              // An old pod keeps serving for a few seconds after it is told to stop, while the
              // endpoint removal reaches kube-proxy and the Ingress controller; it gets SIGTERM
              // only then, so a rolling upgrade drops no requests (the kubelet's own sleep: the
              // image needs no shell).
              ...(inp.config.drainSeconds > 0
                ? { lifecycle: { preStop: { sleep: { seconds: inp.config.drainSeconds } } } }
                : {}),
              securityContext: RESTRICTED_CONTAINER,
              // The service writes why it refuses to start (e.g. an invalid setting) as its last
              // log line; the kubelet keeps it as the termination message the status reports.
              terminationMessagePolicy: "FallbackToLogsOnError",
              volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
            },
          ],
          volumes: [{ name: "tmp", emptyDir: {} }],
        },
      },
    },
  };
}

/** ClusterIP Service of the app (port 80 → the container's http port). */
export function desiredAppService(inp: PlatformInputs): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: childMeta(inp, platformAppName(nameOf(inp)), "app"),
    spec: {
      type: "ClusterIP",
      selector: selectorLabels(inp, "app"),
      ports: [{ name: "http", port: APP_SERVICE_PORT, targetPort: "http", protocol: "TCP" }],
    },
  };
}
