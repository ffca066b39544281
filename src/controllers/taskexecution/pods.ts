import type { KubeObject } from "../../runtime/types.ts";
import type { RunFacts } from "./classify.ts";

// The few Job and Pod fields the capture reads, typed loosely (raw JSON from the API server).

/** A Job as JSON. */
export interface JobLike extends KubeObject {
  spec?: { template?: { metadata?: { annotations?: Record<string, string> } } };
  status?: {
    startTime?: string;
    completionTime?: string;
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: string;
    }[];
  };
}

interface ContainerStatus {
  name: string;
  state?: {
    terminated?: {
      exitCode: number;
      reason?: string;
      message?: string;
      startedAt?: string;
      finishedAt?: string;
    };
    waiting?: { reason?: string; message?: string };
    running?: { startedAt?: string };
  };
}

/** A Pod as JSON. */
export interface PodLike extends KubeObject {
  spec?: {
    containers?: {
      name: string;
      env?: { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
    }[];
  };
  status?: { containerStatuses?: ContainerStatus[] };
}

/** Facts of a Job (and its pod), plus whether the Job finished. */
export function jobFacts(
  job: JobLike,
  pod?: PodLike,
  container?: string,
): Omit<RunFacts, "timeoutSeconds" | "plan"> & { finished: boolean } {
  const conds = job.status?.conditions ?? [];
  const failed = conds.find((c) => c.type === "Failed" && c.status === "True");
  const complete = conds.find((c) => c.type === "Complete" && c.status === "True");
  const cs = pod?.status?.containerStatuses?.find((s) => s.name === container);
  return {
    finished: failed !== undefined || complete !== undefined,
    terminated: cs?.state?.terminated,
    waitingReason: cs?.state?.waiting?.reason,
    waitingMessage: cs?.state?.waiting?.message,
    jobFailedReason: failed?.reason,
    jobFailedMessage: failed?.message,
    jobStartTime: job.status?.startTime,
    jobCompletionTime:
      job.status?.completionTime ?? failed?.lastTransitionTime ?? complete?.lastTransitionTime,
  };
}

/** Secret keys a pod's env refers to. */
export function secretRefsOf(pod: PodLike): { name: string; key: string }[] {
  const out: { name: string; key: string }[] = [];
  for (const c of pod.spec?.containers ?? []) {
    for (const e of c.env ?? []) {
      const r = e.valueFrom?.secretKeyRef;
      if (r) out.push({ name: r.name, key: r.key });
    }
  }
  return out;
}
