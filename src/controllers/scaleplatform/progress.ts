import { PLATFORM_STEPS, type PlatformStep, type STEP_STATES } from "../../api/v1alpha1/scaleplatform.ts";
import { formatTime } from "../../runtime/conditions.ts";
import type { KubeObject } from "../../runtime/types.ts";
import type { HealthResult } from "./health.ts";

// The seven deployment steps (README.md here, "Steps, phase, status"), derived on every reconcile from the real objects'
// status. Nothing is accumulated: only the steps' startedAt/finishedAt are carried over from the
// previous status (a step keeps the time it started and finished while its state holds). Pure.

type StepState = (typeof STEP_STATES)[number];

/** One step as written to status. */
export interface Step {
  name: PlatformStep;
  state: StepState;
  startedAt?: string;
  finishedAt?: string;
  message?: string;
}

/** How TLS is to be provided, with the live object that shows its progress. */
export type TlsObservation =
  | { kind: "certificate"; certificate?: KubeObject }
  | { kind: "secret"; name: string; secret?: KubeObject }
  | { kind: "waitingForCertManager" }
  | { kind: "noIssuer" };

/** What the reconciler saw this pass. */
export interface Observation {
  /** Children that do not exist (yet), by "Kind/name". */
  missing: string[];
  statefulSet?: KubeObject;
  pvc?: KubeObject;
  deployment?: KubeObject;
  appPods: KubeObject[];
  /** The config hash the pods must run with (pod template annotation). */
  configHash: string;
  ingress?: KubeObject;
  ingressClassExists: boolean;
  requireIngressAddress: boolean;
  tls: TlsObservation;
  health?: HealthResult;
  healthAt?: Date;
  /**
   * Why the app's configuration is held back (a referenced Secret or key is missing); the
   * ConfigMap and Deployment are then left as they are, or not created yet.
   */
  configHeld?: string;
}

type Own = { state: Exclude<StepState, "Pending"> | "Pending"; message?: string };

interface PodLike {
  metadata: { annotations?: Record<string, string> };
  status?: {
    phase?: string;
    containerStatuses?: {
      started?: boolean;
      state?: { waiting?: { reason?: string; message?: string } };
      lastState?: { terminated?: { exitCode?: number; reason?: string; message?: string } };
    }[];
  };
}

const IMAGE_FAILURES = new Set([
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "CreateContainerConfigError",
]);
type Conds = { type: string; status: string; reason?: string; message?: string }[];
const conds = (o: KubeObject | undefined): Conds =>
  (o?.status as { conditions?: Conds } | undefined)?.conditions ?? [];
const num = (o: KubeObject | undefined, f: string): number =>
  Number((o?.status as Record<string, unknown> | undefined)?.[f] ?? 0);

function infrastructure(o: Observation): Own {
  if (o.missing.length > 0) return { state: "InProgress", message: `creating ${o.missing.join(", ")}` };
  const phase = (o.pvc?.status as { phase?: string } | undefined)?.phase;
  if (phase === "Lost") return { state: "Failed", message: "database volume lost its PersistentVolume" };
  if (phase !== "Bound")
    return { state: "InProgress", message: "waiting for the database volume to be bound" };
  return { state: "Done" };
}

/** Whether the Deployment's controller has seen its latest spec and all pods run that template. */
export function rolledOut(d: KubeObject | undefined): boolean {
  if (!d) return false;
  const observed = num(d, "observedGeneration") >= (d.metadata.generation ?? 0);
  const replicas = num(d, "replicas");
  return observed && num(d, "updatedReplicas") === replicas && num(d, "availableReplicas") >= 1;
}

