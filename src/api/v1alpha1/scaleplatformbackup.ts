import { z } from "zod";
import type { KubeObject } from "../../runtime/types.ts";
import { conditionsSchema, observedGenerationSchema, timestamp } from "./common.ts";
import { defineKind } from "./kind.ts";

// ScalePlatformBackup: one on-demand backup of a platform (docs/backups.md, "Manual backups"), run by a
// Job like the scheduled ones. Its status is derived from that Job; deleting the resource deletes
// the Job, whose runner then sends SIGTERM to the pgBackRest process it started.

export const BACKUP_REQUEST_PHASES = ["Pending", "Running", "Succeeded", "Failed"] as const;

export const scalePlatformBackupSpecSchema = z
  .object({
    platformName: z
      .string()
      .min(1)
      .max(40)
      .regex(/^[a-z]([-a-z0-9]*[a-z0-9])?$/)
      .meta({
        "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "spec.platformName is immutable" }],
      })
      .describe("ScalePlatform (same namespace) to back up; it must have spec.backup."),
    type: z
      .enum(["full", "incr"])
      .default("full")
      .meta({ "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "spec.type is immutable" }] })
      .describe("full (default) or incr (changes since the platform's last backup). Immutable."),
  })
  .describe("Which platform to back up, and how.");

export const scalePlatformBackupStatusSchema = z
  .object({
    observedGeneration: observedGenerationSchema.optional(),
    phase: z
      .enum(BACKUP_REQUEST_PHASES)
      .optional()
      .describe("Pending (waiting for the platform), Running (its Job runs), Succeeded or Failed."),
    jobName: z.string().max(253).optional().describe("Job that runs the backup."),
    startTime: timestamp("When the Job started.").optional(),
    completionTime: timestamp("When the Job finished.").optional(),
    backupLabel: z
      .string()
      .max(64)
      .optional()
      .describe("pgBackRest label of the backup taken (a restore point), once Succeeded."),
    message: z.string().max(1024).optional().describe("What it waits for, or why it failed."),
    conditions: conditionsSchema(
      "Complete (True once Succeeded, False with the reason otherwise).",
    ).optional(),
  })
  .describe("Progress and result of the backup.");

export const scalePlatformBackupKind = defineKind({
  kind: "ScalePlatformBackup",
  plural: "scaleplatformbackups",
  singular: "scaleplatformbackup",
  shortNames: ["splbk"],
  categories: ["cronscale"],
  scope: "Namespaced",
  description:
    "ScalePlatformBackup takes one on-demand backup of a ScalePlatform (advised before updates, configuration changes, migrations). Deleting it while it runs deletes its Job, whose runner asks pgBackRest to stop.",
  specSchema: scalePlatformBackupSpecSchema,
  statusSchema: scalePlatformBackupStatusSchema,
  printerColumns: [
    { name: "Platform", type: "string", jsonPath: ".spec.platformName", description: "Platform backed up." },
    { name: "Type", type: "string", jsonPath: ".spec.type", description: "full or incr." },
    { name: "Phase", type: "string", jsonPath: ".status.phase", description: "Progress." },
    { name: "Backup", type: "string", jsonPath: ".status.backupLabel", description: "Backup taken." },
  ],
  topLevelValidations: [
    {
      // The Job is named <name>-bk: 60 keeps it a valid label value (63).
      rule: "self.metadata.name.size() <= 60",
      message: "metadata.name must be at most 60 characters",
    },
  ],
});

export type ScalePlatformBackupSpec = z.output<typeof scalePlatformBackupSpecSchema>;
export type ScalePlatformBackupStatus = z.output<typeof scalePlatformBackupStatusSchema>;
/** A ScalePlatformBackup as read from the API server. */
export type ScalePlatformBackup = KubeObject & {
  spec: ScalePlatformBackupSpec;
  status?: ScalePlatformBackupStatus;
};
