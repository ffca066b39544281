import type { KindDefinition } from "./kind.ts";
import { notificationKind } from "./notification.ts";
import { scalePlatformKind } from "./scaleplatform.ts";
import { scalePlatformBackupKind } from "./scaleplatformbackup.ts";
import { scalePlatformRestoreKind } from "./scaleplatformrestore.ts";
import { scheduledTaskKind } from "./scheduledtask.ts";
import { taskExecutionKind } from "./taskexecution.ts";

export * from "./kind.ts";

/**
 * Every kind of cronscale.io/v1alpha1, in the order the CRD generator writes them.
 * Kind owners add their `defineKind` export here (one import, one entry).
 */
export const allKinds: readonly KindDefinition[] = [
  scheduledTaskKind,
  taskExecutionKind,
  scalePlatformKind,
  scalePlatformBackupKind,
  scalePlatformRestoreKind,
  notificationKind,
];
