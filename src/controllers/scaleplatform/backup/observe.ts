import { LABEL_BACKUP_REQUEST, LABEL_BACKUP_TYPE } from "../../../api/v1alpha1/labels.ts";
import {
  platformBackupCronJobName,
  platformBackupName,
  platformDatabaseName,
  platformFirstBackupJobName,
} from "../../../api/v1alpha1/names.ts";
import { needsApply } from "../../../runtime/apply.ts";
import { isConflict } from "../../../runtime/errors.ts";
import { readList } from "../../../runtime/read.ts";
import type { KubeObject, ObjectKey, ReconcileContext } from "../../../runtime/types.ts";
import { readChild } from "../children.ts";
import type { PlatformInputs } from "../desired/common.ts";
import type { RandomString } from "../desired/credentials.ts";
import {
  type BackupType,
  backupSelector,
  desiredBackupAccess,
  desiredBackupCronJob,
  desiredFirstBackupJob,
  desiredKeySecret,
} from "./desired.ts";
import { keyRef, repositoryPath } from "./pgbackrest.ts";

// The backup step of a pass: the encryption key (generated once, or the user's checked), the
// RBAC, runner and CronJobs applied where they differ, the first full backup started once the
// database is ready, and the backup Jobs read back with the runner's summaries. Without
// spec.backup, the backup children are deleted (the key Secret and the repository stay).

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

/** The database pod is ready and runs with the repository the spec names (not a pod from before). */
export function dbPodReadyFor(pod: KubeObject | undefined, repoPath: string): boolean {
  const st = pod?.status as { conditions?: { type: string; status: string }[] } | undefined;
  const ready = st?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
  const env = (
    pod?.spec as { containers?: { name: string; env?: { name: string; value?: string }[] }[] }
  )?.containers?.find((c) => c.name === "postgres")?.env;
  return ready && (env?.some((e) => e.name === "PGBACKREST_REPO1_PATH" && e.value === repoPath) ?? false);
}

/** Whether the key Secret has the key: the generated one is created when it never existed. */
async function ensureKey(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  key: ObjectKey,
  inp: PlatformInputs,
  random: RandomString,
): Promise<{ present: boolean; name: string }> {
  const backup = inp.spec.backup;
  if (!backup) return { present: false, name: "" };
  const ref = keyRef(backup, key.name);
  const live = await readChild(ctx, cached, "v1", "Secret", key.namespace, ref.name);
  const data = (live as { data?: Record<string, string> } | undefined)?.data;
  if (live) return { present: data?.[ref.key] !== undefined, name: ref.name };
  // A key that existed once is never replaced: the repository is encrypted with it.
  const generated = !backup.encryptionKeySecretRef;
  const knownBefore = inp.platform.status?.backup?.encryptionKeySecretName !== undefined;
  if (!generated || knownBefore) return { present: false, name: ref.name };
  try {
    await ctx.client.create(desiredKeySecret(inp, random(64)));
    ctx.log.info({ platform: key.name, secret: ref.name }, "generated backup encryption key");
    await ctx.events.normal(
      inp.platform,
      "BackupKeyGenerated",
      "Backup",
      `encryption passphrase generated into Secret ${ref.name} (not deleted with the platform; keep a copy outside the cluster)`,
    );
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
  return { present: true, name: ref.name };
}

/** Deletes the backup children of a platform whose spec.backup was removed (only those that exist). */
async function removeBackupChildren(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  key: ObjectKey,
): Promise<void> {
  const ns = key.namespace;
  const name = platformBackupName(key.name);
  const children: [string, string, string][] = [
    ["batch/v1", "CronJob", platformBackupCronJobName(key.name, "full")],
    ["batch/v1", "CronJob", platformBackupCronJobName(key.name, "incr")],
    ["rbac.authorization.k8s.io/v1", "RoleBinding", name],
    ["rbac.authorization.k8s.io/v1", "Role", name],
    ["v1", "ServiceAccount", name],
    ["v1", "ConfigMap", name],
  ];
  for (const [apiVersion, kind, n] of children) {
    if (await readChild(ctx, cached, apiVersion, kind, ns, n)) {
      await ctx.client.delete(apiVersion, kind, ns, n, { propagationPolicy: "Background" });
      ctx.log.info({ platform: key.name, kind, name: n }, "removed backup child");
    }
  }
}

/** The backup step; undefined without spec.backup. */
export async function reconcileBackups(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  key: ObjectKey,
  inp: PlatformInputs,
  random: RandomString,
): Promise<BackupObservation | undefined> {
  const backup = inp.spec.backup;
  if (!backup) {
    await removeBackupChildren(ctx, cached, key);
    return undefined;
  }
  const k = await ensureKey(ctx, cached, key, inp, random);
  const desired = [
    ...desiredBackupAccess(inp),
    desiredBackupCronJob(inp, backup, "full"),
    desiredBackupCronJob(inp, backup, "incr"),
  ];
  for (const d of desired) {
    const live = await readChild(ctx, cached, d.apiVersion, d.kind, key.namespace, d.metadata.name ?? "");
    if (!needsApply(d, live)) continue;
    await ctx.client.apply(d);
    ctx.log.info({ platform: key.name, kind: d.kind, name: d.metadata.name }, "applied backup child");
  }
  const selector = backupSelector(key.name);
  const jobs = await readList(ctx, cached, "batch/v1", "Job", key.namespace, selector);
  const pods = await readList(ctx, cached, "v1", "Pod", key.namespace, selector);
  const db = await readChild(ctx, cached, "v1", "Pod", key.namespace, `${platformDatabaseName(key.name)}-0`);
  const neverBackedUp = !inp.platform.status?.backup?.lastSuccessfulBackup;
  const repoPath = repositoryPath(backup, key.namespace, key.name);
  if (!inp.spec.stopped && k.present && jobs.length === 0 && neverBackedUp && dbPodReadyFor(db, repoPath)) {
    try {
      const job = await ctx.client.create(desiredFirstBackupJob(inp));
      jobs.push(job);
      ctx.log.info({ platform: key.name, job: platformFirstBackupJobName(key.name) }, "started first backup");
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
  return { runs: jobRuns(jobs, pods), keyPresent: k.present, keySecretName: k.name };
}
