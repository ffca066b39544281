import { toQuantity } from "../../api/plans.ts";
import { monthlyPrice, type PlatformPrices } from "../../api/platform-prices.ts";
import {
  CONDITION_AUTOSCALING,
  CONDITION_CONFIGURATION_READY,
  CONDITION_EDGE_PROTECTED,
  CONDITION_HEALTHY,
  CONDITION_PROGRESSING,
  CONDITION_READY,
  CONDITION_STORAGE_SIZED,
  CONDITION_TLS_READY,
  PlatformReason,
} from "../../api/v1alpha1/conditions.ts";
import { platformCredentialsSecretName } from "../../api/v1alpha1/names.ts";
import type { ScalePlatformStatus } from "../../api/v1alpha1/scaleplatform.ts";
import { type Condition, type ConditionInput, formatTime, setCondition } from "../../runtime/conditions.ts";
import type { KubeObject } from "../../runtime/types.ts";
import type { PlatformInputs } from "./desired/common.ts";
import { platformUrls } from "./desired/configmap.ts";
import { edgeCondition } from "./desired/edge.ts";
import { activeTriggers, customMetricUsable, customTriggers } from "./desired/hpa.ts";
import type { HealthState } from "./health.ts";
import { uptimePercent } from "./health.ts";
import { allFinished, type Step, stepSummary, type TlsObservation } from "./progress.ts";
import { describeProblems, type SecretProblem } from "./secrets.ts";

// The platform's status, computed from the steps, the live objects and the health state. Pure.

/** Storage expansion outcome observed by the reconciler. */
export type StorageObservation =
  | { kind: "sized" }
  | { kind: "expanding"; from: string; to: string }
  | { kind: "notExpandable"; storageClass: string; actual: string; wanted: string }
  | { kind: "unknown" };

/** Everything computeStatus needs. */
export interface StatusInput {
  inp: PlatformInputs;
  steps: Step[];
  previous?: ScalePlatformStatus;
  deployment?: KubeObject;
  pvc?: KubeObject;
  appPods: KubeObject[];
  tls: TlsObservation;
  storage: StorageObservation;
  health: HealthState;
  now: Date;
  /** Referenced Secret keys that do not resolve (empty: all do). */
  secretProblems: readonly SecretProblem[];
  /** How many Secret keys the spec references. */
  secretRefCount: number;
}

/** Monthly cost estimate from the operator's price table (the deployment summary; README.md here, "Steps, phase, status"). */
export function costEstimate(inp: PlatformInputs, prices: PlatformPrices) {
  return monthlyPrice(inp.spec.plan, inp.budget, prices);
}

interface PodStatusLike {
  status?: { containerStatuses?: { restartCount?: number; state?: { running?: { startedAt?: string } } }[] };
}

/** Latest start of a container that replaced an earlier one (restartCount > 0). */
function latestContainerRestart(pods: KubeObject[]): string | undefined {
  let latest: string | undefined;
  for (const p of pods as PodStatusLike[]) {
    for (const c of p.status?.containerStatuses ?? []) {
      const at = c.state?.running?.startedAt;
      if ((c.restartCount ?? 0) > 0 && at && (!latest || at > latest)) latest = at;
    }
  }
  return latest;
}

const later = (a: string | undefined, b: string | undefined) => (!a ? b : !b ? a : a > b ? a : b);

function phaseOf(i: StatusInput): NonNullable<ScalePlatformStatus["phase"]> {
  if (i.inp.spec.stopped) return "Stopped";
  if (i.steps.some((s) => s.state === "Failed")) return "Failed";
  if (allFinished(i.steps)) return "Running";
  if (!i.previous?.deployedTime) return "Provisioning";
  // Deployed before: only the health step failing (nothing rolling) is an outage, not an update.
  const pending = i.steps.filter((s) => s.state !== "Done" && s.state !== "Skipped").map((s) => s.name);
  if (pending.length === 1 && pending[0] === "HealthChecksPerformed" && i.previous.phase === "Running")
    return "Running";
  return "Updating";
}