function software(o: Observation): Own {
  const failed = conds(o.deployment).find(
    (c) => c.type === "Progressing" && c.reason === "ProgressDeadlineExceeded",
  );
  if (failed) return { state: "Failed", message: failed.message ?? "rollout exceeded its deadline" };
  const current = (o.appPods as PodLike[]).filter(
    (p) => p.metadata.annotations?.["cronscale.io/config-hash"] === o.configHash,
  );
  for (const p of current) {
    for (const c of p.status?.containerStatuses ?? []) {
      const w = c.state?.waiting;
      if (w?.reason && IMAGE_FAILURES.has(w.reason))
        return { state: "Failed", message: `${w.reason}: ${w.message ?? ""}`.trim() };
      const crashed = crashReport(c);
      if (crashed) return crashed;
    }
  }
  if (!o.deployment && o.configHeld)
    return { state: "InProgress", message: `app Deployment not created yet: ${o.configHeld}`.slice(0, 1000) };
  const started = current.some((p) => {
    const cs = p.status?.containerStatuses ?? [];
    return cs.length > 0 && cs.every((c) => c.started === true);
  });
  return started
    ? { state: "Done" }
    : { state: "InProgress", message: "waiting for an app pod of the current version to start" };
}

/** Exit code of an app that refuses its configuration (EX_CONFIG): retrying cannot help. */
export const EXIT_CONFIG = 78;

/**
 * A crash-looping app container, told by its termination message (the kubelet keeps the last
 * log lines, see FallbackToLogsOnError on the container): a refused configuration fails the
 * step, naming the setting; any other crash is reported while the kubelet keeps retrying.
 */
function crashReport(
  c: NonNullable<NonNullable<PodLike["status"]>["containerStatuses"]>[number],
): Own | undefined {
  const t = c.lastState?.terminated;
  if (!t || (t.exitCode ?? 0) === 0) return undefined;
  const why = lastLogError(t.message ?? "") || t.reason || "";
  if (t.exitCode === EXIT_CONFIG)
    return { state: "Failed", message: `the app refuses to start (exit 78): ${why}`.trim().slice(0, 1000) };
  if (c.state?.waiting?.reason !== "CrashLoopBackOff") return undefined;
  return {
    state: "InProgress",
    message: `the app keeps exiting (exit ${t.exitCode}): ${why}`.trim().slice(0, 1000),
  };
}

/** The last log line of a termination message; of a JSON log line its error or msg field. */
export function lastLogError(message: string): string {
  const line = message.trim().split("\n").at(-1)?.trim() ?? "";
  try {
    const j = JSON.parse(line) as { error?: unknown; msg?: unknown };
    if (typeof j.error === "string") return j.error;
    if (typeof j.msg === "string") return j.msg;
  } catch {
    // not JSON: the line itself
  }
  return line;
}

function database(o: Observation): Own {
  if (num(o.statefulSet, "readyReplicas") < 1)
    return { state: "InProgress", message: "waiting for the database pod to be ready" };
  if (!o.health)
    return {
      state: "InProgress",
      message: "waiting for the app's health endpoint to report its database connection",
    };
  if (!o.health.ok)
    return { state: "InProgress", message: `health endpoint: ${o.health.message}`.slice(0, 1000) };
  return { state: "Done" };
}

function loadBalancer(o: Observation): Own {
  if (!o.ingress) return { state: "InProgress", message: "creating the Ingress" };
  const lb = (
    o.ingress.status as { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } } | undefined
  )?.loadBalancer?.ingress;
  if (lb && lb.length > 0)
    return { state: "Done", message: `address ${lb.map((a) => a.ip ?? a.hostname).join(", ")}` };
  if (!o.ingressClassExists) return { state: "InProgress", message: "no IngressClass serves this Ingress" };
  if (!o.requireIngressAddress)
    return { state: "Done", message: "IngressClass present (its controller publishes no address)" };
  return { state: "InProgress", message: "waiting for the Ingress controller to publish an address" };
}

