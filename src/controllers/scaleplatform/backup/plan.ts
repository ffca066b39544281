import {
  platformBackupCronJobName,
  platformBackupS3SecretName,
  platformFirstBackupJobName,
} from "../../../api/v1alpha1/names.ts";
import { type ChildRef, childKey, type LiveChildren, type PlannedChild } from "../../../runtime/children.ts";
import type { KubeObject } from "../../../runtime/types.ts";
import { nameOf, type PlatformInputs } from "../desired/common.ts";
import type { RandomString } from "../desired/credentials.ts";
import {
  desiredBackupAccess,
  desiredBackupCronJob,
  desiredFirstBackupJob,
  desiredKeySecret,
  desiredRepositoryCredentials,
} from "./desired.ts";
import { keyRef, repositoryPath } from "./pgbackrest.ts";

// The backup children of a platform's plan: the encryption key (generated once, never replaced;
// or the user's, only read), the RBAC, runner and CronJobs applied, and the first full backup
// started once the database is ready. Without spec.backup none is planned, so the executor
// prunes them (the key Secret, not owned, and the repository stay). Pure.

/** What a pass read of a platform's backups (with spec.backup). */
export interface BackupWorld {
  /** Backup Jobs (scheduled, first, manual) and their pods, by the backup selector. */
  jobs: KubeObject[];
  pods: KubeObject[];
  /** The database pod `<name>-db-0`. */
  dbPod?: KubeObject;
}

/** The backup children the plan may name: what the world reads by name. */
export function backupChildRefs(inp: PlatformInputs): ChildRef[] {
  const backup = inp.spec.backup;
  if (!backup) return [];
  const name = nameOf(inp);
  return [
    { apiVersion: "v1", kind: "Secret", name: keyRef(backup, name).name },
    ...(inp.backupSource === "default"
      ? [{ apiVersion: "v1", kind: "Secret", name: platformBackupS3SecretName(name) }]
      : []),
    ...desiredBackupAccess(inp).map((o) => ({
      apiVersion: o.apiVersion,
      kind: o.kind,
      name: o.metadata.name ?? "",
    })),
    { apiVersion: "batch/v1", kind: "CronJob", name: platformBackupCronJobName(name, "full") },
    { apiVersion: "batch/v1", kind: "CronJob", name: platformBackupCronJobName(name, "incr") },
    { apiVersion: "batch/v1", kind: "Job", name: platformFirstBackupJobName(name) },
  ];
}

/**
 * The encryption key: its Secret's name, whether the plan generates it (the generated one, when
 * it never existed: a key that existed once is never replaced, the repository is encrypted with
 * it), and whether it is present once the plan is carried out.
 */
export function backupKey(
  inp: PlatformInputs,
  live: LiveChildren,
): { name: string; generate: boolean; present: boolean } | undefined {
  const backup = inp.spec.backup;
  if (!backup) return undefined;
  const ref = keyRef(backup, nameOf(inp));
  const secret = live.get(childKey("Secret", ref.name)) as { data?: Record<string, string> } | undefined;
  if (secret) return { name: ref.name, generate: false, present: secret.data?.[ref.key] !== undefined };
  const knownBefore = inp.platform.status?.backup?.encryptionKeySecretName !== undefined;
  const generate = !backup.encryptionKeySecretRef && !knownBefore;
  return { name: ref.name, generate, present: generate };
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

/** The backup entries of the plan, in write order; none without spec.backup. */
export function planBackupChildren(
  inp: PlatformInputs,
  world: { live: LiveChildren; backup?: BackupWorld },
  random: RandomString,
): PlannedChild<"backup">[] {
  const backup = inp.spec.backup;
  const key = backupKey(inp, world.live);
  if (!backup || !key) return [];
  const name = nameOf(inp);
  const out: PlannedChild<"backup">[] = [];
  if (key.generate)
    out.push({
      part: "backup",
      policy: "createOnce",
      // Not owned: deleting the platform leaves it, and the backups readable.
      unowned: true,
      ref: { apiVersion: "v1", kind: "Secret", name: key.name },
      make: () => desiredKeySecret(inp, random(64)),
    });
  const copy = desiredRepositoryCredentials(inp);
  if (copy) out.push({ part: "backup", policy: "apply", object: copy });
  for (const object of [
    ...desiredBackupAccess(inp),
    desiredBackupCronJob(inp, backup, "full"),
    desiredBackupCronJob(inp, backup, "incr"),
  ])
    out.push({ part: "backup", policy: "apply", object });
  const neverBackedUp = !inp.platform.status?.backup?.lastSuccessfulBackup;
  const repoPath = repositoryPath(backup, inp.platform.metadata.namespace ?? "", name);
  const jobs = world.backup?.jobs ?? [];
  if (
    !inp.spec.stopped &&
    key.present &&
    jobs.length === 0 &&
    neverBackedUp &&
    dbPodReadyFor(world.backup?.dbPod, repoPath)
  )
    out.push({
      part: "backup",
      policy: "createOnce",
      ref: { apiVersion: "batch/v1", kind: "Job", name: platformFirstBackupJobName(name) },
      make: () => desiredFirstBackupJob(inp),
    });
  return out;
}
