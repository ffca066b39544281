import type { TaskPlan } from "../../api/task-plans.ts";
import { RUNNER_REPORT_TAG } from "./runtimes.ts";

// Billing of one run (by execution time, rounded to the nearest second: docs/scheduled-tasks.md, "Billing"). Pure.
//
// The measure is the runner's (scheduledtask/runtimes.ts): script start to end in milliseconds,
// read from the container's termination message. Container timestamps (one-second granularity)
// are the fallback when there is no report (a pod killed by the Job deadline, an image without
// bash), and the check on the report: the script's process could write the termination message
// itself, so a report that disagrees with the container's own lifetime by more than the
// timestamps' error is not believed.

/** Prices and currency of task runs (operator config `controllers.taskExecution.billing`). */
export interface BillingConfig {
  /** ISO 4217 code the prices are in. */
  currency: string;
  /** Price of one billed second per plan, as a decimal string (at most 9 decimals). */
  pricePerSecond: Record<TaskPlan, string>;
}

/** Defaults: the price of a plan doubles with its resources (Micro 0.25 vCPU … Large 2 vCPU). */
export const DEFAULT_BILLING: BillingConfig = {
  currency: "USD",
  pricePerSecond: { Micro: "0.000004", Small: "0.000008", Medium: "0.000016", Large: "0.000032" },
};

/** What the runner reported. */
export interface RunnerReport {
  /** Script run time in ms; undefined when the script never started (the build failed). */
  runMs?: number;
  /** Compile (build) time in ms, Go only. */
  compileMs?: number;
}

const REPORT = new RegExp(`^${RUNNER_REPORT_TAG.replace("/", "\\/")} run-ms=(\\d*) compile-ms=(\\d*)$`, "m");

/** Parses the runner's report from a termination message; undefined when there is none. */
export function parseRunnerReport(message: string | undefined): RunnerReport | undefined {
  const m = message ? REPORT.exec(message) : null;
  if (!m) return undefined;
  const num = (s: string | undefined) => (s ? Number(s) : undefined);
  return { runMs: num(m[1]), compileMs: num(m[2]) };
}

/** How a run's billed time was measured. */
export type MeasuredBy = "Runner" | "ContainerTimes" | "None";

/** The billing facts of one run. */
export interface RunBilling {
  measuredBy: MeasuredBy;
  /** Script run time in ms (runner), or the container's lifetime in whole seconds × 1000. */
  runMilliseconds?: number;
  compileMilliseconds?: number;
  /** runMilliseconds rounded to the nearest second (half up). */
  billedSeconds: number;
}

/**
 * How far the runner's figure may be from the container's lifetime: the timestamps are truncated
 * to the second (±1 s on the difference), plus the runner's own start and the interpreter's.
 */
const TOLERANCE_MS = 2500;

/** Measures one run from the runner's report and the container's start/finish timestamps. */
export function measureRun(
  report: RunnerReport | undefined,
  startedAt?: string,
  finishedAt?: string,
): RunBilling {
  const containerMs =
    startedAt && finishedAt ? Math.max(0, Date.parse(finishedAt) - Date.parse(startedAt)) : undefined;
  const fromContainer = (): RunBilling =>
    containerMs === undefined || !Number.isFinite(containerMs)
      ? { measuredBy: "None", billedSeconds: 0 }
      : {
          measuredBy: "ContainerTimes",
          runMilliseconds: containerMs,
          billedSeconds: Math.round(containerMs / 1000),
        };
  if (!report) return fromContainer();
  const measured = (report.runMs ?? 0) + (report.compileMs ?? 0);
  if (containerMs !== undefined && Number.isFinite(containerMs) && measured > containerMs + TOLERANCE_MS)
    return fromContainer();
  if (containerMs !== undefined && Number.isFinite(containerMs) && measured < containerMs - TOLERANCE_MS)
    return fromContainer();
  const out: RunBilling = {
    measuredBy: "Runner",
    billedSeconds: report.runMs === undefined ? 0 : Math.round(report.runMs / 1000),
  };
  if (report.runMs !== undefined) out.runMilliseconds = report.runMs;
  if (report.compileMs !== undefined) out.compileMilliseconds = report.compileMs;
  return out;
}

/** Scale of prices and costs: 9 decimals, in integers (no binary floating point in money). */
const SCALE = 9;

/** A decimal string → integer units of 10^-9; throws on anything else. */
export function parseDecimal(text: string): bigint {
  const m = /^(\d+)(?:\.(\d{1,9}))?$/.exec(text.trim());
  if (!m) throw new Error(`"${text}" is not a decimal number with at most ${SCALE} decimals`);
  return BigInt(m[1] ?? "0") * 10n ** BigInt(SCALE) + BigInt((m[2] ?? "").padEnd(SCALE, "0"));
}

/** Integer units of 10^-9 → the shortest decimal string with at least 2 decimals ("0.000012"). */
export function formatDecimal(units: bigint): string {
  const whole = units / 10n ** BigInt(SCALE);
  const frac = (units % 10n ** BigInt(SCALE)).toString().padStart(SCALE, "0").replace(/0+$/, "");
  return `${whole}.${frac.padEnd(2, "0")}`;
}

/** Cost of `billedSeconds` on `plan`, as a decimal string in the config's currency. */
export function runCost(config: BillingConfig, plan: TaskPlan, billedSeconds: number): string {
  return formatDecimal(parseDecimal(config.pricePerSecond[plan]) * BigInt(billedSeconds));
}

/** Sum of decimal strings (costs), exactly. */
export function sumCosts(costs: Iterable<string>): string {
  let total = 0n;
  for (const c of costs) total += parseDecimal(c);
  return formatDecimal(total);
}
