import type { TaskLanguage } from "../../api/v1alpha1/scheduledtask.ts";

// How each language runs inside the read-only, non-root task container.
//
// The script's run time is enforced inside the pod by coreutils `timeout -s KILL`: it is PID 1,
// runs the script as its child and SIGKILLs the child's whole process group when the timeout is
// reached, then exits 137. SIGKILL because a script (or a shell as PID 1) may ignore SIGTERM, and
// waiting out a grace period would overrun the timeout. The Job's activeDeadlineSeconds (timeout
// + start-up allowance) is only the backstop for a pod that never gets that far.

/** Directory where the script's ConfigMap is mounted (read-only). */
export const SCRIPT_DIR = "/task";
/** The only writable directory (an emptyDir): HOME, TMPDIR and caches live here. */
export const WORK_DIR = "/tmp";

/** Per-language file name, command and environment. */
export interface LanguageRuntime {
  /** Key in the ConfigMap, i.e. file name under SCRIPT_DIR (Go needs `.go`, Bun picks TS by `.ts`). */
  file: string;
  /** Container command for a script with this timeout. */
  command(timeoutSeconds: number): string[];
  /** Extra environment (before the user's, so users may override). */
  env: { name: string; value: string }[];
  /** Start-up seconds this language needs beyond the configured allowance (Go compiles first). */
  extraStartupSeconds: number;
}

/**
 * Where a Go image may ship a pre-built build cache (the standard library compiled with the flags
 * below); copied into the writable GOCACHE before compiling, it turns ~15 CPU-seconds of
 * compiling the standard library into about one. Optional: without it Go still works, slower.
 */
export const GO_CACHE_SEED = "/usr/local/go/cronscale-cache-seed";

function killAfter(timeoutSeconds: number, argv: string[]): string[] {
  return ["timeout", "-s", "KILL", String(timeoutSeconds), ...argv];
}

/** Runtimes by language. */
export const LANGUAGE_RUNTIMES: Record<TaskLanguage, LanguageRuntime> = {
  Bash: {
    file: "script.sh",
    command: (t) => killAfter(t, ["bash", `${SCRIPT_DIR}/script.sh`]),
    env: [],
    extraStartupSeconds: 0,
  },
  Python: {
    file: "script.py",
    // -u: unbuffered, so output written just before a kill or a crash is not lost.
    command: (t) => killAfter(t, ["python3", "-u", `${SCRIPT_DIR}/script.py`]),
    env: [
      { name: "PYTHONDONTWRITEBYTECODE", value: "1" },
      { name: "PYTHONUNBUFFERED", value: "1" },
    ],
    extraStartupSeconds: 0,
  },
  Go: {
    file: "main.go",
    // Compile first (start-up, covered by the start-up allowance), then time only the program.
    command: (t) => [
      "sh",
      "-c",
      `mkdir -p "$GOCACHE" && { [ ! -d ${GO_CACHE_SEED} ] || cp -r ${GO_CACHE_SEED}/. "$GOCACHE"/; } && ` +
        `go build -o ${WORK_DIR}/task ${SCRIPT_DIR}/main.go && exec timeout -s KILL ${t} ${WORK_DIR}/task`,
    ],
    env: [
      { name: "GOCACHE", value: `${WORK_DIR}/.cache/go-build` },
      { name: "GOPATH", value: `${WORK_DIR}/go` },
      { name: "GOTOOLCHAIN", value: "local" },
      { name: "GOTELEMETRY", value: "off" },
      { name: "CGO_ENABLED", value: "0" },
    ],
    // Compiling the standard library from a cold cache takes ~15 CPU-seconds: a minute on Micro.
    extraStartupSeconds: 180,
  },
  Bun: {
    file: "script.ts",
    command: (t) => killAfter(t, ["bun", "run", `${SCRIPT_DIR}/script.ts`]),
    env: [
      { name: "BUN_RUNTIME_TRANSPILER_CACHE_PATH", value: "0" },
      { name: "BUN_INSTALL_CACHE_DIR", value: `${WORK_DIR}/.bun-cache` },
      { name: "DO_NOT_TRACK", value: "1" },
    ],
    extraStartupSeconds: 0,
  },
};
