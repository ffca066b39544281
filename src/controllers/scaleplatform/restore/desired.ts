import type { BackupPick } from "../../../api/restore-target.ts";
import { API_VERSION } from "../../../api/v1alpha1/kind.ts";
import { LABEL_COMPONENT, LABEL_RESTORE, RESTORE_COMPONENT } from "../../../api/v1alpha1/labels.ts";
import { platformDatabaseSecretName } from "../../../api/v1alpha1/names.ts";
import type { ScalePlatformRestore } from "../../../api/v1alpha1/scaleplatformrestore.ts";
import type { KubeObject } from "../../../runtime/types.ts";
import { pgbackrestEnv, pgbackrestVolumes } from "../backup/pgbackrest.ts";
import { childLabels, nameOf, type PlatformInputs, RESTRICTED_CONTAINER } from "../desired/common.ts";
import { DB_KEYS } from "../desired/credentials.ts";
import { DATA_MOUNT } from "../desired/database.ts";
import { PICK_FUNCTIONS, PICK_STEP } from "./pick.ts";

// The restore's children, owned by the ScalePlatformRestore until the cutover: the new volume and
// the Job that fills it. The Job runs the database image (it has pgBackRest and PostgreSQL):
// `pgbackrest restore` into the new volume, then PostgreSQL on it, alone (no TCP, trust only on
// its private socket), replays the WAL up to the target (along the serving database's timeline,
// src/api/restore-target.ts) and promotes on a new timeline whose WAL it archives to the same repository; the database user's password is set from the current
// Secret, and the server stops cleanly. The cutover then only switches volumes. Pure.

/** Seconds a restore Job may run (the spec's RTO is 4 hours). */
export const RESTORE_DEADLINE_SECONDS = 4 * 3600;

/**
 * The Job's script (bash in the database image); $RESTORE_ARGS: pgBackRest's target options, one a
 * line; $RESTORE_PICK_*: how to choose the backup (pick.ts), empty when the options name it.
 */
export const RESTORE_SCRIPT = String.raw`set -euo pipefail
${PICK_FUNCTIONS}
mkdir -p /tmp/pgbackrest/lock /tmp/pgbackrest/log "$PGDATA"
chmod 0700 "$PGDATA"
# One option per line: a time target holds a space.
set --
while IFS= read -r a; do if [ -n "$a" ]; then set -- "$@" "$a"; fi; done <<<"$RESTORE_ARGS"
${PICK_STEP}
echo "restore: pgbackrest restore $*"
start=$(date +%s)
pgbackrest restore "$@"
restored=$(date +%s)
printf 'local all all trust\n' >/tmp/restore-hba.conf
postgres -D "$PGDATA" -c listen_addresses= -c unix_socket_directories=/tmp -c jit=off \
  -c hba_file=/tmp/restore-hba.conf -c archive_mode=on \
  -c 'archive_command=pgbackrest archive-push %p' &
pid=$!
until [ "$(psql -h /tmp -U "$POSTGRES_USER" -d postgres -AtXc 'select pg_is_in_recovery()' 2>/dev/null)" = f ]; do
  kill -0 "$pid" 2>/dev/null || { wait "$pid" || true; echo "restore: recovery failed (see the log above)" >&2; exit 1; }
  sleep 1
done
replayed=$(date +%s)
psql -h /tmp -U "$POSTGRES_USER" -d postgres -AtXq -v ON_ERROR_STOP=1 -v user="$POSTGRES_USER" -v pw="$POSTGRES_PASSWORD" <<'SQL'
ALTER ROLE :"user" PASSWORD :'pw';
CHECKPOINT;
SQL
timeline=$(psql -h /tmp -U "$POSTGRES_USER" -d postgres -AtXc 'select timeline_id from pg_control_checkpoint()')
kill -INT "$pid"
wait "$pid" || true
size=$(du -sb "$PGDATA" | cut -f1)
printf '{"ok":true,"bytes":%s,"restoreSeconds":%s,"replaySeconds":%s,"timeline":%s}' \
  "$size" "$((restored - start))" "$((replayed - restored))" "$timeline" >/dev/termination-log
echo "restore: done (timeline $timeline)"
`;

