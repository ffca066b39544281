// The platform plan table and how a plan's budget is split between the app and its
// database. This is the one place those numbers live; the CRD, the ScalePlatform builders and
// the README all read them from here.
//
// Split (why): the database is a single PostgreSQL pod that cannot scale out, the app scales
// horizontally under its HPA. The app gets 3/4 of CPU and memory, the database 1/4, all of the
// plan's storage is the database volume. The app's share is divided by the HPA's maxReplicas, so
// at full scale-out the app uses exactly its share: the plan total is a hard ceiling.

/** Fixed plans, lowest tier first (the order admission uses to refuse downgrades). */
export const PLATFORM_PLANS = ["Standard", "Professional", "Enterprise", "Custom"] as const;
export type PlatformPlan = (typeof PLATFORM_PLANS)[number];

/** Whole-plan figures. cpu in millicores, memory and storage in MiB/GiB. */
export interface PlanFigures {
  cpuMillis: number;
  memoryMiB: number;
  storageGiB: number;
  /** Product limit; undefined = unlimited. */
  maxProducts?: number;
  concurrentUsers: string;
  minReplicas: number;
  maxReplicas: number;
}

/** Custom has no fixed figures: they come from `spec.resources`. */
export const PLAN_TABLE: Readonly<Record<Exclude<PlatformPlan, "Custom">, PlanFigures>> = {
  Standard: {
    cpuMillis: 4000,
    memoryMiB: 8192,
    storageGiB: 100,
    maxProducts: 10_000,
    concurrentUsers: "1,000",
    minReplicas: 1,
    maxReplicas: 3,
  },
  Professional: {
    cpuMillis: 8000,
    memoryMiB: 16384,
    storageGiB: 250,
    maxProducts: 50_000,
    concurrentUsers: "5,000",
    minReplicas: 1,
    maxReplicas: 4,
  },
  Enterprise: {
    cpuMillis: 16000,
    memoryMiB: 32768,
    storageGiB: 500,
    concurrentUsers: "20,000+",
    minReplicas: 2,
    maxReplicas: 6,
  },
};

/** Share of CPU and memory that goes to the app (the rest is the database's). */
export const APP_SHARE = 0.75;

/** Features included in every plan, as reported in status.features. */
export const INCLUDED_FEATURES = [
  "Automatic SSL certificates",
  "Daily backups",
  "DDoS protection",
  "24/7 monitoring",
  "Automatic scaling",
  "Email support",
] as const;

/** Explicit resources of a Custom plan, already parsed to numbers. */
export interface CustomFigures {
  cpuMillis: number;
  memoryMiB: number;
  storageGiB: number;
  minReplicas?: number;
  maxReplicas?: number;
}

/** Limits of one pod, plus the replica bounds for the app. */
export interface PlanBudget {
  plan: PlatformPlan;
  total: { cpuMillis: number; memoryMiB: number; storageGiB: number };
  /** Per app pod; the HPA scales between minReplicas and maxReplicas. */
  app: { cpuMillis: number; memoryMiB: number; minReplicas: number; maxReplicas: number };
  database: { cpuMillis: number; memoryMiB: number; storageGiB: number };
}

/** The budget of a plan, split between app pods and the database (pure). */
export function planBudget(plan: PlatformPlan, custom?: CustomFigures): PlanBudget {
  const figures: CustomFigures & { minReplicas: number; maxReplicas: number } =
    plan === "Custom"
      ? {
          ...requireCustom(custom),
          minReplicas: custom?.minReplicas ?? 1,
          maxReplicas: custom?.maxReplicas ?? 3,
        }
      : PLAN_TABLE[plan];
  const appCpu = Math.floor(figures.cpuMillis * APP_SHARE);
  const appMem = Math.floor(figures.memoryMiB * APP_SHARE);
  return {
    plan,
    total: { cpuMillis: figures.cpuMillis, memoryMiB: figures.memoryMiB, storageGiB: figures.storageGiB },
    app: {
      cpuMillis: Math.floor(appCpu / figures.maxReplicas),
      memoryMiB: Math.floor(appMem / figures.maxReplicas),
      minReplicas: figures.minReplicas,
      maxReplicas: figures.maxReplicas,
    },
    database: {
      cpuMillis: figures.cpuMillis - appCpu,
      memoryMiB: figures.memoryMiB - appMem,
      storageGiB: figures.storageGiB,
    },
  };
}

function requireCustom(custom: CustomFigures | undefined): CustomFigures {
  // Admission (CEL) already requires spec.resources for Custom; this guards callers in code.
  if (!custom) throw new Error("plan Custom needs explicit resources");
  return custom;
}

/** Requests as a fraction of limits, so plans sized for production still schedule on small nodes. */
export function requestsFrom(
  limits: { cpuMillis: number; memoryMiB: number },
  fraction: number,
): { cpuMillis: number; memoryMiB: number } {
  return {
    cpuMillis: Math.max(10, Math.floor(limits.cpuMillis * fraction)),
    memoryMiB: Math.max(32, Math.floor(limits.memoryMiB * fraction)),
  };
}

/**
 * Default requests fraction. 0.1 makes Standard's app pod request 100m/204Mi and its database
 * 100m/204Mi, which fits a 2-core dev node; a production cluster should set 1.0 in the operator
 * config (requests = limits: Guaranteed QoS, the plan really reserved).
 */
export const DEFAULT_REQUEST_FRACTION = 0.1;

/** Rank for "higher tier" comparisons; matches the CEL transition rule on spec.plan. */
export function planRank(plan: PlatformPlan): number {
  return PLATFORM_PLANS.indexOf(plan);
}

/** Kubernetes quantity strings for millicores / MiB / GiB. */
export const toQuantity = {
  cpu: (m: number) => (m % 1000 === 0 ? String(m / 1000) : `${m}m`),
  memory: (mib: number) => (mib % 1024 === 0 ? `${mib / 1024}Gi` : `${mib}Mi`),
  storage: (gib: number) => `${gib}Gi`,
};

/**
 * Edge protection by plan (src/controllers/scaleplatform/README.md, "Edge protection"), enforced per client address at the
 * Ingress controller in front of the app (see docs of the ScalePlatform controller):
 * `ratePerSecond` sustained requests per second with bursts up to `burst`, `maxInFlight`
 * concurrent requests, `maxBodyMiB` request body size. Custom gets the highest tier's limits.
 */
export interface EdgeLimits {
  ratePerSecond: number;
  burst: number;
  maxInFlight: number;
  maxBodyMiB: number;
}

export const EDGE_LIMITS: Readonly<Record<Exclude<PlatformPlan, "Custom">, EdgeLimits>> = {
  Standard: { ratePerSecond: 50, burst: 100, maxInFlight: 20, maxBodyMiB: 10 },
  Professional: { ratePerSecond: 100, burst: 200, maxInFlight: 50, maxBodyMiB: 25 },
  Enterprise: { ratePerSecond: 250, burst: 500, maxInFlight: 100, maxBodyMiB: 50 },
};

/** The edge limits of a plan (Custom: Enterprise's). */
export function edgeLimits(plan: PlatformPlan): EdgeLimits {
  return EDGE_LIMITS[plan === "Custom" ? "Enterprise" : plan];
}