function tlsCondition(tls: TlsObservation): ConditionInput {
  const c = (status: Condition["status"], reason: string, message: string) => ({
    type: CONDITION_TLS_READY,
    status,
    reason,
    message,
  });
  switch (tls.kind) {
    case "waitingForCertManager":
      return c(
        "False",
        PlatformReason.WaitingForCertManager,
        "cert-manager is not installed (no certificates.cert-manager.io CRD) and no spec.tls.secretName is given; the hosts are served over plain HTTP meanwhile",
      );
    case "noIssuer":
      return c(
        "False",
        PlatformReason.NoIssuer,
        "no spec.tls and no default issuer configured: served without TLS",
      );
    case "secret":
      return tls.secret
        ? c("True", PlatformReason.UsingExistingSecret, `serving Secret ${tls.name}`)
        : c("False", PlatformReason.SecretNotFound, `Secret ${tls.name} does not exist`);
    case "certificate": {
      const ready = (
        (
          tls.certificate?.status as
            | { conditions?: { type: string; status: string; message?: string }[] }
            | undefined
        )?.conditions ?? []
      ).find((x) => x.type === "Ready");
      return ready?.status === "True"
        ? c("True", PlatformReason.CertificateReady, "certificate issued by cert-manager")
        : c("False", PlatformReason.CertificatePending, ready?.message ?? "waiting for cert-manager");
    }
  }
}

function autoscalingCondition(inp: PlatformInputs, triggers: readonly string[]): ConditionInput {
  const type = CONDITION_AUTOSCALING;
  if (inp.spec.stopped)
    return { type, status: "False", reason: PlatformReason.Stopped, message: "HPA removed while stopped" };
  const list = `triggers: ${triggers.join(", ")}`;
  if (!inp.features.customMetrics)
    return {
      type,
      status: "True",
      reason: PlatformReason.ResourceMetricsOnly,
      message: `${list}; the cluster serves no custom.metrics.k8s.io API, so request queue length and response time are not used`,
    };
  const missing = customTriggers(inp)
    .filter((c) => !customMetricUsable(inp, c.metric))
    .map((c) => c.metric);
  if (missing.length === 0) return { type, status: "True", reason: PlatformReason.AllMetrics, message: list };
  // Left out rather than added: the HPA would never scale down while a metric has no values.
  return {
    type,
    status: "True",
    reason: PlatformReason.CustomMetricsMissing,
    message: `${list}; the custom metrics API serves no ${missing.join(" and no ")} for the app's pods, so ${missing.length > 1 ? "they are" : "it is"} left out (an HPA does not scale down while a metric is unavailable)`,
  };
}

function storageCondition(s: StorageObservation): ConditionInput | undefined {
  const type = CONDITION_STORAGE_SIZED;
  switch (s.kind) {
    case "sized":
      return {
        type,
        status: "True",
        reason: PlatformReason.Expanded,
        message: "database volume has the plan's size",
      };
    case "expanding":
      return {
        type,
        status: "False",
        reason: PlatformReason.Expanding,
        message: `expanding the database volume from ${s.from} to ${s.to}`,
      };
    case "notExpandable":
      return {
        type,
        status: "False",
        reason: PlatformReason.ExpansionNotSupported,
        message: `StorageClass ${s.storageClass} does not allow volume expansion: the volume keeps ${s.actual} (plan asks for ${s.wanted})`,
      };
    case "unknown":
      return undefined;
  }
}