function certificates(o: Observation): Own {
  const t = o.tls;
  if (t.kind === "waitingForCertManager")
    return { state: "Skipped", message: "TLS waits on cert-manager: its CRDs are not installed" };
  if (t.kind === "noIssuer") return { state: "Skipped", message: "no issuer configured: served without TLS" };
  if (t.kind === "secret")
    return t.secret
      ? { state: "Done", message: `using Secret ${t.name}` }
      : { state: "InProgress", message: `TLS Secret ${t.name} not found` };
  const ready = conds(t.certificate).find((c) => c.type === "Ready");
  if (ready?.status === "True") return { state: "Done" };
  return {
    state: "InProgress",
    message: ready?.message ?? "waiting for cert-manager to issue the certificate",
  };
}

function configuration(o: Observation): Own {
  // Failed, not waiting: the user has to create the Secret. Pods of this configuration could
  // not start, so they are not rolled out; the step recovers on its own once the Secret exists.
  if (o.configHeld)
    return { state: "Failed", message: `configuration not applied: ${o.configHeld}`.slice(0, 1000) };
  return rolledOut(o.deployment)
    ? { state: "Done" }
    : { state: "InProgress", message: "rolling out the app with the current configuration" };
}

function healthChecks(o: Observation, configDoneAt: string | undefined): Own {
  if (!o.health || !o.healthAt) return { state: "InProgress", message: "waiting for the first health check" };
  // A pass counts only if it happened after the configuration was rolled out.
  if (configDoneAt && formatTime(o.healthAt) < configDoneAt)
    return { state: "InProgress", message: "waiting for a health check of the new version" };
  return o.health.ok
    ? { state: "Done" }
    : { state: "InProgress", message: `health endpoint: ${o.health.message}`.slice(0, 1000) };
}

const finished = (s: StepState) => s === "Done" || s === "Skipped";

/** Carries timestamps over from the previous step of the same name. */
function stamp(name: PlatformStep, own: Own, prev: Step | undefined, now: string): Step {
  const step: Step = { name, state: own.state };
  if (own.message) step.message = own.message;
  if (own.state === "Pending") return step;
  const prevActive = prev && prev.state !== "Pending";
  step.startedAt = prevActive && prev.startedAt ? prev.startedAt : now;
  if (finished(own.state))
    step.finishedAt = prev && finished(prev.state) && prev.finishedAt ? prev.finishedAt : now;
  return step;
}

/**
 * The seven steps in order. A step only counts once every step before it is finished; before
 * that it shows Pending (or Failed, which is never hidden).
 */
export function deriveSteps(o: Observation, previous: readonly Step[] | undefined, now: Date): Step[] {
  const t = formatTime(now);
  const prev = (n: PlatformStep) => previous?.find((s) => s.name === n);
  const out: Step[] = [];
  let blocked = false;
  for (const name of PLATFORM_STEPS) {
    let own: Own;
    switch (name) {
      case "InfrastructureProvisioned":
        own = infrastructure(o);
        break;
      case "SoftwareInstalled":
        own = software(o);
        break;
      case "DatabaseConfigured":
        own = database(o);
        break;
      case "LoadBalancerSetUp":
        own = loadBalancer(o);
        break;
      case "CertificatesGenerated":
        own = certificates(o);
        break;
      case "InitialConfigurationApplied":
        own = configuration(o);
        break;
      case "HealthChecksPerformed":
        own = healthChecks(o, out.find((s) => s.name === "InitialConfigurationApplied")?.finishedAt);
        break;
    }
    if (blocked && own.state !== "Failed")
      own = { state: "Pending", message: own.state === "Skipped" ? own.message : undefined };
    const step = stamp(name, own, prev(name), t);
    if (!finished(step.state)) blocked = true;
    out.push(step);
  }
  return out;
}

/** "n/7": finished steps (Done or Skipped) out of seven. */
export function stepSummary(steps: readonly Step[]): string {
  return `${steps.filter((s) => finished(s.state)).length}/${PLATFORM_STEPS.length}`;
}

/** Whether every step is finished. */
export function allFinished(steps: readonly Step[]): boolean {
  return steps.length === PLATFORM_STEPS.length && steps.every((s) => finished(s.state));
}
