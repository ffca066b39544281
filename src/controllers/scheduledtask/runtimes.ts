import type { TaskLanguage } from "../../api/v1alpha1/scheduledtask.ts";

// How each language runs inside the read-only, non-root task container.
//
// PID 1 is the runner (RUNNER_SCRIPT below, bash: present in every task image), which times the
// script with bash's $EPOCHREALTIME (microseconds, no fork), runs it under coreutils
// `timeout -s KILL`, and writes what it measured to the container's termination message, which
// the kubelet copies into the pod status (`state.terminated.message`) where the operator reads it
// when recording the run (billing.ts). That is the billing measure: script start to
// script end in milliseconds; for Go, the compile step before it is timed and reported separately
// and not billed. Container timestamps have one-second granularity, too coarse to bill by.
//
// `timeout -s KILL` SIGKILLs the script's whole process group at the timeout and exits 137.
// SIGKILL because a script may ignore SIGTERM, and waiting out a grace period would overrun the
// timeout. The Job's activeDeadlineSeconds (timeout + start-up allowance) is only the backstop
// for a pod that never gets that far. A SIGTERM to the pod (Replace policy, deletion) reaches the
// runner as PID 1, which passes it on to the script.

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
  /** Files besides the script in the script's ConfigMap (file name → content). */
  extraFiles?: Record<string, string>;
}

/**
 * Where a Go image may ship a pre-built build cache (the standard library compiled with the flags
 * below); copied into the writable GOCACHE before compiling, it turns ~15 CPU-seconds of
 * compiling the standard library into about one. Optional: without it Go still works, slower.
 */
export const GO_CACHE_SEED = "/usr/local/go/cronscale-cache-seed";

/** First word of the runner's termination message (the format's name and version). */
export const RUNNER_REPORT_TAG = "cronscale-runner/v1";

/**
 * The runner, run as
 * `bash -c RUNNER_SCRIPT cronscale-runner <report> <start> <timeout> <build> <argv...>`.
 * `<report>` is the file the report goes to (the termination message, TERMINATION_LOG).
 * `<start>` is a file an interpreter may write its own start to (Unix microseconds) once it is
 * initialised and about to run the user's code (Python does, see PYTHON_STARTER): the run is then
 * timed from there, so the interpreter's start-up, slow on a small CPU share, is not billed. It
 * is believed only within 2 s after the runner started the script (a script writing it itself can
 * shave at most that off, and the container timestamps bound the rest: billing.ts).
 * `<build>` is a shell command run (and timed) before the script, or empty. Exit status: the
 * build's when it fails, else the script's (137 when killed at the timeout). Report, one line:
 * `cronscale-runner/v1 run-ms=<ms> compile-ms=<ms>` (run-ms empty when the script never started).
 */
// biome-ignore-start lint/suspicious/noTemplateCurlyInString: bash parameter expansions, not JS
export const RUNNER_SCRIPT = [
  "out=$1 start=$2 limit=$3 build=$4; shift 4",
  'rm -f "$start"',
  `report() { printf '${RUNNER_REPORT_TAG} run-ms=%s compile-ms=%s\\n' "$1" "$2" >"$out" 2>/dev/null; }`,
  'compile=""',
  'if [ -n "$build" ]; then',
  "  c0=${EPOCHREALTIME//[!0-9]/}",
  '  bash -c "$build"; rc=$?',
  "  c1=${EPOCHREALTIME//[!0-9]/}; compile=$(( (c1 - c0 + 500) / 1000 ))",
  '  if [ "$rc" -ne 0 ]; then report "" "$compile"; exit "$rc"; fi',
  "fi",
  // In the background so a SIGTERM is handled at once (bash runs traps only between commands).
  `trap '[ -n "\${pid:-}" ] && kill -TERM "$pid" 2>/dev/null' TERM INT`,
  "s0=${EPOCHREALTIME//[!0-9]/}",
  'timeout -s KILL "$limit" "$@" </dev/null & pid=$!',
  // `wait` returns early (>128) when a trap ran; wait again until the script has really ended.
  // (stderr of wait: bash would print "Killed" into the output when the timeout kills the script)
  'while :; do wait "$pid" 2>/dev/null; rc=$?; kill -0 "$pid" 2>/dev/null || break; done',
  "s1=${EPOCHREALTIME//[!0-9]/}",
  // (`read` fails at a last line without a newline, yet sets t: its status is not the test)
  't=""; { read -r t; } 2>/dev/null <"$start"',
  "if [[ $t =~ ^[0-9]+$ ]] && ((t >= s0 && t <= s0 + 2000000)); then s0=$t; fi",
  'report "$(( (s1 - s0 + 500) / 1000 ))" "$compile"',
  'exit "$rc"',
].join("\n");
// biome-ignore-end lint/suspicious/noTemplateCurlyInString: bash parameter expansions, not JS

