import { type PlanBudget, planBudget, requestsFrom, toQuantity } from "../../../api/plans.ts";
import { parseCustom } from "../../../api/quantities.ts";
import { API_VERSION } from "../../../api/v1alpha1/kind.ts";
import {
  LABEL_COMPONENT,
  LABEL_INSTANCE,
  LABEL_MANAGED_BY,
  LABEL_NAME,
  LABEL_PART_OF,
  LABEL_PLATFORM,
  MANAGED_BY,
} from "../../../api/v1alpha1/labels.ts";
import type { ScalePlatform, ScalePlatformSpec } from "../../../api/v1alpha1/scaleplatform.ts";
import type { OwnerReference } from "../../../runtime/types.ts";
import {
  type BackupSource,
  backupSource as backupSourceOf,
  type DefaultBackupCredentials,
  withEffectiveBackup,
} from "../backup/default.ts";
import type { PlatformControllerConfig } from "../config.ts";

// What every builder needs, computed once per reconcile. Pure.

/** What the cluster offers, as detected by the reconciler (cached there). */
export interface ClusterFeatures {
  /** cert-manager's Certificate CRD is established. */
  certManager: boolean;
  /** An APIService of custom.metrics.k8s.io is Available. */
  customMetrics: boolean;
  /**
   * Per configured custom metric name: whether that API serves values for this platform's app
   * pods (asked only when customMetrics; absent means none).
   */
  customMetricValues?: Readonly<Record<string, boolean>>;
  /** The Ingress classes and Traefik's Middleware CRD, for edge protection (see desired/edge.ts). */
  edge?: EdgeFeatures;
}

/** What edge protection needs to know of the cluster's Ingress controllers. */
export interface EdgeFeatures {
  /** IngressClass name → its spec.controller. */
  classes: Readonly<Record<string, string>>;
  /** The IngressClass marked default, if any. */
  defaultClass?: string;
  /** Traefik's Middleware CRD (middlewares.traefik.io) is established. */
  traefikMiddleware: boolean;
}

/** Inputs of every builder. */
export interface PlatformInputs {
  platform: ScalePlatform;
  spec: ScalePlatformSpec;
  config: PlatformControllerConfig;
  features: ClusterFeatures;
  budget: PlanBudget;
  hosts: { platform: string; admin: string; api: string };
  /** Revision of the user Secrets the app reads (see ANNOTATION_SECRETS_REVISION), once resolved. */
  secretsRevision?: string;
  /** Where the backups in force (`spec.backup`, resolved) go. */
  backupSource: BackupSource;
  /** The default repository's key pair, when the platform's backups go there. */
  defaultBackupCredentials?: DefaultBackupCredentials;
}

type Component = "app" | "database";

/**
 * Builds the inputs of the builders from a platform, its parsed spec and the detected features.
 * `spec.backup` of the inputs is the backup in force: the user's, or the operator's default
 * repository (whose key pair `creds` is) unless the platform opted out.
 */
export function platformInputs(
  platform: ScalePlatform,
  parsed: ScalePlatformSpec,
  config: PlatformControllerConfig,
  features: ClusterFeatures,
  creds?: DefaultBackupCredentials,
): PlatformInputs {
  const spec = withEffectiveBackup(parsed, config, platform.metadata.name ?? "", creds);
  const backupSource = backupSourceOf(parsed, creds);
  return {
    platform,
    spec,
    config,
    features,
    budget: planBudget(spec.plan, parseCustom(spec)),
    hosts: platformHosts(spec.domains),
    backupSource,
    ...(backupSource === "default" ? { defaultBackupCredentials: creds } : {}),
  };
}

/** The three hosts a platform serves (admin and api default to subdomains of the platform host). */
export function platformHosts(domains: ScalePlatformSpec["domains"]): PlatformInputs["hosts"] {
  const p = domains.platform;
  return { platform: p, admin: domains.admin ?? `admin.${p}`, api: domains.api ?? `api.${p}` };
}

/** Name of the platform (the instance name). */
export function nameOf(inp: PlatformInputs): string {
  return inp.platform.metadata.name ?? "";
}

/** Labels of every child; the selector subset is selectorLabels(). */
export function childLabels(inp: PlatformInputs, component?: Component): Record<string, string> {
  return {
    [LABEL_MANAGED_BY]: MANAGED_BY,
    [LABEL_PART_OF]: "cronscale",
    [LABEL_INSTANCE]: nameOf(inp),
    [LABEL_PLATFORM]: nameOf(inp),
    ...(component
      ? { [LABEL_COMPONENT]: component, [LABEL_NAME]: component === "app" ? "commerce" : "postgres" }
      : {}),
  };
}

/** The fixed selector of a component's pods (never changes: selectors are immutable). */
export function selectorLabels(inp: PlatformInputs, component: Component): Record<string, string> {
  return { [LABEL_PLATFORM]: nameOf(inp), [LABEL_COMPONENT]: component };
}

/** Controller ownerReference to the platform: the garbage collector deletes children with it. */
export function ownerRef(inp: PlatformInputs): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: "ScalePlatform",
    name: nameOf(inp),
    uid: inp.platform.metadata.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** metadata of a child. */
export function childMeta(inp: PlatformInputs, name: string, component?: Component) {
  return {
    name,
    namespace: inp.platform.metadata.namespace,
    labels: childLabels(inp, component),
    ownerReferences: [ownerRef(inp)],
  };
}

/** Container resources: limits are the plan's share, requests the configured fraction of them. */
export function containerResources(limits: { cpuMillis: number; memoryMiB: number }, fraction: number) {
  const req = requestsFrom(limits, fraction);
  return {
    limits: { cpu: toQuantity.cpu(limits.cpuMillis), memory: toQuantity.memory(limits.memoryMiB) },
    requests: { cpu: toQuantity.cpu(req.cpuMillis), memory: toQuantity.memory(req.memoryMiB) },
  };
}

/** Security context of a container under Pod Security "restricted". */
export const RESTRICTED_CONTAINER = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ["ALL"] },
  readOnlyRootFilesystem: true,
};
