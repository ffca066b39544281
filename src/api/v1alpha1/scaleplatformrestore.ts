import { z } from "zod";
import type { KubeObject } from "../../runtime/types.ts";
import { conditionsSchema, observedGenerationSchema, timestamp } from "./common.ts";
import { defineKind } from "./kind.ts";

// ScalePlatformRestore: brings a platform's database back to a backup, a point in time or the
// latest archived state (docs/backups.md, "Restore"). pgBackRest restores
// into a new volume by a Job while the old database keeps serving; then a short cutover switches
// the database to the new volume. The old volume is kept until confirmed or its TTL passes.

export const RESTORE_PHASES = ["Pending", "Restoring", "CuttingOver", "Succeeded", "Failed"] as const;

const immutable = (field: string) => ({
  "x-kubernetes-validations": [{ rule: "self == oldSelf", message: `spec.${field} is immutable` }],
});

export const scalePlatformRestoreSpecSchema = z
  .object({
    platformName: z
      .string()
      .min(1)
      .max(40)
      .regex(/^[a-z]([-a-z0-9]*[a-z0-9])?$/)
      .meta(immutable("platformName"))
      .describe("ScalePlatform (same namespace) whose database is restored; it must have spec.backup."),
    targetTime: timestamp(
      "Point in time to restore to (RFC 3339): the state as of the last transaction committed at or before it. It must lie in the platform's recoverable window (status.backup.recoverableFrom up to now), else the restore is refused with the window in its message. Immutable; leave targetTime and backupLabel empty for the latest archived state.",
    )
      .meta(immutable("targetTime"))
      .optional(),
    backupLabel: z
      .string()
      .max(64)
      .regex(/^[0-9]{8}-[0-9]{6}F(_[0-9]{8}-[0-9]{6}[DI])?$/)
      .meta(immutable("backupLabel"))
      .optional()
      .describe(
        "pgBackRest label of the backup to restore (one of status.backup.recentBackups of the platform): the state at the end of that backup. Immutable.",
      ),
    releaseOldVolume: z
      .boolean()
      .default(false)
      .describe(
        "Set true once the restored data is confirmed: the database volume used before the restore is deleted. Until then (or until oldVolumeTTLHours pass) it is kept.",
      ),
    oldVolumeTTLHours: z
      .int()
      .min(1)
      .max(24 * 90)
      .default(72)
      .describe(
        "Hours after the cutover the old database volume is kept when not released earlier. Default 72.",
      ),
    cutoverTimeoutSeconds: z
      .int()
      .min(30)
      .max(3600)
      .default(300)
      .describe(
        "Seconds the cutover may take, from the app scaled to zero to the app ready again on the restored database. Past it the cutover is rolled back: the database returns to the volume it used before, the app comes back, and the restore ends Failed with reason CutoverTimedOut. Default 300.",
      ),
  })
  .meta({
    "x-kubernetes-validations": [
      {
        rule: "!(has(self.targetTime) && has(self.backupLabel))",
        message:
          "spec.targetTime and spec.backupLabel are exclusive: set one, or neither for the latest state",
      },
      {
        rule: "has(self.targetTime) == has(oldSelf.targetTime) && has(self.backupLabel) == has(oldSelf.backupLabel)",
        message: "the restore target (spec.targetTime, spec.backupLabel) is immutable",
      },
    ],
  })
  .describe("Which platform to restore and to what; what to do with the old volume.");