/** Labels of a restore's Job, pod and volume. */
export function restoreLabels(inp: PlatformInputs, restore: string): Record<string, string> {
  return { ...childLabels(inp), [LABEL_COMPONENT]: RESTORE_COMPONENT, [LABEL_RESTORE]: restore };
}

/** Controller reference to a restore (its Job, volume and follow-up backup). */
export function restoreOwner(r: KubeObject) {
  return {
    apiVersion: API_VERSION,
    kind: "ScalePlatformRestore",
    name: r.metadata.name ?? "",
    uid: r.metadata.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Controller reference to a platform (the restored volume after the cutover). */
export function platformOwner(p: KubeObject) {
  return { ...restoreOwner(p), kind: "ScalePlatform" };
}

/** The new database volume: the size and class of the current one. */
export function desiredRestoreClaim(
  inp: PlatformInputs,
  r: ScalePlatformRestore,
  name: string,
  storage: string,
): KubeObject {
  const storageClassName = inp.spec.database?.storageClassName;
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: {
      name,
      namespace: r.metadata.namespace,
      labels: restoreLabels(inp, r.metadata.name ?? ""),
      ownerReferences: [restoreOwner(r)],
    },
    spec: {
      accessModes: ["ReadWriteOnce"],
      ...(storageClassName ? { storageClassName } : {}),
      resources: { requests: { storage } },
    },
  };
}

/**
 * The Job restoring into `claim` with pgBackRest options `args`; with `pick`, it first chooses the
 * backup (--set) itself, `target` and `window` naming what it restores in a refusal.
 */
export function desiredRestoreJob(
  inp: PlatformInputs,
  r: ScalePlatformRestore,
  name: string,
  claim: string,
  args: string[],
  pick?: BackupPick & { target: string; window: string },
): KubeObject {
  const backup = inp.spec.backup;
  if (!backup) throw new Error("restore needs spec.backup");
  const ns = r.metadata.namespace ?? "";
  const secret = platformDatabaseSecretName(nameOf(inp));
  const fromSecret = (envName: string, key: string) => ({
    name: envName,
    valueFrom: { secretKeyRef: { name: secret, key } },
  });
  const repo = pgbackrestVolumes(backup);
  const labels = restoreLabels(inp, r.metadata.name ?? "");
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name, namespace: ns, labels, ownerReferences: [restoreOwner(r)] },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: RESTORE_DEADLINE_SECONDS,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: "Never",
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: 30,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 999,
            runAsGroup: 999,
            fsGroup: 999,
            seccompProfile: { type: "RuntimeDefault" },
          },
          containers: [
            {
              name: "restore",
              image: inp.config.images.database,
              imagePullPolicy: inp.config.imagePullPolicy,
              command: ["bash", "-c", RESTORE_SCRIPT],
              env: [
                fromSecret("POSTGRES_USER", DB_KEYS.user),
                fromSecret("POSTGRES_PASSWORD", DB_KEYS.password),
                { name: "PGDATA", value: `${DATA_MOUNT}/pgdata` },
                { name: "RESTORE_ARGS", value: args.join("\n") },
                { name: "RESTORE_PICK_TIMELINE", value: pick ? String(pick.timeline) : "" },
                { name: "RESTORE_PICK_BEFORE", value: pick?.before !== undefined ? String(pick.before) : "" },
                { name: "RESTORE_TARGET", value: pick?.target ?? "" },
                { name: "RESTORE_WINDOW", value: pick?.window ?? "" },
                ...pgbackrestEnv(backup, ns, nameOf(inp)),
              ],
              securityContext: RESTRICTED_CONTAINER,
              terminationMessagePolicy: "FallbackToLogsOnError",
              volumeMounts: [
                { name: "data", mountPath: DATA_MOUNT },
                { name: "tmp", mountPath: "/tmp" },
                ...repo.mounts,
              ],
            },
          ],
          volumes: [
            { name: "data", persistentVolumeClaim: { claimName: claim } },
            { name: "tmp", emptyDir: {} },
            ...repo.volumes,
          ],
        },
      },
    },
  };
}
