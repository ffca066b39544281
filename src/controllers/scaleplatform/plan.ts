import { toQuantity } from "../../api/plans.ts";
import { bytes } from "../../api/quantities.ts";
import { ANNOTATION_DATA_CLAIM, ANNOTATION_RESTORE_HOLD } from "../../api/v1alpha1/labels.ts";
import {
  platformAppName,
  platformConfigMapName,
  platformCredentialsSecretName,
  platformDatabaseName,
  platformDatabasePvcName,
  platformDatabaseSecretName,
  platformTlsName,
} from "../../api/v1alpha1/names.ts";
import {
  type ChildPlan,
  type ChildRef,
  type ChildType,
  childKey,
  type LiveChildren,
  type PlannedChild,
} from "../../runtime/children.ts";
import type { KubeObject } from "../../runtime/types.ts";
import { type BackupWorld, backupChildRefs, planBackupChildren } from "./backup/plan.ts";
import { desiredAppDeployment, desiredAppService } from "./desired/app.ts";
import { nameOf, type PlatformInputs } from "./desired/common.ts";
import { configData, desiredConfigMap } from "./desired/configmap.ts";
import { newCredentialsSecret, newDatabaseSecret, type RandomString } from "./desired/credentials.ts";
import {
  desiredDatabaseService,
  desiredDatabaseStatefulSet,
  desiredPvcExpansion,
} from "./desired/database.ts";
import { desiredMiddlewares, TRAEFIK_API_VERSION } from "./desired/edge.ts";
import { desiredHpa } from "./desired/hpa.ts";
import { desiredCertificate, desiredIngress } from "./desired/ingress.ts";
import { desiredAppPdb } from "./desired/pdb.ts";
import type { SecretResolution } from "./secrets.ts";
import type { StorageObservation } from "./status.ts";

// The children of a platform as one plan: a pure function of the platform and the world read
// once per pass (observe.ts). The runtime's executor (src/runtime/children.ts) is the only
// writer: it applies what differs and prunes the kinds below that the platform controls but
// this plan leaves out (the HPA and the PodDisruptionBudget while stopped, a Certificate no longer wanted, Middlewares of a
// class Traefik does not serve, the backup children without spec.backup).

/** Groups of a platform's children; `infrastructure` ones feed the first step's "creating …". */
export type PlatformPart = "credentials" | "infrastructure" | "storage" | "backup";

/** What one pass read of the world; everything the plan and the status are derived from. */
export interface PlatformWorld {
  now: Date;
  /** Every child the plan may name ({@link childRefs}), by kind and name. */
  live: LiveChildren;
  /** The platform's labelled objects of the pruned kinds. */
  labelled: KubeObject[];
  secrets: SecretResolution;
  /** The database volume (created by the StatefulSet, grown by the plan). */
  pvc?: KubeObject;
  /** Whether its StorageClass allows expansion; asked only when the volume is below the plan. */
  expandable?: boolean;
  pods: KubeObject[];
  /** The user's TLS Secret (spec.tls.secretName). */
  tlsSecret?: KubeObject;
  /** Whether the Ingress's class (or a default one) exists; asked only while running. */
  ingressClassExists: boolean;
  backup?: BackupWorld;
}

/** The kinds whose controlled, labelled objects the plan prunes. */
export function prunedTypes(inp: PlatformInputs): ChildType[] {
  const types: ChildType[] = [
    { apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler" },
    { apiVersion: "policy/v1", kind: "PodDisruptionBudget" },
    { apiVersion: "v1", kind: "ConfigMap" },
    // The generated credentials are always planned and the backup key is not owned: of the
    // Secrets, only the default repository's copy can be left out.
    { apiVersion: "v1", kind: "Secret" },
    { apiVersion: "v1", kind: "ServiceAccount" },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role" },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding" },
    { apiVersion: "batch/v1", kind: "CronJob" },
  ];
  // Types whose CRD is absent cannot be listed.
  if (inp.features.certManager) types.push({ apiVersion: "cert-manager.io/v1", kind: "Certificate" });
  if (inp.features.edge?.traefikMiddleware)
    types.push({ apiVersion: TRAEFIK_API_VERSION, kind: "Middleware" });
  return types;
}

/** Every child the plan may name for `inp`: what observe.ts reads by name. */
export function childRefs(inp: PlatformInputs): ChildRef[] {
  const name = nameOf(inp);
  const ref = (apiVersion: string, kind: string, n: string): ChildRef => ({ apiVersion, kind, name: n });
  const refs = [
    ref("v1", "Secret", platformDatabaseSecretName(name)),
    ref("v1", "Secret", platformCredentialsSecretName(name)),
    ref("v1", "ConfigMap", platformConfigMapName(name)),
    ref("v1", "Service", platformDatabaseName(name)),
    ref("apps/v1", "StatefulSet", platformDatabaseName(name)),
    ref("v1", "Service", platformAppName(name)),
    ref("apps/v1", "Deployment", platformAppName(name)),
    ...desiredMiddlewares(inp).map((m) => ref(m.apiVersion, m.kind, m.metadata.name ?? "")),
    ref("networking.k8s.io/v1", "Ingress", platformAppName(name)),
    ref("v1", "PersistentVolumeClaim", platformDatabasePvcName(name)),
    ...backupChildRefs(inp),
  ];
  if (desiredCertificate(inp)) refs.push(ref("cert-manager.io/v1", "Certificate", platformTlsName(name)));
  if (desiredHpa(inp)) refs.push(ref("autoscaling/v2", "HorizontalPodAutoscaler", platformAppName(name)));
  if (desiredAppPdb(inp)) refs.push(ref("policy/v1", "PodDisruptionBudget", platformAppName(name)));
  return refs;
}

