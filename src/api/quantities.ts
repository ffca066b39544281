import type { CustomFigures } from "./plans.ts";
import type { ScalePlatformSpec } from "./v1alpha1/scaleplatform.ts";

// Kubernetes quantities of a Custom plan's resources read as the numbers planBudget takes (the
// API server has validated them against the CRD's quantity pattern already).

/** The Custom plan's figures of a spec (undefined without spec.resources). */
export function parseCustom(spec: ScalePlatformSpec): CustomFigures | undefined {
  return spec.resources ? parseResources(spec.resources) : undefined;
}

/** The numbers planBudget takes from a Custom plan's resources (quantities already validated). */
export function parseResources(r: NonNullable<ScalePlatformSpec["resources"]>): CustomFigures {
  return {
    cpuMillis: cpuMillis(r.cpu),
    memoryMiB: Math.floor(bytes(r.memory) / 2 ** 20),
    storageGiB: Math.ceil(bytes(r.storage) / 2 ** 30),
    minReplicas: r.minReplicas,
    maxReplicas: r.maxReplicas,
  };
}

const SUFFIX: Record<string, number> = {
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

/** Bytes of a memory/storage quantity such as "8Gi" or "500M". */
export function bytes(q: string): number {
  const m = /^([0-9.]+)([A-Za-z]*)$/.exec(q);
  if (!m) throw new Error(`not a quantity: ${q}`);
  return Number(m[1]) * (SUFFIX[m[2] ?? ""] ?? Number.NaN);
}

/** Millicores of a CPU quantity such as "4" or "500m". */
export function cpuMillis(q: string): number {
  return q.endsWith("m") ? Number(q.slice(0, -1)) : Math.round(Number(q) * 1000);
}
