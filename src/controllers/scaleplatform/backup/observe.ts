import { LABEL_BACKUP_REQUEST, LABEL_BACKUP_TYPE } from "../../../api/v1alpha1/labels.ts";
import type { LiveChildren } from "../../../runtime/children.ts";
import type { KubeObject } from "../../../runtime/types.ts";
import type { PlatformInputs } from "../desired/common.ts";
import type { BackupType } from "./desired.ts";
import { type BackupWorld, backupKey } from "./plan.ts";

// What a pass observed of a platform's backups: the backup Jobs read back with the runner's
// summaries (the children themselves are planned in plan.ts).

/** The runner's summary in the container's termination message (see runner.ts). */
export interface RunnerSummary {
  v: number;
  ok: boolean;
  type?: string;
  skipped?: string;
  cancelled?: boolean;
  error?: string;
  infoError?: string;
  /** [label, type, start s, stop s, size bytes, repo delta bytes], newest first. */
  backups?: [string, string, number, number, number?, number?][];
  oldestStart?: number;
  archiver?: { lastArchived?: number; failedCount: number; lastFailed?: number };
  /** Timeline the database serves on, when its system identifier is the repository's. */
  timeline?: number;
}

/** One backup Job as the status sees it. */
export interface BackupJobRun {
  job: string;
  /** The Job's uid (a Job recreated under the same name is another run). */
  uid?: string;
  /** Started by a ScalePlatformBackup (a manual backup), not by a schedule. */
  manual?: boolean;
  type: BackupType;
  createdAt: number;
  /** Epoch ms; undefined while it runs. */
  finishedAt?: number;
  succeeded: boolean;
  /** The Job's own failure message (deadline, pod failure) when the runner wrote none. */
  message?: string;
  summary?: RunnerSummary;
}

/** What the reconciler observed about a platform's backups. */
export interface BackupObservation {
  /** Finished and running backup Jobs, newest first. */
  runs: BackupJobRun[];
  /** The Secret of the encryption key exists with its key. */
  keyPresent: boolean;
  /** Its name (the user's or the generated one). */
  keySecretName: string;
}

/** Parses a runner summary; undefined for anything else. */
export function parseSummary(text: string | undefined): RunnerSummary | undefined {
  if (!text) return undefined;
  try {
    const s = JSON.parse(text) as RunnerSummary;
    return s && typeof s === "object" && s.v === 1 && typeof s.ok === "boolean" ? s : undefined;
  } catch {
    return undefined;
  }
}

type JobLike = {
  metadata: KubeObject["metadata"];
  status?: {
    conditions?: { type: string; status: string; lastTransitionTime?: string; message?: string }[];
    completionTime?: string;
  };
};
type PodLike = {
  metadata: KubeObject["metadata"];
  status?: { containerStatuses?: { name: string; state?: { terminated?: { message?: string } } }[] };
};

/** The runs of the given Jobs with their pods' summaries, newest first. Pure. */
export function jobRuns(jobs: readonly KubeObject[], pods: readonly KubeObject[]): BackupJobRun[] {
  const summaries = new Map<string, RunnerSummary>();
  for (const p of pods as readonly PodLike[]) {
    const job = p.metadata.labels?.["batch.kubernetes.io/job-name"];
    const msg = p.status?.containerStatuses?.find((c) => c.name === "backup")?.state?.terminated?.message;
    const s = parseSummary(msg);
    if (job && s) summaries.set(job, s);
  }
  return (jobs as readonly JobLike[])
    .map((j) => {
      const name = j.metadata.name ?? "";
      const conds = j.status?.conditions ?? [];
      const done = conds.find((c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True");
      const at = done?.lastTransitionTime ?? j.status?.completionTime;
      const run: BackupJobRun = {
        job: name,
        type: j.metadata.labels?.[LABEL_BACKUP_TYPE] === "full" ? "full" : "incr",
        createdAt: Date.parse((j.metadata.creationTimestamp as string | undefined) ?? "") || 0,
        succeeded: done?.type === "Complete",
      };
      if (j.metadata.uid) run.uid = j.metadata.uid;
      if (j.metadata.labels?.[LABEL_BACKUP_REQUEST]) run.manual = true;
      if (done && at) run.finishedAt = Date.parse(at);
      if (done?.type === "Failed" && done.message) run.message = done.message;
      const s = summaries.get(name);
      if (s) run.summary = s;
      return run;
    })
    .sort(
      (a, b) =>
        (b.finishedAt ?? Number.MAX_SAFE_INTEGER) - (a.finishedAt ?? Number.MAX_SAFE_INTEGER) ||
        b.createdAt - a.createdAt,
    );
}

/** The observation of a platform with spec.backup, once the plan is carried out; else undefined. */
export function backupObservation(
  inp: PlatformInputs,
  world: { live: LiveChildren; backup?: BackupWorld },
  created: readonly KubeObject[],
): BackupObservation | undefined {
  const key = backupKey(inp, world.live);
  if (!key) return undefined;
  const jobs = [...(world.backup?.jobs ?? []), ...created.filter((o) => o.kind === "Job")];
  return { runs: jobRuns(jobs, world.backup?.pods ?? []), keyPresent: key.present, keySecretName: key.name };
}
