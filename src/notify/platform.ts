import type {
  Notification,
  NotificationRecipients,
  PlatformNotificationEvent,
} from "../api/v1alpha1/notification.ts";
import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformRestore } from "../api/v1alpha1/scaleplatformrestore.ts";
import { decideBackups, decideRestores } from "./backup.ts";
import { type Decided, hasRecipients } from "./build.ts";
import { decideHealth, type HealthDecision, type MakeMessage } from "./health.ts";

export { formatDuration } from "./health.ts";

// What a platform's status announces. The platform controller already records each transition
// durably in status (deployedTime, healthCheck.status with its lastTransitionTime, the plan
// rolled out at observedGeneration), so the decision reads status and the platform's own
// Notifications: a transition is announced when no Notification for it exists yet and it is
// younger than maxAge (so adding notifications to an old platform does not replay history).

/** Recipients of `event` for `platform`, or undefined when nobody is to be told. */
export function platformRecipients(
  platform: ScalePlatform,
  event: PlatformNotificationEvent,
): NotificationRecipients | undefined {
  const n = platform.spec.notifications;
  if (n && hasRecipients(n)) {
    if (n.events && !n.events.includes(event)) return undefined;
    return { email: n.email, webhooks: n.webhooks, chat: n.chat, sms: n.sms };
  }
  // Nothing set: the store's contact hears that the deployment it asked for is done.
  const contact = platform.spec.store?.contactEmail;
  if (event === "DeploymentCompleted" && contact) return { email: [contact] };
  return undefined;
}

function ageOk(time: string | undefined, now: Date, maxAgeMinutes: number): time is string {
  const t = time ? Date.parse(time) : Number.NaN;
  return !Number.isNaN(t) && now.getTime() - t <= maxAgeMinutes * 60_000;
}

/** The backups as the status says: current, pending, or plainly none and why. */
function backupLine(st: NonNullable<ScalePlatform["status"]>): string {
  const c = st.conditions?.find((x) => x.type === "BackupHealthy");
  if (!c) return "-";
  if (c.reason === "Disabled") return "none (turned off for this platform: spec.disableBackups)";
  if (c.reason === "NotConfigured") return "none (no backup repository configured)";
  const last = st.backup?.lastSuccessfulBackup?.stopTime;
  return `${st.backup?.repository ?? "configured"}${last ? `, last ${last}` : ", no backup yet"}`;
}

/** The deployment summary: name, plan, URLs, resources and cost estimate — never credentials. */
function summary(p: ScalePlatform): { lines: string[]; details: Record<string, string> } {
  const st = p.status ?? {};
  const urls = st.urls ?? {};
  const cost = st.monthlyCostEstimate;
  const res = st.resources ?? {};
  const costText = cost ? `${cost.amount} ${cost.currency} per month` : "not available";
  const lines = [
    `Platform: ${p.metadata.name} (namespace ${p.metadata.namespace})`,
    `Plan: ${p.spec.plan}`,
    `Store: ${urls.platform ?? "-"}`,
    `Admin: ${urls.admin ?? "-"}`,
    `API: ${urls.api ?? "-"}`,
    `Resources: ${res.cpu ?? "?"} vCPU, ${res.memory ?? "?"} memory, ${res.storage ?? "?"} storage; app replicas ${res.minReplicas ?? "?"}-${res.maxReplicas ?? "?"}`,
    `Estimated cost: ${costText}`,
    // Only what is in force for this platform (each backed by a condition in its status).
    `Included: ${st.features?.join(", ") || "-"}`,
    `Backups: ${backupLine(st)}`,
    `Admin credentials: in the Secret ${st.credentialsSecretName ?? "-"} (kubectl get secret -n ${p.metadata.namespace} ${st.credentialsSecretName ?? ""})`,
  ];
  const details: Record<string, string> = {
    platform: p.metadata.name ?? "",
    namespace: p.metadata.namespace ?? "",
    plan: p.spec.plan,
    platformUrl: urls.platform ?? "",
    adminUrl: urls.admin ?? "",
    apiUrl: urls.api ?? "",
    costEstimate: cost ? `${cost.amount} ${cost.currency}` : "",
  };
  return { lines, details };
}

function decided(
  p: ScalePlatform,
  event: PlatformNotificationEvent,
  key: string,
  subject: string,
  intro: string[],
  extra: Record<string, string>,
): Decided | undefined {
  const recipients = platformRecipients(p, event);
  if (!recipients) return undefined;
  const s = summary(p);
  return {
    event,
    key,
    subject,
    text: [...intro, "", ...s.lines].join("\n"),
    details: { ...s.details, ...extra },
    recipients,
  };
}

/** Decides the messages due for `platform` now (each at most once: a Notification names it). */
export function decidePlatform(
  p: ScalePlatform,
  notes: readonly Notification[],
  now: Date,
  maxAgeMinutes: number,
  restores: readonly ScalePlatformRestore[] = [],
): HealthDecision {
  const st = p.status;
  if (!st) return { decided: [] };
  const ref = `${p.metadata.namespace}/${p.metadata.name}`;
  const seen = (event: string) => notes.filter((n) => n.spec.event === event);
  const out: (Decided | undefined)[] = [];

  if (ageOk(st.deployedTime, now, maxAgeMinutes) && seen("DeploymentCompleted").length === 0) {
    out.push(
      decided(
        p,
        "DeploymentCompleted",
        `deployed|${st.deployedTime}`,
        `Platform ${ref} is deployed`,
        [`The deployment of ${p.metadata.name} completed at ${st.deployedTime}.`],
        { deployedTime: st.deployedTime },
      ),
    );
  }

  // A plan upgrade is done when the platform runs the current generation again; plans only go up,
  // so each plan is reached once and names its transition.
  const settled = st.phase === "Running" && st.observedGeneration === p.metadata.generation;
  const lastPlan = [...notes]
    .filter((n) => n.spec.details?.plan)
    .sort((a, b) => a.spec.occurredAt.localeCompare(b.spec.occurredAt))
    .at(-1)?.spec.details?.plan;
  if (settled && lastPlan && lastPlan !== p.spec.plan) {
    out.push(
      decided(
        p,
        "PlanUpgradeCompleted",
        `plan|${p.spec.plan}`,
        `Platform ${ref} now runs plan ${p.spec.plan}`,
        [`The upgrade of ${p.metadata.name} from plan ${lastPlan} to ${p.spec.plan} completed.`],
        { previousPlan: lastPlan },
      ),
    );
  }

  const fresh = (time: string | undefined): time is string => ageOk(time, now, maxAgeMinutes);
  const make: MakeMessage = (event, key, subject, intro, extra) =>
    decided(p, event, key, subject, intro, extra);
  const health = decideHealth(p, notes, now, fresh, make);
  return {
    decided: [
      ...out.filter((d): d is Decided => d !== undefined),
      ...health.decided,
      ...decideBackups(p, notes, fresh, make),
      ...decideRestores(p, restores, notes, fresh, make),
    ],
    requeueAfterMs: health.requeueAfterMs,
  };
}
