import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { BACKUP_PRELUDE, CANCEL_SCRIPT } from "./runner.ts";

// The cancel protocol of the backup runner, run for real with bash and real processes: the
// backup's shell (BACKUP_PRELUDE and its steps) and CANCEL_SCRIPT, as the runner execs them in the
// database pod, here on this machine with a temporary directory for /tmp/pgbackrest.

const run = promisify(execFile);
const dirs: string[] = [];
const procs: ChildProcess[] = [];

afterEach(() => {
  for (const p of procs.splice(0)) p.kill("SIGKILL");
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function prefix(): string {
  const d = mkdtempSync(join(tmpdir(), "bkcancel-"));
  dirs.push(d);
  return join(d, "run-test-pod");
}

/** Starts the backup's shell with `steps` (bash) after the prelude; resolves its exit code. */
function backup(r: string, steps: string): { exited: Promise<number | null> } {
  const p = spawn("bash", ["-c", `set -u; r=${r}\n${BACKUP_PRELUDE}\n${steps}`], { stdio: "ignore" });
  procs.push(p);
  return { exited: new Promise((res) => p.on("exit", (code, sig) => res(code ?? (sig ? 128 : null)))) };
}

function cancel(r: string, wait = 1) {
  return run("bash", ["-c", CANCEL_SCRIPT, "cancel", r], {
    env: { ...process.env, CANCEL_WAIT: String(wait) },
  });
}

async function until(f: () => boolean) {
  for (let i = 0; i < 100 && !f(); i++) await new Promise((res) => setTimeout(res, 50));
  expect(f()).toBe(true);
}

/** Whether `pid` runs (a zombie, dead but not reaped by whoever inherited it, does not). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

describe("cancelling a backup in the database pod", () => {
  it("SIGTERM ends the running step and its children; later steps never start", async () => {
    const r = prefix();
    const done = `${r}.second-step`;
    // A step with a child of its own, as pgBackRest's main process has backup:local processes.
    const b = backup(
      r,
      `step bash -c 'sleep 100 & echo $! > ${r}.grandchild; wait' || exit $?; step touch ${done}`,
    );
    await until(() => existsSync(`${r}.grandchild`));
    const grandchild = Number(readFileSync(`${r}.grandchild`, "utf8"));
    const out = await cancel(r);
    expect(out.stdout).toMatch(/backup stopped \d+ ms after SIGTERM \(last signal SIGTERM\)/);
    expect(await b.exited).toBe(143);
    expect(alive(grandchild)).toBe(false);
    expect(existsSync(done)).toBe(false);
    expect(existsSync(`${r}.pid`)).toBe(false);
    expect(readFileSync(join(r, "..", "log", "cancel.log"), "utf8")).toContain("backup stopped");
  });

  it("a step that ignores SIGTERM gets SIGKILL after CANCEL_WAIT seconds", async () => {
    const r = prefix();
    const b = backup(r, `step bash -c 'trap "" TERM; echo > ${r}.started; while :; do sleep 0.1; done'`);
    await until(() => existsSync(`${r}.started`));
    const t0 = Date.now();
    const out = await cancel(r, 1);
    expect(out.stdout).toMatch(/last signal SIGKILL/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(await b.exited).not.toBe(0);
  });

  it("cancelled before the backup's shell starts: no step runs", async () => {
    const r = prefix();
    const out = await cancel(r);
    expect(out.stdout).toContain("no backup running");
    const b = backup(r, `step touch ${r}.ran`);
    expect(await b.exited).toBe(143);
    expect(existsSync(`${r}.ran`)).toBe(false);
  });

  it("processes outside the backup's shell are left alone", async () => {
    const r = prefix();
    const other = spawn("sleep", ["100"], { stdio: "ignore" });
    procs.push(other);
    const b = backup(r, `step bash -c 'echo > ${r}.started; sleep 100'`);
    await until(() => existsSync(`${r}.started`));
    await cancel(r);
    expect(await b.exited).toBe(143);
    expect(alive(other.pid ?? 0)).toBe(true);
  });
});
