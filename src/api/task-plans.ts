/**
 * Resource plans of scheduled tasks (spec 8.1). One table, used by the CRD schema (enum), the
 * pod builder (requests/limits) and the status (`resources` shown to users).
 *
 * Requests equal limits: a plan is a guaranteed slice that is billed by execution time, so the
 * pod gets the Guaranteed QoS class — it is never throttled below, nor evicted before, what the
 * user pays for, and the scheduler only places it where the whole plan fits.
 */

/** Plan names in the order users see them. */
export const TASK_PLANS = ["Micro", "Small", "Medium", "Large"] as const;

/** One of the four task plans. */
export type TaskPlan = (typeof TASK_PLANS)[number];

/** What a plan gives a pod, in Kubernetes quantities and in the units users read. */
export interface TaskPlanResources {
  /** CPU as a Kubernetes quantity (requests = limits). */
  cpu: string;
  /** Memory as a Kubernetes quantity (requests = limits). */
  memory: string;
  /** vCPU for display ("0.25"). */
  vcpu: string;
  /** Memory for display, in the units of the spec ("256 MB"). */
  memoryDisplay: string;
  /** Memory in MiB, for messages and arithmetic. */
  memoryMiB: number;
}

// The spec writes "256 MB" and "1 GB"; Kubernetes gets the binary units (Mi/Gi), which is what
// users of a 256 MB plan expect to be able to allocate.
const TABLE: Record<TaskPlan, TaskPlanResources> = {
  Micro: { cpu: "250m", memory: "256Mi", vcpu: "0.25", memoryDisplay: "256 MB", memoryMiB: 256 },
  Small: { cpu: "500m", memory: "512Mi", vcpu: "0.5", memoryDisplay: "512 MB", memoryMiB: 512 },
  Medium: { cpu: "1", memory: "1Gi", vcpu: "1", memoryDisplay: "1 GB", memoryMiB: 1024 },
  Large: { cpu: "2", memory: "2Gi", vcpu: "2", memoryDisplay: "2 GB", memoryMiB: 2048 },
};

/** Resources of a plan. */
export function planResources(plan: TaskPlan): TaskPlanResources {
  return TABLE[plan];
}