/** The platform's children in write order, each with its policy, and the kinds pruned. */
export function planChildren(
  inp: PlatformInputs,
  world: PlatformWorld,
  random: RandomString,
): ChildPlan<PlatformPart> {
  const name = nameOf(inp);
  const data = configData(inp);
  const sts = world.live.get(childKey("StatefulSet", platformDatabaseName(name)));
  // While a referenced Secret is missing, the app's configuration stays as it is.
  const config = world.secrets.held ? "keep" : "apply";
  const infra = (object: KubeObject, policy: "apply" | "keep" = "apply"): PlannedChild<PlatformPart> => ({
    part: "infrastructure",
    policy,
    object,
  });
  const once = (n: string, make: () => KubeObject): PlannedChild<PlatformPart> => ({
    part: "credentials",
    policy: "createOnce",
    ref: { apiVersion: "v1", kind: "Secret", name: n },
    make,
  });
  const children: PlannedChild<PlatformPart>[] = [
    // Generated once with fresh randomness and never rewritten: the passwords the database and
    // the app hold stay valid.
    once(platformDatabaseSecretName(name), () => newDatabaseSecret(inp, random)),
    once(platformCredentialsSecretName(name), () => newCredentialsSecret(inp, random)),
    infra(desiredConfigMap(inp, data), config),
    infra(desiredDatabaseService(inp)),
    // volumeClaimTemplates are immutable: the live template's storage size is kept.
    infra(
      desiredDatabaseStatefulSet(
        inp,
        templateStorage(sts),
        sts?.metadata.annotations?.[ANNOTATION_DATA_CLAIM],
      ),
    ),
    infra(desiredAppService(inp)),
    infra(appDeployment(inp, data, world), config),
    // The Middlewares before the Ingress that references them (Traefik skips a router whose
    // middleware is missing).
    ...desiredMiddlewares(inp).map((m) => infra(m)),
    infra(desiredIngress(inp)),
  ];
  const certificate = desiredCertificate(inp);
  if (certificate) children.push(infra(certificate));
  const hpa = desiredHpa(inp);
  if (hpa) children.push(infra(hpa));
  const pdb = desiredAppPdb(inp);
  if (pdb) children.push(infra(pdb));
  if (storagePlan(inp, world).grow)
    children.push({
      part: "storage",
      policy: "patchOnly",
      object: desiredPvcExpansion(inp, platformDatabasePvcName(name)),
    });
  children.push(...planBackupChildren(inp, world, random));
  return { children, prune: prunedTypes(inp) };
}

/**
 * The app Deployment. Starting after a stop: an HPA never scales a Deployment at 0 replicas, so
 * its minimum is set once; later applies leave replicas out again and the HPA owns it. Not while
 * a restore's cutover holds the app at zero (until the hold's time at most).
 */
function appDeployment(inp: PlatformInputs, data: Record<string, string>, world: PlatformWorld): KubeObject {
  const d = desiredAppDeployment(inp, data);
  const live = world.live.get(childKey("Deployment", d.metadata.name));
  const atZero = (live?.spec as { replicas?: number } | undefined)?.replicas === 0;
  if (inp.spec.stopped || !atZero || restoreHeld(live, world.now)) return d;
  return { ...d, spec: { ...(d.spec as object), replicas: inp.budget.app.minReplicas } };
}

/** Whether a restore's cutover holds the app Deployment `live` at zero at `now` (ANNOTATION_RESTORE_HOLD). */
export function restoreHeld(live: KubeObject | undefined, now: Date): boolean {
  const hold = live?.metadata.annotations?.[ANNOTATION_RESTORE_HOLD];
  const until = Date.parse(hold?.slice(hold.lastIndexOf("@") + 1) ?? "");
  return now.getTime() < until;
}

/** The storage size in the live StatefulSet's volume claim template. */
function templateStorage(sts: KubeObject | undefined): string | undefined {
  return (
    sts?.spec as
      | { volumeClaimTemplates?: { spec?: { resources?: { requests?: { storage?: string } } } }[] }
      | undefined
  )?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage;
}

interface PvcLike {
  spec?: { storageClassName?: string; resources?: { requests?: { storage?: string } } };
  status?: { capacity?: { storage?: string } };
}

/** The database volume's size against the plan's, and whether to grow it (its class allows). */
export function storagePlan(
  inp: PlatformInputs,
  world: Pick<PlatformWorld, "pvc" | "expandable">,
): { storage: StorageObservation; grow: boolean } {
  if (!world.pvc) return { storage: { kind: "unknown" }, grow: false };
  const p = world.pvc as PvcLike;
  const wanted = toQuantity.storage(inp.budget.database.storageGiB);
  const requested = p.spec?.resources?.requests?.storage ?? "0";
  const actual = p.status?.capacity?.storage;
  if (bytes(requested) >= bytes(wanted)) {
    if (actual && bytes(actual) < bytes(requested))
      return { storage: { kind: "expanding", from: actual, to: requested }, grow: false };
    return { storage: { kind: "sized" }, grow: false };
  }
  if (!world.expandable) {
    const storageClass = p.spec?.storageClassName || "(none)";
    return {
      storage: { kind: "notExpandable", storageClass, actual: actual ?? requested, wanted },
      grow: false,
    };
  }
  return { storage: { kind: "expanding", from: actual ?? requested, to: wanted }, grow: true };
}

/** Whether the volume is below the plan's size (then its StorageClass is asked about expansion). */
export function volumeBelowPlan(inp: PlatformInputs, pvc: KubeObject | undefined): boolean {
  if (!pvc) return false;
  const requested = (pvc as PvcLike).spec?.resources?.requests?.storage ?? "0";
  return bytes(requested) < bytes(toQuantity.storage(inp.budget.database.storageGiB));
}