export const scalePlatformRestoreStatusSchema = z
  .object({
    observedGeneration: observedGenerationSchema.optional(),
    phase: z
      .enum(RESTORE_PHASES)
      .optional()
      .describe(
        "Pending (waiting for the platform), Restoring (the Job fills the new volume; the old database serves), CuttingOver (the database switches to the new volume), Succeeded or Failed (the platform untouched).",
      ),
    message: z.string().max(1024).optional().describe("What it does or waits for, or why it failed."),
    target: z
      .string()
      .max(128)
      .optional()
      .describe("The target as pgBackRest takes it: latest, a time, or a backup label."),
    recoverableWindow: z
      .string()
      .max(128)
      .optional()
      .describe("The platform's recoverable window when the target was checked."),
    jobName: z.string().max(253).optional().describe("Job running pgbackrest restore into the new volume."),
    volumeClaimName: z
      .string()
      .max(253)
      .optional()
      .describe("The new volume (PVC) the data is restored into."),
    oldVolumeClaimName: z
      .string()
      .max(253)
      .optional()
      .describe("The database volume used before the cutover, kept until released or its TTL passes."),
    oldVolumeReleaseTime: timestamp(
      "When the old volume was (or will be, if not released earlier) deleted.",
    ).optional(),
    oldVolumeReleased: z.boolean().optional().describe("Whether the old volume has been deleted."),
    startTime: timestamp("When the restore Job started.").optional(),
    timeline: z
      .int()
      .min(1)
      .optional()
      .describe(
        "PostgreSQL timeline the restored database was promoted on (reported by the restore Job); once Succeeded, the platform serves on it.",
      ),
    cutoverStartTime: timestamp(
      "When the cutover started (the app scaled to zero, then the old database stopped).",
    ).optional(),
    appReplicas: z
      .int()
      .min(0)
      .optional()
      .describe("Replicas of the app before the cutover scaled it to zero; given back after it."),
    rollbackStartTime: timestamp(
      "When a cutover that did not get ready in spec.cutoverTimeoutSeconds started rolling back to the old volume.",
    ).optional(),
    completionTime: timestamp("When the restored database served again (or the restore failed).").optional(),
    downtimeSeconds: z
      .number()
      .min(0)
      .optional()
      .describe(
        "Seconds the shop was unavailable: from the cutover's start (app scaled to zero) to the app ready again on the restored database.",
      ),
    backupRequestName: z
      .string()
      .max(253)
      .optional()
      .describe("ScalePlatformBackup taken right after the cutover (a full backup of the new timeline)."),
    conditions: conditionsSchema(
      "Valid (the target lies in the recoverable window), Complete (True once Succeeded, False with the reason otherwise, e.g. CutoverTimedOut after a rollback).",
    ).optional(),
  })
  .describe("Progress, measured downtime and result of the restore.");

export const scalePlatformRestoreKind = defineKind({
  kind: "ScalePlatformRestore",
  plural: "scaleplatformrestores",
  singular: "scaleplatformrestore",
  shortNames: ["splrs"],
  categories: ["cronscale"],
  scope: "Namespaced",
  description:
    "ScalePlatformRestore restores a ScalePlatform's database to a named backup, a point in time, or the latest archived state: into a new volume while the old database serves, then a short cutover with the downtime reported. A failed restore leaves the platform untouched.",
  specSchema: scalePlatformRestoreSpecSchema,
  statusSchema: scalePlatformRestoreStatusSchema,
  printerColumns: [
    { name: "Platform", type: "string", jsonPath: ".spec.platformName", description: "Platform restored." },
    { name: "Target", type: "string", jsonPath: ".status.target", description: "latest, time or backup." },
    { name: "Phase", type: "string", jsonPath: ".status.phase", description: "Progress." },
    {
      name: "Downtime",
      type: "number",
      jsonPath: ".status.downtimeSeconds",
      description: "Seconds of cutover downtime.",
    },
  ],
  topLevelValidations: [
    {
      // The Job is `<name>-restore`, the volume `<platform>-db-<name>`: both stay valid names.
      rule: "self.metadata.name.size() <= 40",
      message: "metadata.name must be at most 40 characters",
    },
  ],
});

export type ScalePlatformRestoreSpec = z.output<typeof scalePlatformRestoreSpecSchema>;
export type ScalePlatformRestoreStatus = z.output<typeof scalePlatformRestoreStatusSchema>;
/** A ScalePlatformRestore as read from the API server. */
export type ScalePlatformRestore = KubeObject & {
  spec: ScalePlatformRestoreSpec;
  status?: ScalePlatformRestoreStatus;
};
