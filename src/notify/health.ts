import type { Notification, PlatformNotificationEvent } from "../api/v1alpha1/notification.ts";
import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import type { Decided } from "./build.ts";

// A platform's health check alerts and recoveries, folded like a task's failure storms. The
// platform controller records each health transition in status (healthCheck.status and its
// lastTransitionTime); every transition the notifier sees becomes a Notification named after it,
// so it is decided once. The first outage is announced at once, and so is its recovery. An outage
// that starts within foldMinutes of the last alert is recorded without recipients ("folded": it
// sends nothing, but it is durable, so a restart counts it too); when the interval ends, one
// message reports the folded outages with their count and total downtime.

/** Builds a message of `p` (undefined when nobody is to be told about `event`). */
export type MakeMessage = (
  event: PlatformNotificationEvent,
  key: string,
  subject: string,
  intro: string[],
  extra: Record<string, string>,
) => Decided | undefined;

/** What the health part of a platform's decision produces. */
export interface HealthDecision {
  decided: Decided[];
  /** When folded outages are due to be reported (ms from now). */
  requeueAfterMs?: number;
}

/** details key marking a transition recorded without recipients. */
export const FOLDED = "folded";

const isFolded = (n: Notification) => n.spec.details?.[FOLDED] === "true";
const sinceOf = (n: Notification) => n.spec.details?.since ?? "";
const max = (xs: string[]) => [...xs].sort().at(-1) ?? "";

/** Human form of a duration in seconds: "4 min 05 s", "2 h 03 min". */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}

function folded(d: Decided | undefined): Decided | undefined {
  return d && { ...d, recipients: {}, details: { ...d.details, [FOLDED]: "true" } };
}

/** Decides the health messages (or folded records) due for `p` now. */
export function decideHealth(
  p: ScalePlatform,
  notes: readonly Notification[],
  now: Date,
  fresh: (time: string | undefined) => time is string,
  make: MakeMessage,
): HealthDecision {
  const hc = p.status?.healthCheck;
  const ref = `${p.metadata.namespace}/${p.metadata.name}`;
  const name = p.metadata.name ?? "";
  const foldMs = (p.spec.notifications?.foldMinutes ?? 60) * 60_000;
  const health = notes.filter(
    (n) => n.spec.event === "HealthCheckFailing" || n.spec.event === "HealthCheckRecovered",
  );
  const failing = health
    .filter((n) => n.spec.event === "HealthCheckFailing")
    .sort((a, b) => sinceOf(a).localeCompare(sinceOf(b)) || Number(isFolded(b)) - Number(isFolded(a)));
  const recoveries = health.filter((n) => n.spec.event === "HealthCheckRecovered");
  const sent = health.filter((n) => !isFolded(n));
  // The last outage a sent message covered; outages after it are still to be reported.
  const cursor = max(sent.map((n) => n.spec.through ?? sinceOf(n)));
  // The interval runs from the last alert (or folded report) that was sent.
  const windowStart = max(
    sent
      .filter((n) => n.spec.event === "HealthCheckFailing" || n.spec.details?.outages)
      .map((n) => n.spec.occurredAt),
  );
  const inWindow = windowStart !== "" && now.getTime() - Date.parse(windowStart) < foldMs;
  const unreported = failing.filter((n) => isFolded(n) && sinceOf(n) > cursor);
  const downtimeOf = (since: string) =>
    Number(recoveries.find((r) => sinceOf(r) === since)?.spec.details?.downtimeSeconds ?? 0);
  const out: (Decided | undefined)[] = [];

  const lastFailing = failing.at(-1);
  if (hc?.status === "Unhealthy" && p.status?.deployedTime && fresh(hc.lastTransitionTime)) {
    const since = hc.lastTransitionTime;
    if (!failing.some((n) => sinceOf(n) === since)) {
      const extra = { since, check: hc.url ?? "", error: hc.message ?? "" };
      const intro = [
        `The health check of ${name} fails since ${since}: ${hc.message ?? "no answer"}.`,
        `Checked: ${hc.url ?? "-"}`,
      ];
      if (inWindow) {
        out.push(
          folded(
            make(
              "HealthCheckFailing",
              `unhealthy|${since}`,
              `Platform ${ref} failed its health check again`,
              intro,
              extra,
            ),
          ),
        );
      } else {
        const n = unreported.length;
        const more = n ? [`${n} more outage${n === 1 ? "" : "s"} since the last message (folded).`] : [];
        const d = make(
          "HealthCheckFailing",
          `unhealthy|${since}`,
          `Platform ${ref} is failing its health check`,
          [...intro, ...more],
          {
            ...extra,
            ...(n ? { outages: String(n) } : {}),
          },
        );
        out.push(d && { ...d, through: since });
      }
    }
  }
  if (
    hc?.status === "Healthy" &&
    lastFailing &&
    hc.lastTransitionTime &&
    hc.lastTransitionTime >= sinceOf(lastFailing)
  ) {
    const since = sinceOf(lastFailing);
    if (!recoveries.some((n) => sinceOf(n) === since)) {
      const down = (Date.parse(hc.lastTransitionTime) - Date.parse(since)) / 1000;
      const d = make(
        "HealthCheckRecovered",
        `recovered|${since}`,
        `Platform ${ref} is healthy again`,
        [
          `The health check of ${name} passes again since ${hc.lastTransitionTime}, after ${formatDuration(down)} of downtime (failing since ${since}).`,
        ],
        { since, recoveredAt: hc.lastTransitionTime, downtimeSeconds: String(Math.round(down)) },
      );
      // An outage a sent message announced gets its recovery; a folded one is only recorded.
      out.push(since <= cursor ? d && { ...d, through: since } : folded(d));
    }
  }
  if (out.length === 0 && unreported.length > 0 && !inWindow) {
    const n = unreported.length;
    const last = sinceOf(unreported.at(-1) as Notification);
    const total = unreported.reduce((s, u) => s + downtimeOf(sinceOf(u)), 0);
    const down = !recoveries.some((r) => sinceOf(r) === last);
    const counted = `${n} health check outage${n === 1 ? "" : "s"} of ${name} since the last message`;
    const extra = { since: last, outages: String(n), downtimeSeconds: String(total) };
    const d = down
      ? make(
          "HealthCheckFailing",
          `fold|${last}`,
          `Platform ${ref} is failing its health check again`,
          [`${counted}; failing again since ${last}: ${hc?.message ?? "no answer"}.`],
          extra,
        )
      : make(
          "HealthCheckRecovered",
          `fold|${last}`,
          `Platform ${ref} had ${n} more health check outage${n === 1 ? "" : "s"}`,
          [
            `${counted} (${formatDuration(total)} of downtime in all); healthy again since ${hc?.lastTransitionTime ?? "-"}.`,
          ],
          extra,
        );
    out.push(d && { ...d, count: n, through: last });
  }
  const decided = out.filter((d): d is Decided => d !== undefined);
  const pending = unreported.length > 0 || decided.some((d) => d.details[FOLDED] === "true");
  if (pending && inWindow) {
    return { decided, requeueAfterMs: Math.max(1000, Date.parse(windowStart) + foldMs - now.getTime()) };
  }
  return { decided };
}
