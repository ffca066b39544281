import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRunnerReport } from "./billing.ts";
import { PYTHON_STARTER, RUNNER_SCRIPT, START_FILE } from "./runtimes.ts";

// The runner as the pod runs it, in the host's bash: exit status, output and the report.

let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cronscale-runner-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(timeout: number, build: string, argv: string[]) {
  const report = join(dir, `report-${Math.random()}`);
  const r = await new Promise<{ code: number; out: string }>((resolve) => {
    execFile(
      "bash",
      ["-c", RUNNER_SCRIPT, "cronscale-runner", report, `${report}.start`, String(timeout), build, ...argv],
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, out: stdout + stderr }),
    );
  });
  const text = await readFile(report, "utf8").catch(() => "");
  return { ...r, report: parseRunnerReport(text) };
}

describe("runner", () => {
  it("times the script in milliseconds and keeps its exit status and output", async () => {
    const r = await run(10, "", ["bash", "-c", "echo hi; sleep 0.4; exit 3"]);
    expect(r.code).toBe(3);
    expect(r.out).toBe("hi\n");
    expect(r.report?.compileMs).toBeUndefined();
    expect(r.report?.runMs).toBeGreaterThanOrEqual(400);
    expect(r.report?.runMs).toBeLessThan(900);
  });

  it("times a build step apart from the script, and reports no run when the build fails", async () => {
    const ok = await run(10, "sleep 0.3", ["sleep", "0.1"]);
    expect(ok.code).toBe(0);
    expect(ok.report?.compileMs).toBeGreaterThanOrEqual(300);
    expect(ok.report?.runMs).toBeGreaterThanOrEqual(100);
    expect(ok.report?.runMs).toBeLessThan(300);
    const bad = await run(10, "echo syntax error >&2; exit 2", ["sleep", "5"]);
    expect(bad.code).toBe(2);
    expect(bad.report).toMatchObject({ runMs: undefined });
  });

  it("times from the start the interpreter reports, when it is within 2 s of the runner's", async () => {
    // The "interpreter" spends 0.5 s starting up, then reports its start and runs 0.3 s.
    const startFile = (r: string) => `${r}.start`;
    const report = join(dir, "report-interp");
    const code = await new Promise<number>((resolve) =>
      execFile(
        "bash",
        [
          "-c",
          RUNNER_SCRIPT,
          "cronscale-runner",
          report,
          startFile(report),
          "10",
          "",
          "bash",
          "-c",
          // printf without a newline, as a plain write() leaves it.
          `sleep 0.5; t=\${EPOCHREALTIME//[!0-9]/}; printf %s $t > ${startFile(report)}; sleep 0.3`,
        ],
        (err) => resolve(err ? Number(err.code) : 0),
      ),
    );
    expect(code).toBe(0);
    const r = parseRunnerReport(await readFile(report, "utf8"));
    expect(r?.runMs).toBeGreaterThanOrEqual(300);
    expect(r?.runMs).toBeLessThan(500);
  });

  it("runs Python scripts as __main__ with their own path and arguments", async () => {
    const script = join(dir, "script.py");
    await writeFile(script, 'import sys\nprint(__name__, __file__ == sys.argv[0], "time" in globals())\n');
    const starter = PYTHON_STARTER.replace(START_FILE, join(dir, "py.start"));
    const r = await run(10, "", ["python3", "-u", "-c", starter, script]);
    expect(r.out).toBe("__main__ True False\n");
    expect((await readFile(join(dir, "py.start"), "utf8")).trim()).toMatch(/^\d{16}$/);
  });

  it("kills the script at the timeout with 137, silently", async () => {
    const r = await run(1, "", ["sleep", "5"]);
    expect(r.code).toBe(137);
    expect(r.out).toBe("");
    expect(r.report?.runMs).toBeGreaterThanOrEqual(1000);
    expect(r.report?.runMs).toBeLessThan(1500);
  });
});