/** The kubelet's default terminationMessagePath (the pod spec leaves it so). */
export const TERMINATION_LOG = "/dev/termination-log";

/** Where an interpreter writes the moment it starts the user's code (see RUNNER_SCRIPT). */
export const START_FILE = "/tmp/.cronscale-start";

/**
 * Python's entry: note the start, then run the script file as `__main__` (own globals, its
 * `__file__`, `sys.argv[0]` its path). A traceback shows one extra frame (`<string>`) above the
 * script's own.
 */
export const PYTHON_STARTER = [
  "import sys, time",
  `open(${JSON.stringify(START_FILE)}, "w").write(str(time.time_ns() // 1000) + "\\n")`,
  "p = sys.argv[1]; sys.argv = sys.argv[1:]",
  'exec(compile(open(p, "rb").read(), p, "exec"), {"__name__": "__main__", "__file__": p, "__builtins__": __builtins__})',
].join("\n");

/** Bun's preload (a file next to the script): notes the start, as PYTHON_STARTER does. */
export const BUN_STARTER_FILE = "cronscale-start.ts";
export const BUN_STARTER = [
  'import { writeFileSync } from "node:fs";',
  `writeFileSync(${JSON.stringify(START_FILE)}, \`\${Date.now()}000\\n\`);`,
  "",
].join("\n");

/** The container command: the runner around `argv`, after an optional timed `build` step. */
export function runner(timeoutSeconds: number, build: string, argv: string[]): string[] {
  return [
    "bash",
    "-c",
    RUNNER_SCRIPT,
    "cronscale-runner",
    TERMINATION_LOG,
    START_FILE,
    String(timeoutSeconds),
    build,
    ...argv,
  ];
}

/** Runtimes by language. */
export const LANGUAGE_RUNTIMES: Record<TaskLanguage, LanguageRuntime> = {
  Bash: {
    file: "script.sh",
    command: (t) => runner(t, "", ["bash", `${SCRIPT_DIR}/script.sh`]),
    env: [],
    extraStartupSeconds: 0,
  },
  Python: {
    file: "script.py",
    // -u: unbuffered, so output written just before a kill or a crash is not lost.
    command: (t) => runner(t, "", ["python3", "-u", "-c", PYTHON_STARTER, `${SCRIPT_DIR}/script.py`]),
    env: [
      { name: "PYTHONDONTWRITEBYTECODE", value: "1" },
      { name: "PYTHONUNBUFFERED", value: "1" },
    ],
    extraStartupSeconds: 0,
  },
  Go: {
    file: "main.go",
    // Compile first (start-up, covered by the start-up allowance, timed apart and not billed),
    // then time only the program.
    command: (t) =>
      runner(
        t,
        `mkdir -p "$GOCACHE" && { [ ! -d ${GO_CACHE_SEED} ] || cp -r ${GO_CACHE_SEED}/. "$GOCACHE"/; } && ` +
          `go build -o ${WORK_DIR}/task ${SCRIPT_DIR}/main.go`,
        [`${WORK_DIR}/task`],
      ),
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
    // The preload notes the start once Bun is up, right before the script's module runs.
    command: (t) =>
      runner(t, "", [
        "bun",
        "run",
        "--preload",
        `${SCRIPT_DIR}/${BUN_STARTER_FILE}`,
        `${SCRIPT_DIR}/script.ts`,
      ]),
    extraFiles: { [BUN_STARTER_FILE]: BUN_STARTER },
    env: [
      { name: "BUN_RUNTIME_TRANSPILER_CACHE_PATH", value: "0" },
      { name: "BUN_INSTALL_CACHE_DIR", value: `${WORK_DIR}/.bun-cache` },
      { name: "DO_NOT_TRACK", value: "1" },
    ],
    extraStartupSeconds: 0,
  },
};
