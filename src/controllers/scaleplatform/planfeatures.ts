import { INCLUDED_FEATURES, PLAN_TABLE } from "../../api/plans.ts";
import {
  BackupReason,
  CONDITION_AUTOSCALING,
  CONDITION_BACKUP_HEALTHY,
  CONDITION_EDGE_PROTECTED,
  CONDITION_HEALTHY,
  CONDITION_TLS_READY,
  PlatformReason,
} from "../../api/v1alpha1/conditions.ts";
import type { ScalePlatformStatus } from "../../api/v1alpha1/scaleplatform.ts";
import type { Condition } from "../../runtime/conditions.ts";
import type { PlatformInputs } from "./desired/common.ts";

// status.features: what the plan promises, listed only while it is in force for this platform,
// each mechanism backed by its condition (a promise the cluster does not keep is not listed;
// the condition says why). Pure.

type Included = (typeof INCLUDED_FEATURES)[number];

/** The condition that shows each included feature in force; undefined: a promise of service, always listed. */
const IN_FORCE: Record<Included, ((c: (type: string) => Condition | undefined) => boolean) | undefined> = {
  // cert-manager issued the platform's certificate (a Secret the user brings is not automatic).
  "Automatic SSL certificates": (c) => c(CONDITION_TLS_READY)?.reason === PlatformReason.CertificateReady,
  // Backups run and are current (not while stopped: nothing runs then).
  "Daily backups": (c) =>
    c(CONDITION_BACKUP_HEALTHY)?.status === "True" &&
    c(CONDITION_BACKUP_HEALTHY)?.reason !== BackupReason.PlatformStopped,
  "DDoS protection": (c) => c(CONDITION_EDGE_PROTECTED)?.status === "True",
  // The operator's health checks run (Healthy is True or False, not pending and not stopped).
  "24/7 monitoring": (c) => {
    const h = c(CONDITION_HEALTHY);
    return h !== undefined && h.reason !== PlatformReason.HealthCheckPending;
  },
  "Automatic scaling": (c) => c(CONDITION_AUTOSCALING)?.status === "True",
  "Email support": undefined,
};

/** The plan's features in force, given the platform's conditions. */
export function planFeatures(inp: PlatformInputs, conditions: readonly Condition[]): string[] {
  const c = (type: string) => conditions.find((x) => x.type === type);
  const included = INCLUDED_FEATURES.filter((f) => IN_FORCE[f]?.(c) ?? true);
  const plan = inp.spec.plan;
  if (plan === "Custom") return [...included, "Dedicated resources by agreement"];
  const f = PLAN_TABLE[plan];
  const products =
    f.maxProducts === undefined
      ? "Unlimited products"
      : `Up to ${f.maxProducts.toLocaleString("en-US")} products`;
  return [...included, products, `${f.concurrentUsers} concurrent users`];
}

/** The status with status.features derived from its final conditions. */
export function withFeatures(inp: PlatformInputs, status: ScalePlatformStatus): ScalePlatformStatus {
  return { ...status, features: planFeatures(inp, (status.conditions as Condition[] | undefined) ?? []) };
}