/** The status to write. */
export function computeStatus(i: StatusInput): ScalePlatformStatus {
  const { inp, now } = i;
  const gen = inp.platform.metadata.generation;
  const phase = phaseOf(i);
  const prev = i.previous;
  let conditions: Condition[] = (prev?.conditions as Condition[] | undefined) ?? [];
  const set = (c: ConditionInput) => {
    conditions = setCondition(conditions, c, gen, now);
  };
  const h = i.health.last;
  const healthy = h?.ok === true;
  const ready = phase === "Running" && healthy;
  const reason =
    phase === "Running"
      ? healthy
        ? PlatformReason.Running
        : PlatformReason.HealthCheckFailed
      : phase === "Failed"
        ? PlatformReason.StepFailed
        : PlatformReason[phase];
  // A failed step explains more than the first unfinished one before it.
  const waiting =
    i.steps.find((s) => s.state === "Failed") ??
    i.steps.find((s) => s.state !== "Done" && s.state !== "Skipped");
  set({
    type: CONDITION_READY,
    status: ready ? "True" : "False",
    reason,
    message: ready
      ? "all steps done, health check passing"
      : waiting
        ? `${waiting.name}: ${waiting.message ?? waiting.state}`
        : `phase ${phase}`,
  });
  set({
    type: CONDITION_PROGRESSING,
    status: phase === "Provisioning" || phase === "Updating" ? "True" : "False",
    reason,
    message: `steps ${stepSummary(i.steps)}`,
  });
  set(tlsCondition(i.tls));
  set({ type: CONDITION_EDGE_PROTECTED, ...edgeCondition(inp) });
  const sp = i.secretProblems;
  set(
    sp.length > 0
      ? {
          type: CONDITION_CONFIGURATION_READY,
          status: "False",
          reason: sp[0]!.reason,
          message: describeProblems(sp),
        }
      : {
          type: CONDITION_CONFIGURATION_READY,
          status: "True",
          reason: PlatformReason.SecretsResolved,
          message:
            i.secretRefCount === 0
              ? "no Secret references"
              : `all ${i.secretRefCount} Secret references resolve`,
        },
  );
  const triggers = inp.spec.stopped ? [] : activeTriggers(inp);
  set(autoscalingCondition(inp, triggers));
  if (!inp.spec.stopped) {
    set(
      h === undefined
        ? {
            type: CONDITION_HEALTHY,
            status: "Unknown",
            reason: PlatformReason.HealthCheckPending,
            message: "no health check yet",
          }
        : {
            type: CONDITION_HEALTHY,
            status: healthy ? "True" : "False",
            reason: healthy ? PlatformReason.HealthCheckPassed : PlatformReason.HealthCheckFailed,
            message: healthy ? `GET ${h.url}` : `GET ${h.url}: ${h.message}`.slice(0, 1000),
          },
    );
  }
  const sc = storageCondition(i.storage);
  if (sc) set(sc);

  const dep = i.deployment?.status as { readyReplicas?: number } | undefined;
  const pvcStatus = i.pvc?.status as { capacity?: { storage?: string } } | undefined;
  const prevHc = prev?.healthCheck;
  const hcStatus = inp.spec.stopped
    ? "Unknown"
    : h === undefined
      ? "Unknown"
      : healthy
        ? "Healthy"
        : "Unhealthy";
  const healthCheck: NonNullable<ScalePlatformStatus["healthCheck"]> = {
    status: hcStatus,
    lastTransitionTime:
      prevHc?.status === hcStatus && prevHc.lastTransitionTime ? prevHc.lastTransitionTime : formatTime(now),
  };
  if (h && !inp.spec.stopped) healthCheck.url = h.url;
  if (h && !healthy && !inp.spec.stopped) healthCheck.message = h.message.slice(0, 1000);
  const deployedTime = prev?.deployedTime ?? (phase === "Running" ? formatTime(now) : undefined);
  // A finished rollout restarts the app (plan upgrade): its end is a restart, as are container restarts.
  const rolloutEnded = phase === "Running" && prev?.phase === "Updating" ? formatTime(now) : undefined;
  const lastRestartTime = later(
    later(prev?.lastRestartTime, latestContainerRestart(i.appPods)),
    rolloutEnded,
  );
  const uptime = uptimePercent(i.health);

  const status: ScalePlatformStatus = {
    observedGeneration: gen,
    phase,
    stepSummary: stepSummary(i.steps),
    steps: i.steps,
    urls: platformUrls(inp),
    credentialsSecretName: platformCredentialsSecretName(inp.platform.metadata.name ?? ""),
    resources: {
      cpu: toQuantity.cpu(inp.budget.total.cpuMillis),
      memory: toQuantity.memory(inp.budget.total.memoryMiB),
      storage: toQuantity.storage(inp.budget.database.storageGiB),
      ...(pvcStatus?.capacity?.storage ? { storageActual: pvcStatus.capacity.storage } : {}),
      appReplicas: dep?.readyReplicas ?? 0,
      minReplicas: inp.spec.stopped ? 0 : inp.budget.app.minReplicas,
      maxReplicas: inp.spec.stopped ? 0 : inp.budget.app.maxReplicas,
    },
    monthlyCostEstimate: costEstimate(inp, inp.config.prices),
    healthCheck,
    activeScalingTriggers: triggers,
    conditions,
  };
  if (uptime !== undefined) status.uptimePercent = uptime;
  if (i.health.since) status.uptimeSince = formatTime(i.health.since);
  if (deployedTime) status.deployedTime = deployedTime;
  if (lastRestartTime) status.lastRestartTime = lastRestartTime;
  return status;
}
