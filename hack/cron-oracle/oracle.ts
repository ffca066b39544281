import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, renameSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

// Runs the robfig/cron v3 oracle (main.go) over a batch of requests in one process.

/** A request to the oracle; see main.go. */
export type OracleRequest =
  | { op: "next"; expr: string; zone: string; from: string; count: number }
  | { op: "parse"; expr: string }
  | { op: "zone"; zone: string }
  | { op: "offsets"; zone: string; from: string; to: string };

/** The oracle's answer to one request. */
export interface OracleResponse {
  times?: string[];
  zero?: boolean;
  error?: string;
  /** [unix seconds, UTC offset seconds] at "from" and after each change (op "offsets"). */
  offsets?: [number, number][];
}

/** Why the oracle cannot run here, or undefined when Go is available. */
export function oracleUnavailable(): string | undefined {
  const r = spawnSync("go", ["version"], { encoding: "utf8" });
  return r.status === 0 ? undefined : "go is not installed (the robfig/cron oracle is a Go program)";
}

let built: string | undefined;

/** Builds (or finds in the cache) the oracle binary and returns its path. */
export function oraclePath(): string {
  if (!built) {
    const script = fileURLToPath(new URL("./build.sh", import.meta.url));
    built = execFileSync("bash", [script], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
  }
  return built;
}

let zoneDir: string | undefined;

/**
 * Go's own tzdata as a directory of TZif files (cached beside the oracle binary, per binary):
 * the test points both the oracle and src/cron (through $ZONEINFO, which both read first) at it,
 * so next-run times are compared on the very same zone data.
 */
export function zoneinfoDir(): string {
  if (!zoneDir) {
    const bin = oraclePath();
    const dir = `${bin}.zoneinfo`;
    if (!existsSync(`${dir}/UTC`)) {
      const tmp = `${dir}.tmp.${process.pid}`;
      rmSync(tmp, { recursive: true, force: true });
      execFileSync(bin, ["-export-zones", tmp], { stdio: ["ignore", "ignore", "inherit"] });
      rmSync(dir, { recursive: true, force: true });
      renameSync(tmp, dir);
    }
    zoneDir = dir;
  }
  return zoneDir;
}

/** The oracle's environment: $ZONEINFO names the exported Go tzdata. */
export function oracleEnv(): NodeJS.ProcessEnv {
  return { ...process.env, ZONEINFO: zoneinfoDir() };
}

/** Sends every request through one oracle process and returns the answers in order. */
export function runOracle(requests: OracleRequest[]): OracleResponse[] {
  const input = `${requests.map((r) => JSON.stringify(r)).join("\n")}\n`;
  const r = spawnSync(oraclePath(), [], {
    input,
    encoding: "utf8",
    env: oracleEnv(),
    maxBuffer: 1 << 30,
  });
  if (r.status !== 0) throw new Error(`cron-oracle failed (${r.status}): ${r.stderr}`);
  const lines = r.stdout.split("\n").filter((l) => l !== "");
  if (lines.length !== requests.length) {
    throw new Error(`cron-oracle answered ${lines.length} of ${requests.length} requests`);
  }
  return lines.map((l) => JSON.parse(l) as OracleResponse);
}

/** Zone names in the oracle's Go tzdata (what hack/cron-oracle/gen-zones.sh writes out). */
export function oracleZoneNames(): string[] {
  return execFileSync(oraclePath(), ["-list-zones"], { encoding: "utf8", env: oracleEnv() })
    .split("\n")
    .filter((l) => l !== "");
}
